/** Messages between the indexer and its symbol worker (symbol-thread.ts). */
import type { PackedSymbols } from '../index/model.js';

export interface SymbolWorkerOptions {
  ctagsCommand: string;
  ctagsProcesses: number;
}

export type SymbolRequest =
  | { type: 'tag'; id: number; path: string; language: string; content: Uint8Array }
  | { type: 'close' };

export type SymbolResponse =
  | { type: 'symbols'; id: number; symbols: PackedSymbols }
  | { type: 'failed'; id: number; message: string }
  | { type: 'closed' };
