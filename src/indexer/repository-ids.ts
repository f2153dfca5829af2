/**
 * Repository ids: what grants and scoped tokens are bound to, so they must
 * outlive the index. They are kept in `state/repository-ids.json` (backed up
 * with the state log, docs/operations.md), not in the manifest: a rebuilt
 * index (manifest and shards deleted) gives every repository its old id
 * back, and a new name always gets a new id, never a freed one. A file from
 * before this one is seeded from the manifest's ids, which grants already
 * use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readPublishedFile, writeFileAtomicSync } from '../index/atomic-file.js';
import { stateDirectory } from '../index/data-directory.js';
import type { Manifest } from '../index/manifest.js';
import type { RepositoryConfig } from '../config/config.js';

const IDS_FILE = 'repository-ids.json';
const IDS_VERSION = 1;

interface RepositoryIds {
  version: number;
  /** The next id to give: above every id ever given. */
  nextId: number;
  ids: Record<string, number>;
}

/** The former name of each repository of `repos` its host renamed (new name → old). */
export function formerNames(repos: readonly RepositoryConfig[]): Map<string, string> {
  return new Map(repos.flatMap((repo) => (repo.renamedFrom ? [[repo.name, repo.renamedFrom] as const] : [])));
}

/**
 * The id of every name in `names`: the one on record, the one of its former
 * name (`renamed`: new name → old) when that is gone, or a new one (recorded
 * before it is returned). A malformed file is an error, never replaced: the
 * grants depend on it.
 */
export function assignRepositoryIds(
  dataDir: string,
  names: readonly string[],
  manifest: Manifest,
  renamed: ReadonlyMap<string, string> = new Map(),
): Map<string, number> {
  const directory = stateDirectory(dataDir);
  const file = path.join(directory, IDS_FILE);
  const record = readIds(file) ?? seededFrom(manifest);
  let changed = !fs.existsSync(file);
  const present = new Set(names);
  for (const name of names) {
    if (record.ids[name] !== undefined) continue;
    const former = renamed.get(name);
    if (former !== undefined && record.ids[former] !== undefined && !present.has(former)) {
      // The host renamed it (same stable id): the id, and the grants bound to it, move with the name.
      record.ids[name] = record.ids[former]!;
      delete record.ids[former];
    } else {
      record.ids[name] = record.nextId++;
    }
    changed = true;
  }
  if (changed) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    writeFileAtomicSync(file, `${JSON.stringify(record, null, 2)}\n`);
  }
  return new Map(names.map((name) => [name, record.ids[name]!]));
}

/**
 * Makes `ids` (a cluster's, shared by its nodes: cluster/repository-ids.ts) this data directory's ids of those
 * names. A name of the file that had one of those ids for itself gets a new one (its shards are rebuilt under it).
 */
export function adoptRepositoryIds(dataDir: string, ids: ReadonlyMap<string, number>, manifest: Manifest): void {
  const directory = stateDirectory(dataDir);
  const file = path.join(directory, IDS_FILE);
  const record = readIds(file) ?? seededFrom(manifest);
  if (fs.existsSync(file) && [...ids].every(([name, id]) => record.ids[name] === id)) return;
  const adopted = new Set(ids.values());
  record.nextId = Math.max(record.nextId, ...[...ids.values()].map((id) => id + 1));
  for (const [name, id] of Object.entries(record.ids)) if (!ids.has(name) && adopted.has(id)) record.ids[name] = record.nextId++;
  for (const [name, id] of ids) record.ids[name] = id;
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, `${JSON.stringify(record, null, 2)}\n`);
}

function readIds(file: string): RepositoryIds | null {
  const text = readPublishedFile(file);
  if (text === null) return null;
  let parsed: RepositoryIds;
  try {
    parsed = JSON.parse(text) as RepositoryIds;
  } catch {
    throw new Error(`${file} is not valid JSON: restore it from the state backup (grants and scoped tokens name repositories by these ids)`);
  }
  const ids = Object.values(parsed?.ids ?? {});
  const valid =
    parsed?.version === IDS_VERSION &&
    Number.isSafeInteger(parsed.nextId) &&
    typeof parsed.ids === 'object' &&
    ids.every((id) => Number.isSafeInteger(id) && id > 0 && id < parsed.nextId) &&
    new Set(ids).size === ids.length;
  if (!valid) throw new Error(`${file} is not a version ${IDS_VERSION} repository id file: restore it from the state backup`);
  return parsed;
}

/** The ids the manifest gave, for an install from before this file. */
function seededFrom(manifest: Manifest): RepositoryIds {
  const ids = Object.fromEntries(Object.entries(manifest.repositories).map(([name, entry]) => [name, entry.id]));
  const nextId = Math.max(manifest.nextRepositoryId, ...Object.values(ids).map((id) => id + 1), 1);
  return { version: IDS_VERSION, nextId, ids };
}
