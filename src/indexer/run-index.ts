/**
 * One indexing pass over every configured repository: skip what is
 * unchanged, rebuild what changed, drop what left the config. A repository
 * that fails is recorded as such and does not stop the others. The data
 * directory is locked for the whole pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { native } from '../../native/index.js';
import type { Config, RepositoryConfig } from '../config/config.js';
import { shardDirectory } from '../index/data-directory.js';
import type { RepositoryMeta } from '../index/model.js';
import { SymbolExtractor } from './symbol-extractor.js';
import { buildShards, type BuildProgress, type BuildResult } from './build-shards.js';
import { placeFreeFingerprint, repositoryFingerprint } from './fingerprint.js';
import { assignRepositoryIds, formerNames } from './repository-ids.js';
import { copyShards, sha256Of, verifiedSums } from './shard-copy.js';
import { readManifest, writeManifest, type Manifest, type RepositoryEntry } from '../index/manifest.js';
import { takeSnapshot, type Snapshot } from './source.js';
import type { NotCopied, RepositoryOutcome, ShardSources } from '../worker/index-protocol.js';

const LOCK_FILE = 'index.lock';

export interface IndexReporter {
  repositoryStarted?(name: string, index: number, total: number): void;
  progress?(name: string, progress: BuildProgress): void;
  repositoryFinished?(outcome: RepositoryOutcome): void;
}

export class DataDirectoryLockedError extends Error {
  constructor(dataDir: string) {
    super(`${dataDir} is in use by another trawl process (${LOCK_FILE} is locked)`);
    this.name = 'DataDirectoryLockedError';
  }
}

export interface IndexOptions {
  /** Index only these repositories (by name); the others keep their shards. Default: all. */
  only?: readonly string[];
  /** Runs the addon's shard building, unless the thread is being stopped (worker/index-protocol.ts); default: at once. */
  uninterrupted?: <T>(run: () => T) => T;
  /** In a cluster: the nodes to copy each repository's shards from before building them here. */
  replicas?: ShardSources;
}

/** Indexes the repositories of the config into config.dataDir and returns one outcome per repository indexed. */
export async function runIndex(config: Config, reporter: IndexReporter = {}, options: IndexOptions = {}): Promise<RepositoryOutcome[]> {
  const shards = shardDirectory(config.dataDir);
  fs.mkdirSync(shards, { recursive: true });
  const lock = fs.openSync(path.join(config.dataDir, LOCK_FILE), 'a');
  try {
    if (!native.tryLockExclusive(lock)) throw new DataDirectoryLockedError(config.dataDir);
    const manifest = readManifest(config.dataDir);
    const ids = assignRepositoryIds(
      config.dataDir,
      config.repos.map((repo) => repo.name),
      manifest,
      formerNames(config.repos),
    );
    const symbols = config.index.ctagsCommand ? new SymbolExtractor(config.index) : null;
    const outcomes: RepositoryOutcome[] = [];
    try {
      const repos = options.only ? config.repos.filter((repo) => options.only!.includes(repo.name)) : config.repos;
      for (const [i, repo] of repos.entries()) {
        reporter.repositoryStarted?.(repo.name, i, repos.length);
        const outcome = await indexRepository(config, repo, ids.get(repo.name)!, manifest, shards, symbols, reporter, options);
        outcomes.push(outcome);
        reporter.repositoryFinished?.(outcome);
      }
    } finally {
      await symbols?.close();
    }
    removeUnconfigured(config, manifest);
    removeStrayShards(manifest, config.dataDir, shards);
    return outcomes;
  } finally {
    fs.closeSync(lock); // releases the flock
  }
}

