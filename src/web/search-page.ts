/**
 * The search page: the results of a ranked /api/stream_search, each file shown in its place by rank as it
 * arrives (ranked-results.ts), beside a filter panel (facets.ts), each file with its first chunks (the
 * rest behind "show more"; a file collapses), matches marked, line numbers
 * linking into the file view; arrows and Enter move through them; a "load
 * more" when the result was cut.
 */
import { ApiFailure, postEvents, type Chunk, type FileResult } from './api.js';
import { clear, h } from './dom.js';
import { facetPanel } from './facets.js';
import { localPath } from './links.js';
import { RankedResults } from './ranked-results.js';

/** Chunks of a file shown at first (the best, bestChunks); the rest behind "show more", so one file with hundreds cannot fill the page. */
const PREVIEW_CHUNKS = 3;

const FIRST_PART_MARK = 'trawl:first-part';

/** Match ranges asked for first; "load more" asks for four times as many. */
export const FIRST_PAGE = 100;

export interface SearchInput {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  matches: number;
}

let running: AbortController | null = null;

/** Runs a search into `main`, replacing whatever was there; a newer search cancels an older one. */
export async function renderSearch(main: HTMLElement, input: SearchInput, onError: (error: unknown) => void): Promise<void> {
  running?.abort();
  const controller = new AbortController();
  running = controller;
  clear(main);
  if (input.query.trim() === '') return;
  const summary = h('p', { class: 'summary', id: 'summary', 'aria-live': 'polite' });
  const list = h('ol', { class: 'results', id: 'results' });
  const layout = h('div', { class: 'search-layout' }, list);
  main.append(summary, layout);
  const started = performance.now();
  // Until the answer comes: how long it has run, and a button that stops it (the daemon stops a search its client left).
  const elapsed = h('span', { class: 'elapsed', role: 'timer' });
  const stop = h('button', { type: 'button', class: 'link', id: 'stop' }, 'Stop');
  stop.addEventListener('click', () => {
    controller.abort();
    summary.replaceChildren('Stopped.');
  });
  const found = h('span', { class: 'found' });
  summary.replaceChildren(h('span', { class: 'progress', 'aria-hidden': 'true' }), 'Searching… ', elapsed, ' ', found, ' ', stop);
  const ticker = setInterval(() => (elapsed.textContent = `${((performance.now() - started) / 1000).toFixed(1)} s`), 100);
  try {
    const body = {
      query: input.query,
      matches: input.matches,
      contextLines: 1,
      isRegexEnabled: input.regex,
      isCaseSensitivityEnabled: input.caseSensitive,
      ranked: true,
    };
    // Each file in its place by rank as the parts arrive: the same search shows the same files in the same order.
    const results = new RankedResults(list, input.matches, fileItem);
    const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    // The filter panel counts the files shown so far, and the URL's filters apply to them as they come.
    const filtered = h('span', { id: 'filtered' });
    let facets: HTMLElement | undefined;
    const showFacets = () => {
      const { files, items } = results;
      const panel = facetPanel(files, items, (shown) => (filtered.textContent = shown < items.length ? ` — ${shown} shown by the filters` : ''));
      if (facets) facets.replaceWith(panel);
      else layout.prepend(panel);
      facets = panel;
    };
    // While parts come, the panel follows after the results are painted, at most once a frame; then once at the end.
    let streaming = true;
    let facetsPending = false;
    const followFacets = () => {
      if (facetsPending) return;
      facetsPending = true;
      requestAnimationFrame(() =>
        setTimeout(() => {
          facetsPending = false;
          if (streaming && !controller.signal.aborted) showFacets();
        }),
      );
    };
    let isSearchExhaustive = true;
    await postEvents('/api/stream_search', body, controller.signal, (event) => {
      if (event === '[DONE]') return;
      if (event.type === 'chunk') {
        // For bench/web.ts: when the first part came, before it is shown.
        if (performance.getEntriesByName(FIRST_PART_MARK).length === 0) performance.mark(FIRST_PART_MARK);
        results.add(event.files);
        found.textContent = `${count(results.size, 'file', 'files')} so far`;
        followFacets();
      } else if (event.type === 'final') isSearchExhaustive = event.isSearchExhaustive;
      else throw new ApiFailure(event.error.statusCode, event.error.errorCode, event.error.message);
    });
    streaming = false;
    if (results.size > 0) showFacets();
    const ms = Math.round(performance.now() - started);
    summary.replaceChildren(`${count(results.matchRanges, 'match', 'matches')} in ${count(results.size, 'file', 'files')} (${ms} ms)`, filtered);
    if (!isSearchExhaustive) {
      const more = h('button', { type: 'button', class: 'more', id: 'load-more' }, `Results were cut at ${input.matches} matches — load more`);
      more.addEventListener('click', () => void renderSearch(main, { ...input, matches: input.matches * 4 }, onError));
      summary.append(' ', more);
    }
    if (results.size === 0) summary.replaceChildren('No matches.');
  } catch (error) {
    if (controller.signal.aborted) return;
    summary.replaceChildren();
    onError(error);
  } finally {
    clearInterval(ticker);
  }
}

