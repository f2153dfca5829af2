/**
 * The files of a ranked stream (docs/api.md, "Ranked streams") in a list as they arrive: each in its place by
 * rank, kept while fewer than `matches` ranges come before it, the last one cut to what is left, as /api/search
 * answers. A file once pushed out never comes back, so what is shown only ever moves down, never flickers.
 */
import { compareFiles, matchRangesOf, withinRanges } from '../api/ranked-files.js';
import type { FileResult } from './api.js';

interface Entry {
  file: FileResult;
  ranges: number;
  /** The ranges its item shows, and the item; -1 and null until it is first shown. */
  shown: number;
  item: HTMLElement | null;
}

export class RankedResults {
  private readonly entries: Entry[] = [];

  /** `render` makes a file's item: of the file as it came, or cut to fewer ranges. */
  constructor(
    private readonly list: HTMLElement,
    private readonly matches: number,
    private readonly render: (file: FileResult) => HTMLElement,
  ) {}

  /** Places a part's files and updates the list. */
  add(files: readonly FileResult[]): void {
    for (const file of files) this.entries.splice(this.insertionPoint(file), 0, { file, ranges: matchRangesOf(file), shown: -1, item: null });
    let before = 0;
    let kept = 0;
    for (; kept < this.entries.length && before < this.matches; kept++) {
      const entry = this.entries[kept]!;
      const shown = Math.min(entry.ranges, this.matches - before);
      if (entry.shown !== shown) {
        const item = this.render(shown === entry.ranges ? entry.file : withinRanges(entry.file, shown));
        entry.item?.replaceWith(item);
        entry.item = item;
        entry.shown = shown;
      }
      before += shown;
    }
    for (const dropped of this.entries.splice(kept)) dropped.item?.remove();
    let previous: HTMLElement | null = null;
    for (const { item } of this.entries) {
      const at: Element | null = previous ? previous.nextElementSibling : this.list.firstElementChild;
      if (at !== item) this.list.insertBefore(item!, at);
      previous = item;
    }
  }

  /** The files shown, best first, and their items. */
  get files(): FileResult[] {
    return this.entries.map((entry) => entry.file);
  }

  get items(): HTMLElement[] {
    return this.entries.map((entry) => entry.item!);
  }

  /** Files shown. */
  get size(): number {
    return this.entries.length;
  }

  /** Match ranges shown. */
  get matchRanges(): number {
    return this.entries.reduce((sum, entry) => sum + entry.shown, 0);
  }

  /** Where `file` goes: after every file that ranks before it or with it. */
  private insertionPoint(file: FileResult): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareFiles(this.entries[middle]!.file, file) <= 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
