/**
 * A file's lines with their numbers and `#L10` / `#L10-L20` anchors. A long file renders only the lines on screen
 * (and a screenful either side) in a box as tall as all of them, so that any size opens at once; a short one
 * renders every line, so that the browser's find sees them all. The matches of the search that led here
 * (`?hl=start-end,…` byte ranges) are marked with the CSS Custom Highlight API over the lines rendered.
 */
import { h } from './dom.js';
import { highlightLines } from './highlight.js';

/** Files up to this many lines render whole. */
const WHOLE_UP_TO_LINES = 3000;
/** Files over this many lines are shown as plain text: highlighting one would hold the page for seconds. */
const HIGHLIGHT_UP_TO_LINES = 20_000;
/** The height of a line, as the stylesheet sets it (`.line`). */
const LINE_PX = 20;
/** Lines rendered beyond the screen's, each side. */
const OVERSCAN_LINES = 60;

/** A match to mark: line (1-based) and UTF-16 columns within it, [from, to). */
interface LineMatch {
  line: number;
  from: number;
  to: number;
}

let shown: CodeView | undefined;

export class CodeView {
  readonly element: HTMLElement;
  private readonly lines: string[];
  private readonly window: HTMLElement;
  private readonly matches: LineMatch[];
  private first = 0;
  private last = -1;
  private selected: [number, number] | undefined;
  private readonly onScroll = () => this.render();
  /** A cell shown before each line's code (its blame), when set. */
  private gutter: ((line: number) => HTMLElement) | undefined;
  /** Whether the file is too long to highlight, and is shown as plain text. */
  readonly plain: boolean;

  constructor(source: string, language: string, highlightSpec: string | null) {
    this.plain = countNewlines(source) >= HIGHLIGHT_UP_TO_LINES;
    this.lines = highlightLines(source, this.plain ? '' : language);
    this.matches = highlightSpec ? lineMatches(source, highlightSpec) : [];
    this.window = h('div', { class: 'code-lines' });
    this.element = h('div', { class: 'code-view', id: 'code' }, this.window);
    if (this.lines.length > WHOLE_UP_TO_LINES) {
      this.element.classList.add('windowed');
      this.element.style.height = `${this.lines.length * LINE_PX}px`;
    }
    this.element.addEventListener('click', (event) => {
      const link = (event.target as Element).closest('a.ln');
      if (!link || !(event as MouseEvent).shiftKey) return;
      // Shift-click extends the selection: #L10-L20.
      event.preventDefault();
      const first = /^#L(\d+)/.exec(location.hash)?.[1];
      const line = link.getAttribute('data-line')!;
      location.hash = first ? `#L${Math.min(+first, +line)}-L${Math.max(+first, +line)}` : `#L${line}`;
    });
  }

  /** Renders the view, which is in the page now, and follows the page's scrolling. */
  start(): void {
    window.addEventListener('scroll', this.onScroll, { passive: true });
    window.addEventListener('resize', this.onScroll);
    this.render(true);
  }

  detach(): void {
    window.removeEventListener('scroll', this.onScroll);
    window.removeEventListener('resize', this.onScroll);
  }

  /** Selects lines `first`–`last` (undefined: none) and scrolls the first to the middle of the screen. */
  select(range: [number, number] | undefined): void {
    this.selected = range;
    for (const row of this.window.children) row.classList.toggle('selected', this.isSelected(Number(row.id.slice(1))));
    if (!range) return;
    if (this.element.classList.contains('windowed')) {
      const top = this.element.getBoundingClientRect().top + window.scrollY;
      window.scrollTo({ top: top + (range[0] - 1) * LINE_PX - window.innerHeight / 2 });
      this.render();
    } else {
      document.getElementById(`L${range[0]}`)?.scrollIntoView({ block: 'center' });
    }
  }

  /** Shows `cell(line)` before each line's code from now on. */
  setGutter(cell: (line: number) => HTMLElement): void {
    this.gutter = cell;
    this.render(true);
  }

  private isSelected(line: number): boolean {
    return this.selected !== undefined && line >= this.selected[0] && line <= this.selected[1];
  }

