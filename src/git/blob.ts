/** A file's bytes at a commit, for GET /api/source. */
import type NodeGit from 'nodegit';
import { PathNotFoundError } from './errors.js';
import { normalizeTreePath } from './refs.js';

export interface BlobAtPath {
  path: string;
  content: Buffer;
  blobSha: string;
}

/** Throws PathNotFoundError when the path is malformed, absent, or not a file at this commit. */
export async function blobAt(commit: NodeGit.Commit, rawPath: string): Promise<BlobAtPath> {
  const filePath = normalizeTreePath(rawPath);
  if (filePath === '') throw new PathNotFoundError(rawPath, 'is a directory, not a file');
  let entry: NodeGit.TreeEntry;
  try {
    entry = await commit.getEntry(filePath);
  } catch {
    throw new PathNotFoundError(rawPath, 'is not in the tree at this revision');
  }
  if (!entry.isBlob()) throw new PathNotFoundError(rawPath, 'is not a file at this revision');
  const blob = await entry.getBlob();
  return { path: filePath, content: Buffer.from(blob.content()), blobSha: entry.sha() };
}
