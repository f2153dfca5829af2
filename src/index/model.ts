/** Types shared by the shard writer, the shard reader and the indexer. */

import type { CodeHostType } from './code-host.js';

export type { CodeHostType };

/** Repository metadata carried by every shard of the repository (META section). */
export interface RepositoryMeta {
  id: number;
  name: string;
  displayName?: string;
  webUrl?: string;
  codeHostType: CodeHostType;
  public: boolean;
  archived: boolean;
  fork: boolean;
}

/** An indexed branch; its position in the list is its bit in document branch masks. */
export interface IndexedBranch {
  name: string;
  /** Commit id, or a content fingerprint for plain directories. */
  commit: string;
}

export interface ShardMeta {
  repository: RepositoryMeta;
  branches: IndexedBranch[];
  /** Language names; documents refer to them by index. Index 0 is '' (unknown). */
  languages: string[];
  symbolKinds: string[];
  /** Position of this shard among the repository's shards. */
  shardIndex: number;
  documentCount: number;
  /** ISO 8601 time the shard was written. */
  createdAt: string;
}

export interface SymbolParent {
  symbol: string;
  kind: string;
}

/** A ctags definition inside a document; start/end are byte offsets of the name. */
export interface DocumentSymbol {
  start: number;
  end: number;
  kind: string;
  parent?: SymbolParent;
}

/**
 * A document's definitions as the indexer hands them to the shard writer, by start offset: per symbol
 * the shard's symbol record (SYMBOL_RECORD_WORDS numbers: start, end, kind, parent name + 1, parent
 * kind + 1, docs/index-format.md) with names and kinds as indexes into `strings`, 0 for no parent.
 * One typed array crosses from the symbol thread without a copy or an object per symbol.
 */
export interface PackedSymbols {
  fields: Uint32Array;
  strings: string[];
}

export interface DocumentInput {
  /** Repository-relative path with '/' separators. */
  path: string;
  /** The bytes to store, or null for a skipped (binary or oversized) file. */
  content: Buffer | null;
  /** Size of the file before any skipping. */
  originalSize: number;
  /** Linguist language name, '' when unknown. */
  language: string;
  /** Bit i set when the document is on branch i of ShardMeta.branches. */
  branchMask: bigint;
  /** DocumentFlags bits. */
  flags: number;
  /** Definitions sorted by start offset. */
  symbols: PackedSymbols;
}
