/** Directory listings of a commit's tree for POST /api/tree. */
import type NodeGit from 'nodegit';
import type { TreeNode } from '../api/types.js';
import { checkReadLimit, PathNotFoundError, type ReadLimit } from './errors.js';
import { normalizeTreePath } from './refs.js';

/** The file mode of a tree entry that is a submodule's commit (a gitlink). */
export const FILEMODE_COMMIT = 0o160000;

/** A directory's entries ('' the root): their names and types. */
export type ListDirectory = (directory: string) => Promise<{ name: string; type: TreeNode['type'] }[]>;

/**
 * The root node listing the root's entries, with each requested directory
 * (and every directory on the way to it) expanded one level. Directories come
 * first, then files, each by name (case-insensitive, then byte order).
 * Throws PathNotFoundError when a requested path is not a directory, GitReadStoppedError once `limit` fires.
 */
export function treeOf(commit: NodeGit.Commit, paths: readonly string[], limit: ReadLimit): Promise<TreeNode> {
  const list: ListDirectory = async (directory) => {
    const tree = directory === '' ? await commit.getTree() : await (await commit.getEntry(directory)).getTree();
    return tree.entries().map((entry) => ({ name: entry.name(), type: entry.isTree() ? 'tree' : entry.filemode() === FILEMODE_COMMIT ? 'commit' : 'blob' }));
  };
  return expandedTree(list, paths, limit);
}

/** The tree `list` gives, expanded as `treeOf` describes. */
export async function expandedTree(list: ListDirectory, paths: readonly string[], limit: ReadLimit): Promise<TreeNode> {
  const root: TreeNode = { type: 'tree', path: '', name: '', children: [] };
  const expanded = new Set<string>(['']);
  const expand = async (node: TreeNode) => {
    node.children = (await list(node.path))
      .map(({ name, type }) => ({ type, path: node.path ? `${node.path}/${name}` : name, name, children: [] }))
      .sort(compareNodes);
  };
  await expand(root);
  for (const raw of paths) {
    const target = normalizeTreePath(raw);
    if (target === '') continue;
    const segments = target.split('/');
    let node = root;
    for (let depth = 0; depth < segments.length; depth++) {
      checkReadLimit(limit, 'the tree listing', 'ask for fewer paths');
      const childPath = segments.slice(0, depth + 1).join('/');
      const child = node.children.find((candidate) => candidate.path === childPath);
      if (!child || child.type !== 'tree') throw new PathNotFoundError(raw, 'is not a directory at this revision');
      if (!expanded.has(childPath)) {
        await expand(child);
        expanded.add(childPath);
      }
      node = child;
    }
  }
  return root;
}

function compareNodes(a: TreeNode, b: TreeNode): number {
  const aDirectory = a.type === 'tree' ? 0 : 1;
  const bDirectory = b.type === 'tree' ? 0 : 1;
  if (aDirectory !== bDirectory) return aDirectory - bDirectory;
  const aFolded = a.name.toLowerCase();
  const bFolded = b.name.toLowerCase();
  if (aFolded !== bFolded) return aFolded < bFolded ? -1 : 1;
  return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
}
