/**
 * Code navigation in the file view: a click on an identifier lists its definitions and references in the side
 * panel (each line once, however many matches it holds; the name in the URL's `sym=`); resting the pointer on one
 * shows its definitions in a card beside it (POST /api/find_definitions, asked once per name and page).
 */
import { postJson, type SymbolMatches } from './api.js';
import { h } from './dom.js';
import { localPath, replaceSearchParams } from './links.js';

/** How long the pointer rests on an identifier before its card shows. */
const HOVER_MS = 350;
const CARD_DEFINITIONS = 3;

/** Clicks and hovers over `code` lead to `panel` and a hover card, for the symbols of `repo` at `branch`. */
export function attachSymbols(code: HTMLElement, panel: HTMLElement, repo: string, branch: string): void {
  const definitions = new Map<string, Promise<SymbolMatches>>();
  const definitionsOf = (word: string) => {
    let found = definitions.get(word);
    if (!found) {
      found = postJson<SymbolMatches>('/api/find_definitions', { symbolName: word, repoName: repo, revisionName: branch });
      definitions.set(word, found);
    }
    return found;
  };
  const open = (word: string) =>
    showPanel(panel, word, definitionsOf(word), postJson<SymbolMatches>('/api/find_references', { symbolName: word, repoName: repo, revisionName: branch }));
  code.addEventListener('click', (event) => {
    if ((event.target as Element).closest('a')) return;
    const word = identifierAt(event);
    if (!word) return;
    hideCard();
    // The name is kept in the URL (`sym=`), so that a reload or a shared link opens the same panel.
    replaceSearchParams((params) => params.set('sym', word));
    void open(word);
  });
  const named = new URLSearchParams(location.search).get('sym');
  if (named && /^[A-Za-z_]\w*$/.test(named)) void open(named);

  let timer: ReturnType<typeof setTimeout> | undefined;
  let hovered: string | null = null;
  code.addEventListener('mousemove', (event) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const word = identifierAt(event);
      if (word === hovered) return;
      hovered = word;
      if (!word) return hideCard();
      void definitionsOf(word).then((found) => {
        if (hovered === word) showCard(word, found, event.clientX, event.clientY);
      });
    }, HOVER_MS);
  });
  code.addEventListener('mouseleave', (event) => {
    clearTimeout(timer);
    hovered = null;
    if (!(event.relatedTarget instanceof Element && event.relatedTarget.closest('#hover-card'))) hideCard();
  });
}

async function showPanel(panel: HTMLElement, word: string, definitions: Promise<SymbolMatches>, references: Promise<SymbolMatches>): Promise<void> {
  const section = (title: string, found: SymbolMatches) =>
    h('section', {}, h('h3', {}, `${title} (${found.stats.matchCount})`), h('ul', {}, ...lineItems(found)));
  panel.replaceChildren(h('h2', {}, word), section('Definitions', await definitions), section('References', await references));
  panel.hidden = false;
}

/** One item per line holding matches, linking to it, with its text. */
function lineItems(found: SymbolMatches, limit = Infinity): HTMLElement[] {
  const items: HTMLElement[] = [];
  for (const file of found.files) {
    const seen = new Set<number>();
    for (const match of file.matches) {
      const line = match.range.start.lineNumber;
      if (seen.has(line) || items.length >= limit) continue;
      seen.add(line);
      items.push(h('li', {}, h('a', { href: `${localPath(file.webUrl)}#L${line}` }, `${file.fileName}:${line}`), h('code', {}, match.lineContent.trim())));
    }
  }
  return items;
}

function showCard(word: string, found: SymbolMatches, x: number, y: number): void {
  hideCard();
  const count = found.stats.matchCount;
  const card = h(
    'div',
    { class: 'hover-card', id: 'hover-card', role: 'tooltip' },
    h('strong', {}, word),
    ` — ${count === 0 ? 'no definition found' : `${count} ${count === 1 ? 'definition' : 'definitions'}`}`,
    count > 0 ? h('ul', {}, ...lineItems(found, CARD_DEFINITIONS)) : null,
  );
  card.addEventListener('mouseleave', hideCard);
  document.body.append(card);
  // Beside the pointer, within the window.
  const { width, height } = card.getBoundingClientRect();
  card.style.left = `${Math.max(8, Math.min(x + 12, innerWidth - width - 8))}px`;
  card.style.top = `${y + 16 + height < innerHeight ? y + 16 : Math.max(8, y - height - 8)}px`;
}

function hideCard(): void {
  document.getElementById('hover-card')?.remove();
}

function identifierAt(event: MouseEvent): string | null {
  const position = document.caretRangeFromPoint?.(event.clientX, event.clientY);
  const text = position?.startContainer.textContent;
  if (!position || !text) return null;
  let start = position.startOffset;
  let end = position.startOffset;
  while (start > 0 && /\w/.test(text[start - 1]!)) start--;
  while (end < text.length && /\w/.test(text[end]!)) end++;
  const word = text.slice(start, end);
  return /^[A-Za-z_]\w*$/.test(word) ? word : null;
}
