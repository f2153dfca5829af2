/**
 * The filter panel of a search's results: the files' repositories, languages and top directories, each with how
 * many of the files it holds. Choosing values shows only the files that have one of them in each facet chosen in;
 * the choice is in the page's URL (`repo=`, `lang=`, `dir=`, repeated), so that a shared link shows the same.
 */
import type { FileResult } from './api.js';
import { h } from './dom.js';
import { replaceSearchParams } from './links.js';

const FACETS = [
  { key: 'repo', title: 'Repository', of: (file: FileResult) => file.repository },
  { key: 'lang', title: 'Language', of: (file: FileResult) => file.language || 'Other' },
  { key: 'dir', title: 'Directory', of: (file: FileResult) => (file.fileName.text.includes('/') ? `${file.fileName.text.split('/')[0]}/` : '/') },
] as const;

type FacetKey = (typeof FACETS)[number]['key'];

/** The panel for `files`, each shown in `items` at the same index; filters them as the URL's choice says, and as the user changes it. */
export function facetPanel(files: FileResult[], items: HTMLElement[], onFilter: (shown: number) => void): HTMLElement {
  const chosen = new Map<FacetKey, Set<string>>(FACETS.map(({ key }) => [key, new Set(new URLSearchParams(location.search).getAll(key))]));
  const apply = () => {
    let shown = 0;
    files.forEach((file, index) => {
      const visible = FACETS.every(({ key, of }) => chosen.get(key)!.size === 0 || chosen.get(key)!.has(of(file)));
      items[index]!.hidden = !visible;
      if (visible) shown++;
    });
    onFilter(shown);
  };
  const toggle = (key: FacetKey, value: string, button: HTMLButtonElement) => {
    const values = chosen.get(key)!;
    if (values.has(value)) values.delete(value);
    else values.add(value);
    button.setAttribute('aria-pressed', String(values.has(value)));
    replaceSearchParams((params) => {
      params.delete(key);
      for (const chosenValue of values) params.append(key, chosenValue);
    });
    apply();
  };
  const groups = FACETS.map(({ key, title, of }) => {
    const counts = new Map<string, number>();
    for (const file of files) counts.set(of(file), (counts.get(of(file)) ?? 0) + 1);
    const entries = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return h(
      'section',
      { class: 'facet', 'data-facet': key },
      h('h2', {}, title),
      h(
        'ul',
        {},
        ...entries.map(([value, count]) => {
          const button = h(
            'button',
            { type: 'button', class: 'facet-value', 'aria-pressed': String(chosen.get(key)!.has(value)), 'data-value': value },
            h('span', { class: 'facet-name' }, value),
            h('span', { class: 'count' }, String(count)),
          );
          button.addEventListener('click', () => toggle(key, value, button));
          return h('li', {}, button);
        }),
      ),
    );
  });
  apply();
  return h('aside', { class: 'facets', id: 'facets', 'aria-label': 'Filter the results' }, ...groups);
}
