/**
 * What a node last knew of its cluster, kept in its state directory: the partitions it held and the cluster's
 * repository ids. A node that cannot reach etcd as it starts serves with these until etcd answers (docs/cluster.md,
 * "Starting without etcd").
 */
import fs from 'node:fs';
import path from 'node:path';
import { readPublishedFile, writeFileAtomicSync } from '../index/atomic-file.js';
import { stateDirectory } from '../index/data-directory.js';

const FILE = 'cluster-last-known.json';
const VERSION = 1;

export interface LastKnown {
  /** The partitions the node held. */
  held: number[];
  /** The cluster's id of each repository name the node was given one for. */
  repositoryIds: Record<string, number>;
}

/** What the node of `dataDir` last knew; null when it never joined a cluster. Throws when the file is damaged. */
export function readLastKnown(dataDir: string): LastKnown | null {
  const file = path.join(stateDirectory(dataDir), FILE);
  const text = readPublishedFile(file);
  if (text === null) return null;
  const known = parsed(text);
  if (!known) throw new Error(`${file} is damaged: start the node while etcd answers (it writes the file again)`);
  return known;
}

/** Records `change` over what the node knew (a damaged file is replaced: etcd is where the truth is). */
export function rememberCluster(dataDir: string, change: Partial<LastKnown>): void {
  const directory = stateDirectory(dataDir);
  const file = path.join(directory, FILE);
  let before: LastKnown | null = null;
  try {
    before = parsed(fs.readFileSync(file, 'utf8'));
  } catch {
    // Missing or unreadable: written anew.
  }
  const known = { held: [], repositoryIds: {}, ...before, ...change };
  if (before && JSON.stringify(known) === JSON.stringify(before)) return;
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, `${JSON.stringify({ version: VERSION, ...known })}\n`);
}

function parsed(text: string): LastKnown | null {
  try {
    const value = JSON.parse(text) as { version?: unknown } & Partial<LastKnown>;
    const ids = value.repositoryIds;
    const valid =
      value.version === VERSION &&
      Array.isArray(value.held) &&
      value.held.every((partition) => Number.isSafeInteger(partition) && partition >= 0) &&
      typeof ids === 'object' &&
      ids !== null &&
      Object.values(ids).every((id) => Number.isSafeInteger(id) && id > 0);
    return valid ? { held: value.held!, repositoryIds: value.repositoryIds! } : null;
  } catch {
    return null;
  }
}
