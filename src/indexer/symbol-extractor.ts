/**
 * Symbols of documents from universal-ctags, computed in a worker thread
 * (worker/symbol-thread.ts), started by the first document to tag: a pass
 * that finds every repository unchanged starts no thread. One extractor
 * serves a whole indexing pass.
 */
import { Worker } from 'node:worker_threads';
import type { PackedSymbols } from '../index/model.js';
import type { FileToTag, SymbolRequest, SymbolResponse, SymbolWorkerOptions } from '../worker/symbol-protocol.js';
import { threadUrl } from '../worker/thread-url.js';

export class SymbolExtractor {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (symbols: PackedSymbols) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  /** Files asked for in this turn of the event loop, posted together at its end. */
  private queued: FileToTag[] = [];
  private failure: Error | null = null;
  private onClosed: (() => void) | null = null;

  constructor(private readonly options: SymbolWorkerOptions) {}

  /** ctags definitions of one document. Rejects when ctags fails on it. */
  symbols(path: string, content: Buffer, language: string): Promise<PackedSymbols> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.queued.push({ id, path, language, content }) === 1) setImmediate(() => this.postQueued());
    });
  }

  /** Stops the ctags processes and the worker. */
  async close(): Promise<void> {
    this.postQueued();
    if (this.failure || !this.worker) return;
    const closed = new Promise<void>((resolve) => (this.onClosed = resolve));
    this.post({ type: 'close' });
    await closed;
  }

  private postQueued(): void {
    const files = this.queued;
    this.queued = [];
    if (files.length > 0 && !this.failure) this.post({ type: 'tag', files });
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
    for (const result of response.results) {
      const waiter = this.pending.get(result.id);
      this.pending.delete(result.id);
      if ('symbols' in result) waiter?.resolve(result.symbols);
      else waiter?.reject(new Error(result.failed));
    }
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
