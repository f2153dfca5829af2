/** Paged listings: the X-Total-Count header and an RFC 8288 Link header (first/prev/next/last). */

export interface Page {
  number: number;
  size: number;
}

/** Headers for page `page` of `total` items listed at publicUrl + path with the request's query string. */
export function pageHeaders(total: number, page: Page, publicUrl: string, path: string, rawQuery: string): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total) };
  const last = Math.max(1, Math.ceil(total / page.size));
  if (last <= 1) return headers;
  const link = (number: number, rel: string) => {
    const params = new URLSearchParams(rawQuery);
    params.set('page', String(number));
    params.set('perPage', String(page.size));
    return `<${publicUrl}${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page.number > 1) links.push(link(Math.min(page.number - 1, last), 'prev'));
  if (page.number < last) links.push(link(page.number + 1, 'next'));
  links.push(link(last, 'last'));
  headers.Link = links.join(', ');
  return headers;
}

/** The page a request asks for: `page` (default 1) at `perPage` (default 30) items. */
export function requestedPage(params: { page?: number; perPage?: number }): Page {
  return { number: params.page ?? 1, size: params.perPage ?? 30 };
}

/** The requested page of `all`, with the headers that describe it. */
export function paginate<T>(
  all: T[],
  params: { page?: number; perPage?: number },
  publicUrl: string,
  path: string,
  rawQuery: string,
): { items: T[]; headers: Record<string, string> } {
  const page = requestedPage(params);
  return { items: all.slice((page.number - 1) * page.size, page.number * page.size), headers: pageHeaders(all.length, page, publicUrl, path, rawQuery) };
}
