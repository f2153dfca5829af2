/**
 * The query box: its text coloured by the query language's parts (filters, operators, negations, quoted phrases),
 * drawn under the box's transparent text; and its suggestions (a combobox): the filter prefixes as they are typed, then values for the one under
 * the caret — repositories (GET /api/repos), languages, paths (a type:file search) and symbols (a sym: search) —
 * and the last queries searched while the box is empty. Arrows choose, Enter takes the one chosen, Tab that or the
 * first, Escape closes.
 */
import { getJson, postJson, type RepositoryListing, type SearchResponse } from './api.js';
import { escapeRegExp, queryValue } from './query-text.js';
import { h } from './dom.js';

const HISTORY_KEY = 'trawl.queryHistory';
const HISTORY_SIZE = 20;
const SHOWN = 10;

const PREFIXES: Record<string, string> = {
  'repo:': 'repository name matches',
  'lang:': 'language',
  'file:': 'path matches',
  'sym:': 'symbol definitions',
  'rev:': 'a branch other than the default',
  'content:': 'content only',
  'case:': 'case-sensitive (yes/no/auto)',
  'type:': 'files or repositories only',
  'context:': 'a search context',
};

/** Linguist names offered after `lang:`: the languages code search meets most. */
const LANGUAGES = [
  'C',
  'C#',
  'C++',
  'CSS',
  'Dockerfile',
  'Go',
  'HTML',
  'Java',
  'JavaScript',
  'JSON',
  'Kotlin',
  'Makefile',
  'Markdown',
  'Perl',
  'PHP',
  'Python',
  'Ruby',
  'Rust',
  'Scala',
  'Shell',
  'SQL',
  'Swift',
  'TOML',
  'TSX',
  'TypeScript',
  'XML',
  'YAML',
];

interface Suggestion {
  /** What replaces the token under the caret. */
  text: string;
  label: string;
  detail?: string;
}

/** The queries searched last, newest first (this browser's). */
export function queryHistory(): string[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]');
    return Array.isArray(stored) ? stored.filter((entry): entry is string => typeof entry === 'string') : [];
  } catch {
    return [];
  }
}

export function rememberQuery(query: string): void {
  const kept = [query, ...queryHistory().filter((entry) => entry !== query)].slice(0, HISTORY_SIZE);
  localStorage.setItem(HISTORY_KEY, JSON.stringify(kept));
}

/** The token under the caret: where it starts, and its text up to the caret. */
function tokenAt(input: HTMLInputElement): { start: number; text: string } {
  const caret = input.selectionStart ?? input.value.length;
  const before = input.value.slice(0, caret);
  const start = before.search(/\S*$/);
  return { start, text: before.slice(start) };
}

/** The suggestions for `token` (the whole box when it is empty). */
async function suggestionsFor(token: string, whole: string): Promise<Suggestion[]> {
  if (whole.trim() === '') return queryHistory().map((query) => ({ text: query, label: query, detail: 'recent' }));
  const filter = /^(-?)(repo|lang|file|sym):(.*)$/.exec(token);
  if (!filter) {
    const word = token.replace(/^-/, '');
    if (!/^[a-z]+$/.test(word)) return [];
    return Object.entries(PREFIXES)
      .filter(([prefix]) => prefix.startsWith(word) && prefix !== word)
      .map(([prefix, detail]) => ({ text: `${token.startsWith('-') ? '-' : ''}${prefix}`, label: prefix, detail }));
  }
  const [, negation, kind, value] = filter as unknown as [string, string, string, string];
  const as = (name: string, text: string, detail?: string): Suggestion => ({ text: `${negation}${kind}:${queryValue(text)}`, label: name, detail });
  if (kind === 'lang') return LANGUAGES.filter((name) => name.toLowerCase().startsWith(value.toLowerCase())).map((name) => as(name, name));
  if (kind === 'repo') {
    const repos = await getJson<RepositoryListing[]>('/api/repos', { query: value, perPage: String(SHOWN) });
    return repos.map((repo) => as(repo.repoName, `^${escapeRegExp(repo.repoName)}$`));
  }
  if (value.length < 2) return [];
  if (kind === 'file') {
    const found = await postJson<SearchResponse>('/api/search', { query: `type:file file:${escapeRegExp(value)}`, matches: SHOWN });
    return [...new Set(found.files.map((file) => file.fileName.text))].map((path) => as(path, escapeRegExp(path), 'path'));
  }
  const found = await postJson<SearchResponse>('/api/search', { query: `sym:${escapeRegExp(value)}`, matches: 50 });
  const names = new Set(found.files.flatMap((file) => file.chunks.flatMap((chunk) => (chunk.symbols ?? []).map((symbol) => symbol.symbol))));
  return [...names].filter((name) => name.toLowerCase().includes(value.toLowerCase())).map((name) => as(name, `^${escapeRegExp(name)}$`, 'symbol'));
}

