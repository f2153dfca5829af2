/**
 * Go to file: a dialog (`t` in a repository's views, or the crumbs' button) finding the repository's files whose
 * path holds the typed characters in order, by a `type:file` search of the repository's paths; the closest first
 * (the characters in the file's name, then in fewest, longest runs). Arrows choose, Enter opens, Escape closes.
 */
import { postJson, type SearchResponse } from './api.js';
import { escapeRegExp, queryValue } from './query-text.js';
import { h } from './dom.js';
import { blobUrl, openInApp, replaceSearchParams } from './links.js';

const SHOWN = 20;

/** How far `path` is from `typed` (lower is closer), or undefined when its characters are not in it in order. */
export function fuzzyDistance(path: string, typed: string): number | undefined {
  const haystack = path.toLowerCase();
  const needle = typed.toLowerCase();
  const nameStart = haystack.lastIndexOf('/') + 1;
  let at = -1;
  let runs = 0;
  let first = -1;
  for (const char of needle) {
    const next = haystack.indexOf(char, at + 1);
    if (next === -1) return undefined;
    if (next !== at + 1) runs++;
    if (first === -1) first = next;
    at = next;
  }
  // Inside the file's name first, then fewer runs, then shorter paths.
  return (first >= nameStart ? 0 : 1_000_000) + runs * 1000 + path.length;
}

/** Opens the finder on `repo` at `branch`, with `typed` in it; what is typed stays in the page's URL (`find=`) while it is open. */
export function openFileFinder(repo: string, branch: string, typed = ''): void {
  document.getElementById('file-finder')?.remove();
  const input = h('input', { type: 'search', id: 'file-finder-input', placeholder: 'Go to file', 'aria-label': 'Go to file', autocomplete: 'off' });
  input.value = typed;
  const list = h('ul', { class: 'finder-results', id: 'file-finder-results', role: 'listbox' });
  const status = h('p', { class: 'summary', 'aria-live': 'polite' });
  const dialog = h('dialog', { class: 'finder', id: 'file-finder', 'aria-label': `Go to a file of ${repo}` }, input, status, list);
  dialog.addEventListener('close', () => {
    dialog.remove();
    replaceSearchParams((params) => params.delete('find'));
  });
  document.body.append(dialog);
  dialog.showModal();

  let asked = 0;
  let active = 0;
  let paths: string[] = [];
  const show = () => {
    list.replaceChildren(
      ...paths.map((path, index) =>
        h(
          'li',
          { role: 'option', id: `finder-${index}`, 'aria-selected': String(index === active) },
          h('a', { href: blobUrl(repo, branch, path), class: 'finder-path' }, path),
        ),
      ),
    );
    input.setAttribute('aria-activedescendant', paths.length > 0 ? `finder-${active}` : '');
    list.children[active]?.scrollIntoView({ block: 'nearest' });
  };
  const find = async () => {
    const typed = input.value.replace(/\s+/g, '');
    const question = ++asked;
    if (typed === '') {
      paths = [];
      status.textContent = '';
      return show();
    }
    const scope = [`repo:${queryValue(`^${escapeRegExp(repo)}$`)}`, branch === 'HEAD' ? '' : `rev:${queryValue(`^${escapeRegExp(branch)}$`)}`]
      .filter(Boolean)
      .join(' ');
    const query = `${scope} type:file file:${[...typed].map(escapeRegExp).join('.*')}`;
    const response = await postJson<SearchResponse>('/api/search', { query, matches: 500 });
    if (question !== asked) return; // a later question is on its way
    const ranked = response.files
      .map((file) => ({ path: file.fileName.text, distance: fuzzyDistance(file.fileName.text, typed) }))
      .filter((found) => found.distance !== undefined)
      .sort((a, b) => a.distance! - b.distance! || a.path.localeCompare(b.path));
    paths = ranked.slice(0, SHOWN).map((found) => found.path);
    active = 0;
    status.textContent = paths.length === 0 ? 'No file matches.' : ranked.length > SHOWN ? `The closest ${SHOWN} of ${ranked.length}` : '';
    show();
  };
  const findNow = () => void find().catch((error: Error) => (status.textContent = `The search failed: ${error.message}`));
  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    replaceSearchParams((params) => params.set('find', input.value));
    clearTimeout(timer);
    timer = setTimeout(findNow, 80);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      active = Math.max(0, Math.min(paths.length - 1, active + (event.key === 'ArrowDown' ? 1 : -1)));
      show();
    } else if (event.key === 'Escape') {
      // A search input would clear itself first: Escape closes at once.
      event.preventDefault();
      dialog.close();
    } else if (event.key === 'Enter') {
      const chosen = paths[active];
      if (chosen === undefined) return;
      event.preventDefault();
      dialog.close();
      openInApp(blobUrl(repo, branch, chosen));
    }
  });
  list.addEventListener('click', () => dialog.close());
  replaceSearchParams((params) => params.set('find', typed));
  if (typed !== '') findNow();
}