  /** The lines on screen (all of a short file), rendered unless they already are. */
  private render(force = false): void {
    if (!this.element.isConnected) return this.detach();
    let first = 0;
    let last = this.lines.length - 1;
    if (this.element.classList.contains('windowed')) {
      const top = this.element.getBoundingClientRect().top;
      first = Math.max(0, Math.floor(-top / LINE_PX) - OVERSCAN_LINES);
      last = Math.min(this.lines.length - 1, Math.ceil((window.innerHeight - top) / LINE_PX) + OVERSCAN_LINES);
    }
    if (!force && first === this.first && last === this.last) return;
    this.first = first;
    this.last = last;
    const rows: HTMLElement[] = [];
    for (let index = first; index <= last; index++) rows.push(this.line(index + 1));
    this.window.replaceChildren(...rows);
    this.window.style.transform = `translateY(${first * LINE_PX}px)`;
    this.markMatches();
  }

  private line(number: number): HTMLElement {
    const code = h('span', { class: 'code' });
    code.innerHTML = this.lines[number - 1]!; // highlight.js output: the source's text escaped, its own spans only
    return h(
      'div',
      { class: this.isSelected(number) ? 'line selected' : 'line', id: `L${number}` },
      h('a', { class: 'ln', href: `#L${number}`, 'data-line': String(number) }, String(number)),
      this.gutter?.(number),
      code,
    );
  }

  /** The matches on the rendered lines, highlighted over their text nodes (no DOM changes). */
  private markMatches(): void {
    if (this.matches.length === 0 || typeof Highlight === 'undefined') return;
    const ranges: Range[] = [];
    for (const match of this.matches) {
      if (match.line - 1 < this.first || match.line - 1 > this.last) continue;
      const range = domRange(match);
      if (range) ranges.push(range);
    }
    CSS.highlights.set('search-match', new Highlight(...ranges));
  }
}

/** Shows `view`, which is in the page now, in place of the last one, the lines of the #L anchor selected. */
export function attachCodeView(view: CodeView): void {
  shown?.detach();
  shown = view;
  view.start();
  showLines();
}

/** Selects the lines of the #L anchor in the file shown, if any. */
export function showLines(): void {
  const found = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
  shown?.select(found ? [Number(found[1]), Number(found[2] ?? found[1])] : undefined);
}

/** `?hl=` byte ranges of `source` as lines and columns; a range over several lines marks its first line's part. One pass over the source, the ranges in order. */
function lineMatches(source: string, spec: string): LineMatch[] {
  const ranges = spec
    .split(',')
    .map((part) => part.split('-').map(Number) as [number, number])
    .filter(([start, end]) => Number.isInteger(start) && Number.isInteger(end) && start >= 0 && end >= start)
    .sort((a, b) => a[0] - b[0]);
  const bytes = new TextEncoder().encode(source);
  const decoder = new TextDecoder();
  const matches: LineMatch[] = [];
  let byte = 0; // where `char` is, in bytes
  let char = 0;
  let line = 1; // the line `char` is on
  let lineStart = 0;
  for (const [start, end] of ranges) {
    if (start > bytes.length) break;
    const from = char + decoder.decode(bytes.subarray(byte, start)).length;
    for (let at = source.indexOf('\n', char); at !== -1 && at < from; at = source.indexOf('\n', at + 1)) {
      line++;
      lineStart = at + 1;
    }
    [byte, char] = [start, from];
    const to = from + decoder.decode(bytes.subarray(start, end)).length;
    const lineEnd = source.indexOf('\n', from);
    matches.push({ line, from: from - lineStart, to: Math.min(to, lineEnd === -1 ? source.length : lineEnd) - lineStart });
  }
  return matches;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** A DOM Range over the rendered line of `match`, across the highlighter's text nodes. */
function domRange({ line, from, to }: LineMatch): Range | null {
  const code = document.querySelector(`#L${line} .code`);
  if (!code) return null;
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let offset = 0;
  let started = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = node.textContent!.length;
    if (!started && from < offset + length) {
      range.setStart(node, from - offset);
      started = true;
    }
    if (started && to <= offset + length) {
      range.setEnd(node, to - offset);
      return range;
    }
    offset += length;
  }
  return null;
}
