/**
 * Builds the shards of one repository from a snapshot: files in static-rank
 * order, read and tagged concurrently, added to shard writers in order, a new
 * shard begun whenever stored content passes the cap.
 */
import path from 'node:path';
import { isUtf8 } from 'node:buffer';
import { ShardWriter } from '../index/shard-writer.js';
import { DocumentFlags, SHARD_FILE_EXTENSION } from '../index/format.js';
import { detectLanguage } from '../language/languages.js';
import { sortByStaticRank } from '../index/rank.js';
import { noSymbols } from '../index/symbols.js';
import type { DocumentInput, RepositoryMeta } from '../index/model.js';
import type { IndexConfig } from '../config/config.js';
import type { SymbolExtractor } from './symbol-extractor.js';
import type { Snapshot, SourceFile } from './source.js';

/** Files read, classified and tagged ahead of the writer: enough to keep ctags busy while a shard is written. */
const READ_AHEAD = 1024;

/** Warnings listed per build; the rest are counted in one last line (they go to the manifest and the log). */
export const MAX_LISTED_WARNINGS = 100;

export interface BuildProgress {
  files: number;
  totalFiles: number;
  bytes: number;
}

export interface BuildResult {
  shards: string[];
  documents: number;
  contentBytes: number;
  /** Bytes read from the repository, stored or not. */
  sourceBytes: number;
  shardBytes: number;
  warnings: string[];
}

export interface BuildOptions {
  repository: RepositoryMeta;
  snapshot: Snapshot;
  shardDirectory: string;
  /** Unique per build: shard file names carry it so a new build never overwrites live shards. */
  fileStem: string;
  index: IndexConfig;
  symbols: SymbolExtractor | null;
  onProgress?: (progress: BuildProgress) => void;
  /** Runs the addon's work on a shard unless the index thread is being stopped (worker/index-protocol.ts); default: at once. */
  uninterrupted?: <T>(run: () => T) => T;
}

export async function buildShards(options: BuildOptions): Promise<BuildResult> {
  const files = sortByStaticRank(await options.snapshot.files());
  const result: BuildResult = { shards: [], documents: 0, contentBytes: 0, sourceBytes: 0, shardBytes: 0, warnings: [] };
  const identity = { repository: options.repository, branches: options.snapshot.branches };
  const uninterrupted = options.uninterrupted ?? (<T>(run: () => T) => run());
  let writer = new ShardWriter({ ...identity, shardIndex: 0 });
  const publish = () => {
    const name = `${options.fileStem}.${result.shards.length}${SHARD_FILE_EXTENSION}`;
    result.shardBytes += uninterrupted(() => writer.write(path.join(options.shardDirectory, name)));
    result.shards.push(name);
  };
  const progress: BuildProgress = { files: 0, totalFiles: files.length, bytes: 0 };
  const warnings = new Warnings(result.warnings);
  for await (const document of inOrder(files, READ_AHEAD, (file) => prepareDocument(file, options, warnings))) {
    progress.files++;
    if (document === null) continue;
    progress.bytes += document.originalSize;
    if (writer.documentCount > 0 && writer.contentBytes + (document.content?.length ?? 0) > options.index.maxShardContentBytes) {
      publish();
      writer = new ShardWriter({ ...identity, shardIndex: result.shards.length });
    }
    uninterrupted(() => writer.add(document));
    result.documents++;
    result.contentBytes += document.content?.length ?? 0;
    options.onProgress?.(progress);
  }
  publish();
  result.sourceBytes = progress.bytes;
  if (warnings.unlisted > 0) result.warnings.push(`${warnings.unlisted} more files not indexed or indexed without symbols`);
  return result;
}

/** A build's warnings: the first MAX_LISTED_WARNINGS in `listed`, the rest counted. */
class Warnings {
  unlisted = 0;
  constructor(readonly listed: string[]) {}

  add(warning: string): void {
    if (this.listed.length < MAX_LISTED_WARNINGS) this.listed.push(warning);
    else this.unlisted++;
  }
}

/** Reads, classifies and tags one file; null (with a warning) when it cannot be read. */
async function prepareDocument(file: SourceFile, options: BuildOptions, warnings: Warnings): Promise<DocumentInput | null> {
  let bytes: Buffer;
  try {
    bytes = await file.read();
  } catch (error) {
    warnings.add(`${file.path}: not indexed, cannot be read (${(error as Error).message})`);
    return null;
  }
  const document: DocumentInput = {
    path: file.path,
    content: null,
    originalSize: bytes.length,
    language: '',
    branchMask: file.branchMask,
    flags: 0,
    symbols: noSymbols(),
  };
  if (bytes.length > options.index.maxFileBytes) {
    document.flags = DocumentFlags.tooLarge;
    document.language = detectLanguage(file.path);
    return document;
  }
  if (bytes.indexOf(0) !== -1) {
    document.flags = DocumentFlags.binary;
    document.language = detectLanguage(file.path);
    return document;
  }
  document.content = bytes;
  document.language = detectLanguage(file.path, bytes.subarray(0, 4096));
  if (!isUtf8(bytes)) document.flags = DocumentFlags.invalidUtf8;
  if (options.symbols && bytes.length > 0) {
    try {
      document.symbols = await options.symbols.symbols(file.path, bytes, document.language);
    } catch (error) {
      warnings.add(`${file.path}: indexed without symbols (${(error as Error).message})`);
    }
  }
  return document;
}

/**
 * Maps items through an async function with at most `concurrency` calls in
 * flight, yielding results in input order.
 */
async function* inOrder<T, R>(items: readonly T[], concurrency: number, map: (item: T) => Promise<R>): AsyncGenerator<R> {
  const inFlight: Promise<R>[] = [];
  let next = 0;
  const start = () => {
    const pending = map(items[next++]!);
    pending.catch(() => {}); // rejections surface in order, at the await below
    inFlight.push(pending);
  };
  while (next < items.length && inFlight.length < concurrency) start();
  while (inFlight.length > 0) {
    const result = await inFlight.shift()!;
    if (next < items.length) start();
    yield result;
  }
}
