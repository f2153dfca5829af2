import t from 'tap';
import { parseGitDate } from '../../src/git/dates.js';

const now = Date.parse('2026-03-31T12:00:00Z');
const DAY = 86_400_000;
const cases: [text: string, expected: string | null][] = [
  ['2024-01-31', '2024-01-31T00:00:00.000Z'],
  ['2024-01-31T10:20:30Z', '2024-01-31T10:20:30.000Z'],
  ['2024-01-31T10:20:30+02:00', '2024-01-31T08:20:30.000Z'],
  ['now', '2026-03-31T12:00:00.000Z'],
  ['today', '2026-03-31T12:00:00.000Z'],
  ['yesterday', new Date(now - DAY).toISOString()],
  ['30 days ago', new Date(now - 30 * DAY).toISOString()],
  ['2.weeks.ago', new Date(now - 14 * DAY).toISOString()],
  ['last week', new Date(now - 7 * DAY).toISOString()],
  ['an hour ago', new Date(now - 3_600_000).toISOString()],
  ['1 month ago', '2026-03-03T12:00:00.000Z'],
  ['2 years ago', '2024-03-31T12:00:00.000Z'],
  ['1 day 2 hours ago', new Date(now - DAY - 7_200_000).toISOString()],
  ['3 Days Ago', new Date(now - 3 * DAY).toISOString()],
  ['a while back', null],
  ['30 days', new Date(now - 30 * DAY).toISOString()],
  ['days ago', null],
  ['', null],
  ['2024-13-45', null],
  ['12', null],
  ['1e9 days ago', null],
];
for (const [text, expected] of cases) {
  t.equal(parseGitDate(text, now)?.toISOString() ?? null, expected, JSON.stringify(text));
}

t.test('the relative forms agree with git log --since', async (t) => {
  // git's approxidate counts a month as the calendar month back, like ours.
  t.equal(parseGitDate('1 month ago', Date.parse('2026-05-15T00:00:00Z'))!.toISOString(), '2026-04-15T00:00:00.000Z');
});
