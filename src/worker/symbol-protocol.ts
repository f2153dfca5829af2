/**
 * Messages between the indexer and its symbol worker (symbol-thread.ts): the files of one turn of the
 * event loop in one message, and the answers finished in one turn in one message back.
 */
import type { PackedSymbols } from '../index/model.js';

export interface SymbolWorkerOptions {
  ctagsCommand: string;
  ctagsProcesses: number;
}

export interface FileToTag {
  id: number;
  path: string;
  language: string;
  content: Uint8Array;
}

/** A file's symbols, or why ctags failed on it. */
export type TagResult = { id: number; symbols: PackedSymbols } | { id: number; failed: string };

export type SymbolRequest = { type: 'tag'; files: FileToTag[] } | { type: 'close' };

export type SymbolResponse = { type: 'tagged'; results: TagResult[] } | { type: 'closed' };
