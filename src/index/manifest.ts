/**
 * The manifest: which shard files make up each repository's index, which
 * commits they were built from, and a generation number bumped on every
 * change. Readers load shards only through it; it is replaced atomically, so
 * it always names complete shard files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from './atomic-file.js';
import type { IndexedBranch } from './model.js';

const MANIFEST_FILE = 'manifest.json';
const MANIFEST_VERSION = 1;

export type IndexState = 'pending' | 'indexing' | 'ready' | 'error';

export interface RepositoryEntry {
  id: number;
  /** Shard file names, relative to the shard directory. */
  shards: string[];
  /** Each shard's sha256 (hex), as built: recorded in a cluster, where a replica may copy the shards (docs/cluster.md). */
  sha256?: string[];
  branches: IndexedBranch[];
  /** The branch HEAD names ('HEAD' when detached or a plain directory). */
  defaultBranch?: string;
  /** Committer time of HEAD's commit (ISO 8601); absent for a plain directory. */
  pushedAt?: string;
  /** Hash of everything in the config and the format that shapes the shards. */
  fingerprint: string;
  state: IndexState;
  indexedAt?: string;
  error?: string;
  warnings: string[];
  documents: number;
  contentBytes: number;
}

export interface Manifest {
  version: number;
  generation: number;
  nextRepositoryId: number;
  repositories: Record<string, RepositoryEntry>;
  /**
   * Shard files no entry names any more, with when they stopped being named:
   * searches that started before may still open them, so they are deleted
   * only after a grace period.
   */
  retired?: { file: string; at: string }[];
}

function emptyManifest(): Manifest {
  return { version: MANIFEST_VERSION, generation: 0, nextRepositoryId: 1, repositories: {} };
}

/** Reads the manifest of a data directory; a missing one is empty. A malformed one is an error, never silently replaced. */
export function readManifest(dataDir: string): Manifest {
  const file = path.join(dataDir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyManifest();
    throw error;
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    throw new Error(`${file} is not valid JSON; move it away to rebuild the index`);
  }
  if (
    manifest?.version !== MANIFEST_VERSION ||
    !Number.isInteger(manifest.generation) ||
    !Number.isInteger(manifest.nextRepositoryId) ||
    typeof manifest.repositories !== 'object' ||
    manifest.repositories === null
  ) {
    throw new Error(`${file} is not a version ${MANIFEST_VERSION} trawl manifest; move it away to rebuild the index`);
  }
  return manifest;
}

/** Publishes a new generation of the manifest atomically. */
export function writeManifest(dataDir: string, manifest: Manifest): void {
  writeFileAtomicSync(path.join(dataDir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
}
