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
