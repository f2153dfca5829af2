/**
 * Dates as `git log --since/--until` take them: ISO 8601 (`2024-01-31`,
 * `2024-01-31T10:00:00Z`), and the relative forms people type (`30 days ago`,
 * `2.weeks.ago`, `last week`, `a month ago`, `yesterday`, `today`, `now`).
 */

const MS_PER: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
const CALENDAR_UNITS = new Set(['month', 'year']);
const NUMBER_WORDS: Record<string, number> = { a: 1, an: 1, last: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 };
const ISO_8601 = /^\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/;

/** The instant `text` names, relative ones counted back from `now`; null when it is neither form. */
export function parseGitDate(text: string, now: number = Date.now()): Date | null {
  const trimmed = text.trim();
  if (ISO_8601.test(trimmed)) {
    const date = new Date(trimmed);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  const words = trimmed
    .toLowerCase()
    .split(/[\s.,_]+/)
    .filter(Boolean);
  if (words.length === 1 && (words[0] === 'now' || words[0] === 'today')) return new Date(now);
  if (words.length === 1 && words[0] === 'yesterday') return new Date(now - MS_PER.day!);
  if (words[words.length - 1] === 'ago') words.pop();
  if (words.length === 0 || words.length % 2 !== 0) return null;
  const date = new Date(now);
  for (let i = 0; i < words.length; i += 2) {
    const count = /^\d{1,6}$/.test(words[i]!) ? Number(words[i]) : NUMBER_WORDS[words[i]!];
    const unit = words[i + 1]!.replace(/s$/, '');
    if (count === undefined) return null;
    if (MS_PER[unit] !== undefined) date.setTime(date.getTime() - count * MS_PER[unit]!);
    else if (CALENDAR_UNITS.has(unit)) {
      if (unit === 'month') date.setMonth(date.getMonth() - count);
      else date.setFullYear(date.getFullYear() - count);
    } else return null;
  }
  return Number.isNaN(date.getTime()) ? null : date;
}
