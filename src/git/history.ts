/** Commit listings and single commits for GET /api/commits and /api/commit. */
import NodeGit from 'nodegit';
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
  /** Branches and tags pointing at the commit (short names). */
  refs: string[];
}

export interface CommitFilter {
  /** Only commits that change this path (file or directory). */
  path?: string;
  /** Case-insensitive substring of the message. */
  query?: string;
  /** Case-insensitive substring of the author's name or email. */
  author?: string;
  since?: Date;
  until?: Date;
}

/** A walk considers at most this many commits, so one request cannot walk an unbounded history. */
export const MAX_COMMITS_WALKED = 100_000;
const WALK_BATCH = 500;

/**
 * The commits reachable from `start`, newest first, that pass `filter`: the
 * page asked for and how many passed in all.
 */
export async function listCommits(
  repository: GitRepository,
  start: NodeGit.Commit,
  filter: CommitFilter,
  page: { number: number; size: number },
): Promise<{ total: number; commits: CommitSummary[] }> {
  const refs = await refsByCommit(repository);
  const walk = repository.createRevWalk();
  walk.sorting(NodeGit.Revwalk.SORT.TIME);
  walk.push(start.id());
  const from = (page.number - 1) * page.size;
  const commits: CommitSummary[] = [];
  let total = 0;
  let walked = 0;
  while (walked < MAX_COMMITS_WALKED) {
    const batch = await walk.getCommits(WALK_BATCH).catch(() => [] as NodeGit.Commit[]);
    if (batch.length === 0) break;
    for (const commit of batch) {
      walked++;
      if (!(await passes(commit, filter))) continue;
      if (total >= from && commits.length < page.size) commits.push(summarize(commit, refs));
      total++;
    }
  }
  return { total, commits };
}

/** One commit with its parents' ids. */
export async function commitDetail(repository: GitRepository, commit: NodeGit.Commit): Promise<CommitSummary & { parents: string[] }> {
  const refs = await refsByCommit(repository);
  return { ...summarize(commit, refs), parents: commit.parents().map((oid) => oid.tostrS()) };
}

function summarize(commit: NodeGit.Commit, refs: Map<string, string[]>): CommitSummary {
  const text = commit.message();
  const newline = text.indexOf('\n');
  const message = newline === -1 ? text : text.slice(0, newline);
  const body = newline === -1 ? '' : text.slice(newline + 1).replace(/^\n+/, '').replace(/\s+$/, '');
  const author = commit.author();
  return {
    hash: commit.sha(),
    date: commit.date().toISOString(),
    message,
    body,
    authorName: author.name(),
    authorEmail: author.email(),
    refs: refs.get(commit.sha()) ?? [],
  };
}

async function passes(commit: NodeGit.Commit, filter: CommitFilter): Promise<boolean> {
  const date = commit.date();
  if (filter.since && date < filter.since) return false;
  if (filter.until && date > filter.until) return false;
  if (filter.query && !commit.message().toLowerCase().includes(filter.query.toLowerCase())) return false;
  if (filter.author) {
    const needle = filter.author.toLowerCase();
    const author = commit.author();
    if (!author.name().toLowerCase().includes(needle) && !author.email().toLowerCase().includes(needle)) return false;
  }
  return filter.path === undefined || (await changesPath(commit, filter.path));
}

/** Whether the path's tree entry differs from every parent's (git log's default history simplification). */
async function changesPath(commit: NodeGit.Commit, filePath: string): Promise<boolean> {
  const mine = await entryId(commit, filePath);
  const parents = await commit.getParents(commit.parentcount());
  if (parents.length === 0) return mine !== null;
  for (const parent of parents) {
    if ((await entryId(parent, filePath)) === mine) return false;
  }
  return true;
}

async function entryId(commit: NodeGit.Commit, filePath: string): Promise<string | null> {
  try {
    return (await commit.getEntry(filePath)).sha();
  } catch {
    return null;
  }
}

/** Commit id → names of the branches and tags pointing at it. */
async function refsByCommit(repository: GitRepository): Promise<Map<string, string[]>> {
  const byCommit = new Map<string, string[]>();
  for (const ref of await repository.getReferences()) {
    if (!ref.isBranch() && !ref.isTag()) continue;
    try {
      const target = await ref.peel(NodeGit.Object.TYPE.COMMIT);
      const id = target.id().tostrS();
      byCommit.set(id, [...(byCommit.get(id) ?? []), ref.shorthand()]);
    } catch {
      // a tag of a tree or blob points at no commit
    }
  }
  return byCommit;
}