/** The query's text as parts to colour: filters, operators, negations and quoted phrases; the rest plain. */
export function queryParts(query: string): { text: string; kind?: 'filter' | 'operator' | 'negation' | 'phrase' }[] {
  const parts: { text: string; kind?: 'filter' | 'operator' | 'negation' | 'phrase' }[] = [];
  const pattern =
    /(?<negation>(?<=^|[\s(])-(?=\S))|(?<filter>(?<=^|[\s(-])[a-z]+:)|(?<phrase>"(?:[^"\\]|\\.)*"?)|(?<operator>(?<=^|\s)(?:or|and)(?=\s|$)|[()])/g;
  let at = 0;
  for (const match of query.matchAll(pattern)) {
    if (match.index > at) parts.push({ text: query.slice(at, match.index) });
    const kind = (Object.entries(match.groups!).find(([, value]) => value !== undefined)?.[0] ?? undefined) as 'filter' | 'operator' | 'negation' | 'phrase';
    parts.push({ text: match[0], kind });
    at = match.index + match[0].length;
  }
  if (at < query.length) parts.push({ text: query.slice(at) });
  return parts;
}

/** Colours `input`'s text and offers suggestions as it is typed in, in a list after it. Returns how code sets its text. */
export function attachQueryBox(input: HTMLInputElement): (query: string) => void {
  const colours = h('div', { class: 'query-colours', 'aria-hidden': 'true' });
  const wrap = h('div', { class: 'query-wrap' });
  input.replaceWith(wrap);
  wrap.append(colours, input);
  const paint = () => {
    colours.replaceChildren(...queryParts(input.value).map(({ text, kind }) => (kind ? h('span', { class: `q-${kind}` }, text) : text)));
    colours.scrollLeft = input.scrollLeft;
  };
  for (const event of ['input', 'scroll', 'keyup', 'select']) input.addEventListener(event, paint);
  const list = h('ul', { class: 'suggestions', id: 'suggestions', role: 'listbox', hidden: true });
  wrap.after(list);
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-controls', 'suggestions');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-autocomplete', 'list');
  let shown: Suggestion[] = [];
  let active = -1;
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const close = () => {
    shown = [];
    active = -1;
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  };
  const render = () => {
    list.replaceChildren(
      ...shown.map((suggestion, index) => {
        const item = h(
          'li',
          { role: 'option', id: `suggestion-${index}`, 'aria-selected': String(index === active) },
          h('span', { class: 'suggestion-label' }, suggestion.label),
          suggestion.detail ? h('span', { class: 'suggestion-detail' }, suggestion.detail) : null,
        );
        // mousedown, not click: the box keeps its focus.
        item.addEventListener('mousedown', (event) => {
          event.preventDefault();
          take(suggestion);
        });
        return item;
      }),
    );
    list.hidden = shown.length === 0;
    input.setAttribute('aria-expanded', String(shown.length > 0));
    if (active >= 0) input.setAttribute('aria-activedescendant', `suggestion-${active}`);
    else input.removeAttribute('aria-activedescendant');
  };
  const suggest = async () => {
    const question = ++asked;
    const token = tokenAt(input);
    const found = await suggestionsFor(token.text, input.value).catch(() => []);
    if (question !== asked) return; // a later question is on its way
    shown = found.slice(0, SHOWN);
    active = -1;
    render();
  };
  const take = (suggestion: Suggestion) => {
    if (input.value.trim() === '') {
      input.value = suggestion.text;
    } else {
      const { start, text } = tokenAt(input);
      const rest = input.value.slice(start + text.length);
      const spacer = suggestion.text.endsWith(':') || rest.startsWith(' ') ? '' : ' ';
      input.value = input.value.slice(0, start) + suggestion.text + spacer + rest;
      const caret = start + suggestion.text.length + spacer.length;
      input.setSelectionRange(caret, caret);
    }
    paint();
    close();
    if (suggestion.text.endsWith(':')) void suggest(); // its values next
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void suggest(), 100);
  });
  input.addEventListener('focus', () => input.value === '' && void suggest());
  input.addEventListener('blur', close);
  input.form?.addEventListener('submit', close);
  input.addEventListener('keydown', (event) => {
    if (list.hidden) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      event.stopPropagation(); // not the results' selection
      const step = event.key === 'ArrowDown' ? 1 : -1;
      active = active === -1 ? (step === 1 ? 0 : shown.length - 1) : (active + step + shown.length) % shown.length;
      render();
    } else if ((event.key === 'Enter' && active >= 0) || event.key === 'Tab') {
      // Tab takes the first when none is chosen, as a shell completes.
      event.preventDefault();
      take(shown[Math.max(active, 0)]!);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close();
    }
  });
  return (query) => {
    input.value = query;
    paint();
  };
}
