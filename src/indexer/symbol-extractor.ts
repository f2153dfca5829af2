/**
 * Symbols of documents from universal-ctags, computed in a worker thread
 * (worker/symbol-thread.ts), started by the first document to tag: a pass
 * that finds every repository unchanged starts no thread. One extractor
 * serves a whole indexing pass.
 */
import { Worker } from 'node:worker_threads';
import type { PackedSymbols } from '../index/model.js';
import type { SymbolRequest, SymbolResponse, SymbolWorkerOptions } from '../worker/symbol-protocol.js';
import { threadUrl } from '../worker/thread-url.js';

export class SymbolExtractor {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (symbols: PackedSymbols) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private failure: Error | null = null;
  private onClosed: (() => void) | null = null;

  constructor(private readonly options: SymbolWorkerOptions) {}

  /** ctags definitions of one document. Rejects when ctags fails on it. */
  symbols(path: string, content: Buffer, language: string): Promise<PackedSymbols> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ type: 'tag', id, path, language, content });
    });
  }

  /** Stops the ctags processes and the worker. */
  async close(): Promise<void> {
    if (this.failure || !this.worker) return;
    const closed = new Promise<void>((resolve) => (this.onClosed = resolve));
    this.post({ type: 'close' });
    await closed;
  }

  private post(request: SymbolRequest): void {
    this.started().postMessage(request);
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(threadUrl('symbol-thread'), { workerData: this.options });
    worker.on('message', (response: SymbolResponse) => this.onResponse(response));
    worker.on('error', (error) => this.fail(new Error(`symbol worker failed: ${error.message}`)));
    worker.on('exit', () => {
      this.fail(new Error('symbol worker exited'));
      this.onClosed?.();
    });
    this.worker = worker;
    return worker;
  }

  private onResponse(response: SymbolResponse): void {
    if (response.type === 'closed') {
      void this.worker?.terminate();
      return;
    }
    const waiter = this.pending.get(response.id);
    this.pending.delete(response.id);
    if (response.type === 'symbols') waiter?.resolve(response.symbols);
    else waiter?.reject(new Error(response.message));
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
