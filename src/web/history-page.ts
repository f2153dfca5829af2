/**
 * The git views: the history of a repository, directory or file (GET /api/commits, filtered by author and message,
 * 50 commits a page), a commit with its diff against its first parent (GET /api/commit, GET /api/diff), a file's
 * blame (GET /api/blame: each line's commit, coloured by age), and a file's latest commit.
 */
import { getJson, type BlameResponse, type Commit, type DiffResponse } from './api.js';
import { clear, copyButton, h } from './dom.js';
import { blobUrl, commitsUrl, commitUrl, openInApp, treeUrl } from './links.js';

const PER_PAGE = 50;
const DAY_MS = 86_400_000;

/** "3 days ago", from an ISO date; the date itself in the element's title. */
function age(date: string): HTMLElement {
  const days = (Date.now() - Date.parse(date)) / DAY_MS;
  // A date ahead of this clock (a committer's skewed one) is shown as it is.
  if (!(days >= 0)) return h('time', { datetime: date }, new Date(date).toLocaleDateString());
  const [count, unit] =
    days < 1 / 24
      ? [Math.round(days * 1440), 'minute']
      : days < 1
        ? [Math.round(days * 24), 'hour']
        : days < 60
          ? [Math.round(days), 'day']
          : days < 730
            ? [Math.round(days / 30.4), 'month']
            : [Math.round(days / 365.25), 'year'];
  return h('time', { datetime: date, title: new Date(date).toLocaleString() }, `${count} ${unit}${count === 1 ? '' : 's'} ago`);
}

const short = (hash: string) => hash.slice(0, 8);

/** A commit as one line: its subject (linked to it), author, age and short hash. */
function commitLine(repo: string, commit: Pick<Commit, 'hash' | 'message' | 'authorName' | 'date'>): HTMLElement[] {
  return [
    h('a', { class: 'commit-subject', href: commitUrl(repo, commit.hash) }, commit.message),
    h('span', { class: 'commit-meta' }, commit.authorName, ' · ', age(commit.date), ' · ', h('code', {}, short(commit.hash))),
  ];
}

/** The history of `path` ('' for the repository) from `ref`, filtered as the page's URL says (`author`, `query`, `page`). */
export async function renderHistory(main: HTMLElement, repo: string, ref: string, path: string): Promise<void> {
  const params = new URLSearchParams(location.search);
  const filters = { author: params.get('author') ?? '', query: params.get('query') ?? '' };
  const page = Math.max(1, Number(params.get('page')) || 1);
  const request: Record<string, string> = { repo, ref, perPage: String(PER_PAGE), page: String(page) };
  if (path) request.path = path;
  for (const [key, value] of Object.entries(filters)) if (value) request[key] = value;
  const commits = await getJson<Commit[]>('/api/commits', request);
  clear(main);
  const field = (name: 'author' | 'query', label: string) =>
    h('label', {}, label, h('input', { type: 'search', name, value: filters[name], placeholder: 'a regular expression' }));
  const form = h(
    'form',
    { class: 'history-filters', id: 'history-filters' },
    field('author', 'Author'),
    field('query', 'Message'),
    h('button', { type: 'submit' }, 'Filter'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = Object.fromEntries(['author', 'query'].map((name) => [name, (form.elements.namedItem(name) as HTMLInputElement).value.trim()]));
    openInApp(commitsUrl(repo, ref, path, values));
  });
  const pager = h(
    'p',
    { class: 'pager' },
    page > 1 ? h('a', { href: commitsUrl(repo, ref, path, { ...filters, page: page > 2 ? String(page - 1) : '' }) }, 'Newer') : null,
    commits.length === PER_PAGE ? h('a', { href: commitsUrl(repo, ref, path, { ...filters, page: String(page + 1) }), id: 'older' }, 'Older') : null,
  );
  main.append(
    h(
      'section',
      { class: 'history', id: 'history' },
      h(
        'h2',
        {},
        'History of ',
        h('a', { href: treeUrl(repo, ref, '') }, repo),
        path ? ` / ${path}` : '',
        ` at ${ref === 'HEAD' ? 'the default branch' : ref}`,
      ),
      form,
      commits.length === 0
        ? h('p', { class: 'summary' }, 'No commits match.')
        : h('ol', { class: 'commits', id: 'commits' }, ...commits.map((commit) => h('li', {}, ...commitLine(repo, commit)))),
      pager,
    ),
  );
}

