/** The difference between two commits for GET /api/diff. */
import type NodeGit from 'nodegit';
import { nodegit } from './nodegit.js';
import { checkReadLimit, GitReadStoppedError, type ReadLimit } from './errors.js';
import type { GitRepository } from './repository.js';
import { FILEMODE_COMMIT } from './tree.js';

/** A diff reads at most this many bytes of file versions (both sides of every changed file); a larger one is refused. */
export const MAX_DIFF_SOURCE_BYTES = 64 << 20;
const NARROW = 'narrow it with `path`';

export interface DiffHunk {
  oldRange: { start: number; lines: number };
  newRange: { start: number; lines: number };
  /** The text after the second "@@" of the hunk header (usually the enclosing function). */
  heading?: string;
  /** The hunk's lines, each prefixed with ' ', '+' or '-'. */
  body: string;
}

export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  hunks: DiffHunk[];
}

/**
 * What changed from `base` to `head`, optionally only under `path` (taken literally, not as a glob).
 * Renames are detected. Throws GitReadStoppedError once `limit` fires, or before the patches are made
 * when the changed files' versions hold more than MAX_DIFF_SOURCE_BYTES.
 */
export async function diffCommits(
  repository: GitRepository,
  base: NodeGit.Commit,
  head: NodeGit.Commit,
  filePath: string | undefined,
  limit: ReadLimit,
): Promise<DiffFile[]> {
  const options: NodeGit.DiffOptions = { flags: nodegit().Diff.OPTION.DISABLE_PATHSPEC_MATCH };
  if (filePath !== undefined) options.pathspec = [filePath];
  const diff = await nodegit().Diff.treeToTree(repository, await base.getTree(), await head.getTree(), options);
  await diff.findSimilar({ flags: nodegit().Diff.FIND.RENAMES });
  // The patches are made all at once (in memory, lines and all): what they read is bounded first.
  let sourceBytes = 0;
  for (let index = 0; index < diff.numDeltas(); index++) {
    checkReadLimit(limit, 'the diff', NARROW);
    const delta = diff.getDelta(index);
    for (const file of [delta.oldFile(), delta.newFile()]) {
      if (!(file.flags() & nodegit().Diff.FLAG.EXISTS) || file.mode() === FILEMODE_COMMIT) continue;
      sourceBytes += (await repository.getBlob(file.id())).rawsize();
      if (sourceBytes > MAX_DIFF_SOURCE_BYTES) throw new GitReadStoppedError('the diff', 'size', MAX_DIFF_SOURCE_BYTES, NARROW);
    }
  }
  const files: DiffFile[] = [];
  for (const patch of await diff.patches()) {
    checkReadLimit(limit, 'the diff', NARROW);
    const hunks: DiffHunk[] = [];
    for (const hunk of await patch.hunks()) {
      const lines = await hunk.lines();
      const heading = /^@@[^@]*@@ ?(.*)$/.exec(hunk.header().replace(/\r?\n$/, ''))?.[1];
      const entry: DiffHunk = {
        oldRange: { start: hunk.oldStart(), lines: hunk.oldLines() },
        newRange: { start: hunk.newStart(), lines: hunk.newLines() },
        body: lines.map((line) => String.fromCharCode(line.origin()) + line.content()).join(''),
      };
      if (heading) entry.heading = heading;
      hunks.push(entry);
    }
    files.push({ oldPath: patch.isAdded() ? null : patch.oldFile().path(), newPath: patch.isDeleted() ? null : patch.newFile().path(), hunks });
  }
  return files;
}