async function indexRepository(
  config: Config,
  repo: RepositoryConfig,
  id: number,
  manifest: Manifest,
  shardDirectory: string,
  symbols: SymbolExtractor | null,
  reporter: IndexReporter,
  options: IndexOptions,
): Promise<RepositoryOutcome> {
  const started = performance.now();
  const previous = manifest.repositories[repo.name];
  const fingerprint = repositoryFingerprint(config, repo);
  try {
    const snapshot = await takeSnapshot(repo);
    const head = { defaultBranch: snapshot.head?.defaultBranch ?? 'HEAD', ...(snapshot.head ? { pushedAt: snapshot.head.committedAt } : {}) };
    // Shards carry the id: ones written under another id (a manifest older than the id file) are rebuilt.
    if (previous?.id === id && isUnchanged(previous, snapshot.branches, fingerprint, shardDirectory)) {
      // In a cluster, shards built before sums were recorded get theirs once they pass the full check, so that
      // replicas can copy them; shards that fail it are built again.
      const sums = config.cluster && !previous.sha256 ? verifiedSums(shardDirectory, previous.shards) : undefined;
      if (sums !== null) {
        // HEAD may name another branch at the same commit: the entry changes, the shards do not.
        if (sums || previous.defaultBranch !== head.defaultBranch || previous.pushedAt !== head.pushedAt)
          publish(manifest, config.dataDir, repo.name, { ...previous, ...head, ...(sums ? { sha256: sums } : {}) });
        return { name: repo.name, status: 'unchanged' };
      }
    }
    const target = { shardDirectory, fileStem: `${fileSlug(repo.name)}.g${manifest.generation + 1}` };
    const notCopied: NotCopied[] = [];
    let result: BuildResult & { sha256?: string[]; from?: string };
    try {
      // A plain directory's "commit" fingerprints this disk's files: only a git repository's shards are copied.
      const replicas = snapshot.head ? (options.replicas?.nodes[repo.name] ?? []) : [];
      const copied =
        replicas.length > 0
          ? await copyShards(
              { repository: repo.name, id, fingerprint: placeFreeFingerprint(config, repo), branches: snapshot.branches },
              replicas,
              options.replicas!.key,
              target,
              notCopied,
            )
          : undefined;
      result = copied ?? (await build(config, repo, id, snapshot, target, symbols, reporter, options.uninterrupted));
    } finally {
      snapshot.close();
    }
    publish(manifest, config.dataDir, repo.name, {
      id,
      shards: result.shards,
      ...(result.sha256 ? { sha256: result.sha256 } : {}),
      branches: snapshot.branches,
      ...head,
      fingerprint,
      state: 'ready',
      indexedAt: new Date().toISOString(),
      warnings: result.warnings,
      documents: result.documents,
      contentBytes: result.contentBytes,
    });
    return {
      name: repo.name,
      status: 'indexed',
      documents: result.documents,
      sourceBytes: result.sourceBytes,
      shardBytes: result.shardBytes,
      seconds: (performance.now() - started) / 1000,
      warnings: result.warnings,
      ...(result.from ? { copiedFrom: result.from } : {}),
      ...(notCopied.length > 0 ? { notCopied } : {}),
    };
  } catch (error) {
    const message = (error as Error).message;
    // Keep serving the last good shards, if any, and say why they are stale.
    publish(manifest, config.dataDir, repo.name, {
      id,
      shards: previous?.shards ?? [],
      branches: previous?.branches ?? [],
      fingerprint: previous?.fingerprint ?? '',
      state: 'error',
      error: message,
      warnings: [],
      documents: previous?.documents ?? 0,
      contentBytes: previous?.contentBytes ?? 0,
      ...(previous?.indexedAt ? { indexedAt: previous.indexedAt } : {}),
      ...(previous?.defaultBranch ? { defaultBranch: previous.defaultBranch } : {}),
      ...(previous?.pushedAt ? { pushedAt: previous.pushedAt } : {}),
    });
    return { name: repo.name, status: 'failed', error: message };
  }
}

/**
 * Replaces (or, given undefined, removes) one repository's entry in a new
 * manifest generation. The shards it no longer names are retired, not
 * deleted: a search planned on the previous generation may still open them.
 */