function fileItem(file: FileResult): HTMLElement {
  const href = localPath(file.webUrl);
  const name = h(
    'a',
    { class: 'file-name result-link', href },
    ...marked(
      file.fileName.text,
      file.fileName.matchRanges.map((r) => [r.start.column - 1, r.end.column - 1]),
    ),
  );
  const header = h(
    'div',
    { class: 'file-header' },
    name,
    h('span', { class: 'repo' }, file.repository),
    file.language ? h('span', { class: 'lang' }, file.language) : null,
    file.branches?.[0] && file.branches[0] !== 'HEAD' ? h('span', { class: 'branch' }, file.branches[0]) : null,
  );
  const preview = bestChunks(file.chunks, PREVIEW_CHUNKS);
  const chunks = h('div', { class: 'chunks' }, ...preview.map((chunk) => chunkView(chunk, href)));
  // The matches the preview leaves out (a chunk holds one or more).
  const rest = file.chunks.filter((chunk) => !preview.includes(chunk)).reduce((sum, chunk) => sum + chunk.matchRanges.length, 0);
  if (rest > 0) {
    const more = h('button', { type: 'button', class: 'link show-more' }, `Show ${rest} more ${rest === 1 ? 'match' : 'matches'} in this file`);
    more.addEventListener('click', () => chunks.replaceChildren(...file.chunks.map((chunk) => chunkView(chunk, href))));
    chunks.append(more);
  }
  const toggle = h('button', { type: 'button', class: 'collapse', 'aria-expanded': 'true', 'aria-label': `Collapse ${file.fileName.text}` }, '−');
  toggle.addEventListener('click', () => {
    const expanded = chunks.hidden;
    chunks.hidden = !expanded;
    toggle.setAttribute('aria-expanded', String(expanded));
    toggle.setAttribute('aria-label', `${expanded ? 'Collapse' : 'Expand'} ${file.fileName.text}`);
    toggle.textContent = expanded ? '−' : '+';
  });
  header.prepend(toggle);
  return h('li', { class: 'file' }, header, chunks);
}

/**
 * The `count` chunks that tell most, in line order: those on a symbol's definition first, then those with more
 * matches, then the earlier ones.
 */
function bestChunks(chunks: Chunk[], count: number): Chunk[] {
  if (chunks.length <= count) return chunks;
  const weight = (chunk: Chunk) => ((chunk.symbols?.length ?? 0) > 0 ? 1_000_000 : 0) + chunk.matchRanges.length;
  const best = chunks.map((chunk, index) => ({ chunk, index })).sort((a, b) => weight(b.chunk) - weight(a.chunk) || a.index - b.index);
  return best
    .slice(0, count)
    .sort((a, b) => a.index - b.index)
    .map(({ chunk }) => chunk);
}

/** A chunk's lines with their numbers (links to the file view at that line, with the matches to highlight). */
function chunkView(chunk: Chunk, href: string): HTMLElement {
  const lines = chunk.content.replace(/\n$/, '').split('\n');
  const highlight = chunk.matchRanges.map((range) => `${range.start.byteOffset}-${range.end.byteOffset}`).join(',');
  const table = h('table', { class: 'chunk' });
  lines.forEach((text, i) => {
    const lineNumber = chunk.contentStart.lineNumber + i;
    const columns: [number, number][] = [];
    for (const range of chunk.matchRanges) {
      if (range.start.lineNumber > lineNumber || range.end.lineNumber < lineNumber) continue;
      const from = range.start.lineNumber === lineNumber ? range.start.column - 1 : 0;
      const to = range.end.lineNumber === lineNumber ? range.end.column - 1 : [...text].length;
      columns.push([from, to]);
    }
    const link = h('a', { class: columns.length > 0 ? 'ln result-link' : 'ln', href: `${href}?hl=${highlight}#L${lineNumber}` }, String(lineNumber));
    table.append(h('tr', {}, h('td', { class: 'num' }, link), h('td', { class: 'code' }, ...marked(text, columns))));
  });
  return table;
}

/** Text with the code-point column ranges wrapped in <mark>. */
function marked(text: string, columns: [number, number][]): (string | HTMLElement)[] {
  const points = [...text];
  const parts: (string | HTMLElement)[] = [];
  let at = 0;
  for (const [from, to] of [...columns].sort((a, b) => a[0] - b[0])) {
    if (from < at) continue;
    parts.push(points.slice(at, from).join(''), h('mark', {}, points.slice(from, to).join('')));
    at = to;
  }
  parts.push(points.slice(at).join(''));
  return parts;
}

/** Arrow keys move the selection through result links; Enter follows it. */
export function moveSelection(direction: 1 | -1): void {
  // The links on the page: not those of a collapsed file.
  const links = [...document.querySelectorAll<HTMLAnchorElement>('#results .result-link')].filter((link) => link.getClientRects().length > 0);
  if (links.length === 0) return;
  const current = links.indexOf(document.activeElement as HTMLAnchorElement);
  const next = links[Math.max(0, Math.min(links.length - 1, current === -1 ? 0 : current + direction))]!;
  next.focus();
  next.scrollIntoView({ block: 'nearest' });
}
