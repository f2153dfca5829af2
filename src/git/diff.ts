/** The difference between two commits for GET /api/diff. */
import NodeGit from 'nodegit';
import type { GitRepository } from './repository.js';

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

/** What changed from `base` to `head`, optionally only under `path` (taken literally, not as a glob). Renames are detected. */
export async function diffCommits(repository: GitRepository, base: NodeGit.Commit, head: NodeGit.Commit, filePath?: string): Promise<DiffFile[]> {
  const options: NodeGit.DiffOptions = { flags: NodeGit.Diff.OPTION.DISABLE_PATHSPEC_MATCH };
  if (filePath !== undefined) options.pathspec = [filePath];
  const diff = await NodeGit.Diff.treeToTree(repository, await base.getTree(), await head.getTree(), options);
  await diff.findSimilar({ flags: NodeGit.Diff.FIND.RENAMES });
  const files: DiffFile[] = [];
  for (const patch of await diff.patches()) {
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