function publish(manifest: Manifest, dataDir: string, name: string, entry: RepositoryEntry | undefined): void {
  const obsolete = (manifest.repositories[name]?.shards ?? []).filter((shard) => !entry?.shards.includes(shard));
  if (entry) manifest.repositories[name] = entry;
  else delete manifest.repositories[name];
  const at = new Date().toISOString();
  manifest.retired = [...(manifest.retired ?? []), ...obsolete.map((file) => ({ file, at }))];
  manifest.generation++;
  writeManifest(dataDir, manifest);
}

function isUnchanged(entry: RepositoryEntry, branches: { name: string; commit: string }[], fingerprint: string, shardDirectory: string): boolean {
  return (
    entry.state === 'ready' &&
    entry.fingerprint === fingerprint &&
    JSON.stringify(entry.branches) === JSON.stringify(branches) &&
    entry.shards.every((shard) => fs.existsSync(path.join(shardDirectory, shard)))
  );
}

function removeUnconfigured(config: Config, manifest: Manifest): void {
  const configured = new Set(config.repos.map((repo) => repo.name));
  for (const name of Object.keys(manifest.repositories)) {
    if (!configured.has(name)) publish(manifest, config.dataDir, name, undefined);
  }
}

/** How long a retired shard stays on disk: longer than any search runs (the time budget is 10 s by default). */
export const RETIRED_SHARD_GRACE_MS = 60_000;

/**
 * Deletes retired shards past their grace period and files no manifest entry
 * names (leftovers of interrupted builds). Readers that still map a deleted
 * file keep its pages; unlinking only drops the name.
 */
function removeStrayShards(manifest: Manifest, dataDir: string, shardDirectory: string): void {
  const now = Date.now();
  const retired = (manifest.retired ?? []).filter((entry) => now - Date.parse(entry.at) < RETIRED_SHARD_GRACE_MS);
  if (retired.length !== (manifest.retired ?? []).length) {
    manifest.retired = retired;
    writeManifest(dataDir, manifest);
  }
  const keep = new Set([...Object.values(manifest.repositories).flatMap((entry) => entry.shards), ...retired.map((entry) => entry.file)]);
  for (const file of fs.readdirSync(shardDirectory)) {
    if (!keep.has(file)) fs.rmSync(path.join(shardDirectory, file), { force: true });
  }
}

function repositoryMeta(repo: RepositoryConfig, id: number): RepositoryMeta {
  const meta: RepositoryMeta = { id, name: repo.name, codeHostType: repo.codeHostType, public: repo.public, archived: repo.archived, fork: repo.fork };
  if (repo.displayName !== undefined) meta.displayName = repo.displayName;
  if (repo.webUrl !== undefined) meta.webUrl = repo.webUrl;
  return meta;
}

/** The repository's shards built here from `snapshot`, with the snapshot's warnings; in a cluster, with their sha256 for replicas to copy them. */
async function build(
  config: Config,
  repo: RepositoryConfig,
  id: number,
  snapshot: Snapshot,
  target: { shardDirectory: string; fileStem: string },
  symbols: SymbolExtractor | null,
  reporter: IndexReporter,
  uninterrupted: IndexOptions['uninterrupted'],
): Promise<BuildResult & { sha256?: string[] }> {
  const result = await buildShards({
    repository: repositoryMeta(repo, id),
    snapshot,
    ...target,
    index: config.index,
    symbols,
    onProgress: (progress) => reporter.progress?.(repo.name, progress),
    ...(uninterrupted ? { uninterrupted } : {}),
  });
  const warnings = [...snapshot.warnings, ...result.warnings];
  if (!config.cluster) return { ...result, warnings };
  return { ...result, warnings, sha256: result.shards.map((shard) => sha256Of(path.join(target.shardDirectory, shard))) };
}

/** A file-name-safe, collision-free stem for a repository name. */
function fileSlug(name: string): string {
  const readable = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `${readable}-${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}
