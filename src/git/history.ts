/** Commit listings, single commits and commit authors for GET /api/commits, /api/commit and /api/commits/authors. */
import type NodeGit from 'nodegit';
import { nodegit } from './nodegit.js';
import { checkReadLimit, GitObjectMissingError, missingObjectError, type ReadLimit } from './errors.js';
import type { GitRepository } from './repository.js';

export interface CommitSummary {
  hash: string;
  /** Committer date, ISO 8601. */
  date: string;
  /** The subject line. */
  message: string;
  /** The message after the subject, without the separating blank line. */
  body: string;
  authorName: string;
  authorEmail: string;
  /** The names pointing at the commit as git's `%D` shows them (`HEAD -> main, tag: v1, origin/main`), '' for none. */
  refs: string;
}

/** Whether each of `texts` matches (a regex tested off this thread: server/routes/git.ts). */
export type TextMatcher = (texts: string[]) => Promise<ArrayLike<number | boolean>>;

export interface CommitFilter {
  /** Only commits that change this path (file or directory). */
  path?: string;
  /** Matched against the whole message. */
  query?: TextMatcher;
  /** Matched against `Name <email>` of the author, as `git log --author` does. */
  author?: TextMatcher;
  since?: Date;
  until?: Date;
}

/** A walk considers at most this many commits, so one request cannot walk an unbounded history. */
export const MAX_COMMITS_WALKED = 100_000;
const WALK_BATCH = 500;

export interface Page {
  number: number;
  size: number;
}

/**
 * Calls `visit` for each commit reachable from `start` that passes `filter`
 * (at most MAX_COMMITS_WALKED are walked), in `git log`'s order: newest
 * first, and a child before its parent when both have the same time
 * (libgit2's time sort leaves such ties in any order).
 */
async function walkCommits(
  repository: GitRepository,
  start: NodeGit.Commit,
  filter: CommitFilter,
  limit: ReadLimit,
  visit: (commit: NodeGit.Commit) => void,
): Promise<void> {
  const walk = repository.createRevWalk();
  walk.sorting(nodegit().Revwalk.SORT.TIME);
  walk.push(start.id());
  let walked = 0;
  let sameTime: NodeGit.Commit[] = [];
  const rejectedByText = new Set<NodeGit.Commit>();
  const flush = async () => {
    for (const commit of childrenFirst(sameTime)) {
      checkReadLimit(limit, 'walking the history', 'narrow it (a path, since or until)');
      if (!rejectedByText.has(commit) && (await passes(repository, commit, filter))) visit(commit);
    }
    sameTime = [];
  };
  while (walked < MAX_COMMITS_WALKED) {
    // commitWalk looks a batch up in one native call (≈ 9 µs a commit; getCommits, a round trip each, ≈ 95 µs).
    // Its commits carry no repository: what needs one (trees, parents) is looked up through `repository`.
    const batch = await walk.commitWalk(Math.min(WALK_BATCH, MAX_COMMITS_WALKED - walked)).catch((error: unknown) => {
      const missing = missingObjectError(error);
      if (missing instanceof GitObjectMissingError) throw missing;
      return [] as NodeGit.Commit[];
    });
    if (batch.length === 0) break;
    walked += batch.length;
    for (const commit of await textRejects(batch, filter)) rejectedByText.add(commit);
    for (const commit of batch) {
      if (sameTime.length > 0 && sameTime[0]!.time() !== commit.time()) await flush();
      sameTime.push(commit);
    }
  }
  await flush();
}

/**
 * Commits of one time ordered so that none comes after one of its parents,
 * their order kept otherwise (Kahn's algorithm, the ready commit that came
 * first taken first): O(n log n), whatever the history.
 */