/** A commit: its message, author, parents, and its diff against its first parent. */
export async function renderCommit(main: HTMLElement, repo: string, hash: string): Promise<void> {
  const commit = await getJson<Commit & { parents: string[] }>('/api/commit', { repo, ref: hash });
  const diff = commit.parents[0] ? await getJson<DiffResponse>('/api/diff', { repo, base: commit.parents[0], head: commit.hash }) : undefined;
  clear(main);
  main.append(
    h(
      'section',
      { class: 'commit', id: 'commit' },
      h('h2', {}, commit.message),
      commit.body ? h('pre', { class: 'commit-body' }, commit.body) : null,
      h(
        'p',
        { class: 'commit-meta' },
        `${commit.authorName} <${commit.authorEmail}> · `,
        age(commit.date),
        ' · ',
        h('code', {}, commit.hash),
        ' ',
        copyButton('Copy hash', () => commit.hash, 'copy-hash'),
        ' · ',
        h('a', { href: treeUrl(repo, commit.hash, '') }, 'Browse files'),
      ),
      h(
        'p',
        { class: 'commit-parents' },
        commit.parents.length === 0 ? 'The first commit: no parent to compare with.' : 'Parents: ',
        ...commit.parents.flatMap((parent) => [h('a', { href: commitUrl(repo, parent) }, short(parent)), ' ']),
      ),
      diff ? diffView(diff, repo, commit.hash) : null,
    ),
  );
}

function diffView(diff: DiffResponse, repo: string, hash: string): HTMLElement {
  return h(
    'div',
    { class: 'diff', id: 'diff' },
    h('p', { class: 'summary' }, `${diff.files.length} ${diff.files.length === 1 ? 'file' : 'files'} changed`),
    ...diff.files.map((file) => {
      const name =
        file.oldPath === null
          ? `${file.newPath} (added)`
          : file.newPath === null
            ? `${file.oldPath} (deleted)`
            : file.oldPath === file.newPath
              ? file.newPath
              : `${file.oldPath} → ${file.newPath}`;
      const rows: HTMLElement[] = [];
      for (const hunk of file.hunks) {
        rows.push(
          h(
            'tr',
            { class: 'hunk' },
            h(
              'td',
              { colspan: '3' },
              `@@ -${hunk.oldRange.start},${hunk.oldRange.lines} +${hunk.newRange.start},${hunk.newRange.lines} @@ ${hunk.heading ?? ''}`,
            ),
          ),
        );
        let oldLine = hunk.oldRange.start;
        let newLine = hunk.newRange.start;
        for (const line of hunk.body.replace(/\n$/, '').split('\n')) {
          const kind = line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : line[0] === '\\' ? 'note' : 'ctx';
          const numbers =
            kind === 'add'
              ? ['', String(newLine++)]
              : kind === 'del'
                ? [String(oldLine++), '']
                : kind === 'note'
                  ? ['', '']
                  : [String(oldLine++), String(newLine++)];
          rows.push(h('tr', { class: kind }, h('td', { class: 'num' }, numbers[0]), h('td', { class: 'num' }, numbers[1]), h('td', { class: 'code' }, line)));
        }
      }
      const path = file.newPath ?? file.oldPath!;
      return h(
        'section',
        { class: 'diff-file' },
        h('h3', {}, file.newPath === null ? name : h('a', { href: blobUrl(repo, hash, path) }, name)),
        h('table', { class: 'diff-table' }, ...rows),
      );
    }),
  );
}

/** A line naming the latest commit that changed `path` from `ref`, with a link to its history; filled once the API answers. */
export function latestCommit(repo: string, ref: string, path: string): HTMLElement {
  const line = h('p', { class: 'latest-commit', id: 'latest-commit' }, h('a', { href: commitsUrl(repo, ref, path) }, 'History'));
  void getJson<Commit[]>('/api/commits', path ? { repo, ref, path, perPage: '1' } : { repo, ref, perPage: '1' }).then(
    ([latest]) => latest && line.prepend('Latest commit: ', ...commitLine(repo, latest), ' · '),
    () => undefined, // the history link still works
  );
  return line;
}

/**
 * `path`'s blame from `ref`: for each line, the cell to show beside it (its commit on the first line of each range,
 * every cell coloured by the commit's age: the newest warmest).
 */
export async function blameCells(repo: string, ref: string, path: string): Promise<(line: number) => HTMLElement> {
  const blame = await getJson<BlameResponse>('/api/blame', { repo, ref, path });
  const times = Object.values(blame.commits).map((commit) => Date.parse(commit.date));
  const oldest = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - oldest);
  const startOf = new Map(blame.ranges.map((range) => [range.startLine, range]));
  const rangeOf: string[] = [];
  for (const range of blame.ranges) for (let line = range.startLine; line < range.startLine + range.lineCount; line++) rangeOf[line] = range.hash;
  return (line) => {
    const hash = rangeOf[line];
    const commit = hash === undefined ? undefined : blame.commits[hash];
    if (!commit) return h('span', { class: 'blame' });
    const heat = Math.round(((Date.parse(commit.date) - oldest) / span) * 4);
    const first = startOf.get(line);
    return h(
      'span',
      { class: `blame heat-${heat}`, title: `${commit.message}\n${commit.authorName}, ${new Date(commit.date).toLocaleString()}` },
      first ? h('a', { href: commitUrl(repo, commit.hash) }, short(commit.hash)) : null,
      first ? ` ${commit.authorName} · ` : null,
      first ? age(commit.date) : null,
    );
  };
}
