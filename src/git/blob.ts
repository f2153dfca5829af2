/** A file's bytes at a commit, for GET /api/source. */
import type NodeGit from 'nodegit';
import { GitObjectMissingError, GitReadStoppedError, missingObjectError, PathNotFoundError } from './errors.js';
import { normalizeTreePath } from './refs.js';

export interface BlobAtPath {
  path: string;
  content: Buffer;
  blobSha: string;
}

/** The file mode of a tree entry that is a symbolic link: its blob holds the link's target. */
const FILEMODE_LINK = 0o120000;

/** A file larger than this is not read (the API would answer it as JSON, base64 for binary files). */
export const MAX_BLOB_BYTES = 64 << 20;

/**
 * The file at `rawPath`, a symbolic link as its target's text (as `git show` gives it; never followed). Throws
 * PathNotFoundError when the path is malformed, absent, or not a file at this commit, GitReadStoppedError when it
 * is larger than MAX_BLOB_BYTES, GitObjectMissingError when a tree on the way is not in the repository.
 */
export async function blobAt(commit: NodeGit.Commit, rawPath: string): Promise<BlobAtPath> {
  const filePath = normalizeTreePath(rawPath);
  if (filePath === '') throw new PathNotFoundError(rawPath, 'is a directory, not a file');
  let entry: NodeGit.TreeEntry;
  try {
    entry = await commit.getEntry(filePath);
  } catch (error) {
    const missing = missingObjectError(error);
    throw missing instanceof GitObjectMissingError ? missing : new PathNotFoundError(rawPath, 'is not in the tree at this revision');
  }
  if (!entry.isBlob() && entry.filemode() !== FILEMODE_LINK) throw new PathNotFoundError(rawPath, 'is not a file at this revision');
  const blob = await entry.getBlob();
  if (blob.rawsize() > MAX_BLOB_BYTES) throw new GitReadStoppedError(`reading ${filePath}`, 'size', MAX_BLOB_BYTES, 'the file is too large to serve');
  return { path: filePath, content: Buffer.from(blob.content()), blobSha: entry.sha() };
}