function childrenFirst(commits: NodeGit.Commit[]): NodeGit.Commit[] {
  if (commits.length < 2) return commits;
  const indexOf = new Map(commits.map((commit, index) => [commit.sha(), index]));
  const parents = commits.map((commit) => commit.parents().flatMap((oid) => indexOf.get(oid.tostrS()) ?? []));
  const children = new Array<number>(commits.length).fill(0);
  for (const list of parents) for (const parent of list) children[parent]!++;
  const ready = new MinHeap();
  children.forEach((count, index) => count === 0 && ready.push(index));
  const ordered: NodeGit.Commit[] = [];
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    ordered.push(commits[next]!);
    for (const parent of parents[next]!) if (--children[parent]! === 0) ready.push(parent);
  }
  return ordered;
}

/** A binary min-heap of numbers. */
class MinHeap {
  private readonly items: number[] = [];

  push(value: number): void {
    const items = this.items;
    let at = items.push(value) - 1;
    while (at > 0) {
      const up = (at - 1) >> 1;
      if (items[up]! <= value) break;
      items[at] = items[up]!;
      at = up;
    }
    items[at] = value;
  }

  pop(): number | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= items.length) break;
      const child = left + 1 < items.length && items[left + 1]! < items[left]! ? left + 1 : left;
      if (items[child]! >= last) break;
      items[at] = items[child]!;
      at = child;
    }
    items[at] = last;
    return top;
  }
}

/**
 * The commits reachable from `start`, newest first, that pass `filter`: the
 * page asked for and how many passed in all.
 */
export async function listCommits(
  repository: GitRepository,
  start: NodeGit.Commit,
  filter: CommitFilter,
  page: Page,
  limit: ReadLimit,
): Promise<{ total: number; commits: CommitSummary[] }> {
  const refs = await refsByCommit(repository);
  const from = (page.number - 1) * page.size;
  const commits: CommitSummary[] = [];
  let total = 0;
  await walkCommits(repository, start, filter, limit, (commit) => {
    if (total >= from && commits.length < page.size) commits.push(summarize(commit, refs));
    total++;
  });
  return { total, commits };
}

export interface CommitAuthor {
  name: string;
  email: string;
  commitCount: number;
}

/**
 * The authors of the commits reachable from `start` that pass `filter`, one
 * per name and email as `git shortlog -sne` counts them: most commits first,
 * then by `Name <email>`. The page asked for and how many in all.
 */
export async function listAuthors(
  repository: GitRepository,
  start: NodeGit.Commit,
  filter: CommitFilter,
  page: Page,
  limit: ReadLimit,
): Promise<{ total: number; authors: CommitAuthor[] }> {
  const byIdentity = new Map<string, CommitAuthor>();
  await walkCommits(repository, start, filter, limit, (commit) => {
    const author = commit.author();
    const key = `${author.name()} <${author.email()}>`;
    const known = byIdentity.get(key);
    if (known) known.commitCount++;
    else byIdentity.set(key, { name: author.name(), email: author.email(), commitCount: 1 });
  });
  const authors = [...byIdentity]
    .sort(([a, first], [b, second]) => second.commitCount - first.commitCount || (a < b ? -1 : a > b ? 1 : 0))
    .map(([, author]) => author);
  const from = (page.number - 1) * page.size;
  return { total: authors.length, authors: authors.slice(from, from + page.size) };
}

/** One commit with its parents' ids. */
export async function commitDetail(repository: GitRepository, commit: NodeGit.Commit): Promise<CommitSummary & { parents: string[] }> {
  const refs = await refsByCommit(repository);
  return { ...summarize(commit, refs), parents: commit.parents().map((oid) => oid.tostrS()) };
}

function summarize(commit: NodeGit.Commit, refs: Map<string, string>): CommitSummary {
  const text = commit.message();
  const newline = text.indexOf('\n');
  const message = newline === -1 ? text : text.slice(0, newline);
  const body =
    newline === -1
      ? ''
      : text
          .slice(newline + 1)
          .replace(/^\n+/, '')
          .replace(/\s+$/, '');
  const author = commit.author();
  return {
    hash: commit.sha(),
    date: commit.date().toISOString(),
    message,
    body,
    authorName: author.name(),
    authorEmail: author.email(),
    refs: refs.get(commit.sha()) ?? '',
  };
}

/** The commits of `commits` whose message or author the filter's `query` or `author` rejects (none without them). */
async function textRejects(commits: NodeGit.Commit[], filter: CommitFilter): Promise<NodeGit.Commit[]> {
  const rejected: NodeGit.Commit[] = [];
  let kept = commits;
  if (filter.query) kept = split(kept, await filter.query(kept.map((commit) => commit.message())), rejected);
  if (filter.author && kept.length > 0) {
    const authors = kept.map((commit) => {
      const author = commit.author();
      return `${author.name()} <${author.email()}>`;
    });
    kept = split(kept, await filter.author(authors), rejected);
  }
  return rejected;
}

/** The items `matched` marks, the others appended to `rejected`. */
function split<T>(items: T[], matched: ArrayLike<number | boolean>, rejected: T[]): T[] {
  const kept: T[] = [];
  for (const [i, item] of items.entries()) (matched[i] ? kept : rejected).push(item);
  return kept;
}

async function passes(repository: GitRepository, commit: NodeGit.Commit, filter: CommitFilter): Promise<boolean> {
  const date = commit.date();
  if (filter.since && date < filter.since) return false;
  if (filter.until && date > filter.until) return false;
  return filter.path === undefined || (await changesPath(repository, commit, filter.path));
}

/** Whether the path's tree entry differs from every parent's (git log's default history simplification). */
async function changesPath(repository: GitRepository, commit: NodeGit.Commit, filePath: string): Promise<boolean> {
  const mine = await entryId(repository, commit, filePath);
  const parents = commit.parents();
  if (parents.length === 0) return mine !== null;
  for (const parent of parents) {
    if ((await entryId(repository, await repository.getCommit(parent), filePath)) === mine) return false;
  }
  return true;
}

async function entryId(repository: GitRepository, commit: NodeGit.Commit, filePath: string): Promise<string | null> {
  try {
    return (await (await repository.getTree(commit.treeId())).getEntry(filePath)).sha();
  } catch (error) {
    const missing = missingObjectError(error);
    if (missing instanceof GitObjectMissingError) throw missing;
    return null;
  }
}

/**
 * Commit id → its decoration as git's `%D` writes it: HEAD first (`HEAD ->
 * main` when HEAD names a branch at that commit, `HEAD` when detached), then
 * tags (`tag: v1`), remote-tracking and local branches, by full ref name
 * descending, as git lists them.
 */
async function refsByCommit(repository: GitRepository): Promise<Map<string, string>> {
  const names = new Map<string, string[]>();
  const refs = (await repository.getReferences()).filter((ref) => ref.isBranch() || ref.isRemote() || ref.isTag());
  refs.sort((a, b) => (a.name() < b.name() ? 1 : a.name() > b.name() ? -1 : 0));
  const head = await repository.head().catch(() => null);
  const headBranch = head?.isBranch() ? head.name() : null;
  for (const ref of refs) {
    if (ref.name() === headBranch) continue;
    const commit = await peeledCommit(ref);
    if (commit) names.set(commit, [...(names.get(commit) ?? []), ref.isTag() ? `tag: ${ref.shorthand()}` : ref.shorthand()]);
  }
  const headCommit = head ? await peeledCommit(head) : null;
  if (head && headCommit) names.set(headCommit, [headBranch ? `HEAD -> ${head.shorthand()}` : 'HEAD', ...(names.get(headCommit) ?? [])]);
  return new Map([...names].map(([commit, list]) => [commit, list.join(', ')]));
}

async function peeledCommit(ref: NodeGit.Reference): Promise<string | null> {
  try {
    return (await ref.peel(nodegit().Object.TYPE.COMMIT)).id().tostrS();
  } catch {
    return null; // a tag of a tree or blob points at no commit
  }
}
