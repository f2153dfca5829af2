/**
 * Worker thread that runs the ctags processes and turns their output into
 * symbol ranges, so their pipes drain while the indexer's thread is busy
 * building shards (a full pipe would stall ctags).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CtagsPool } from '../indexer/ctags.js';
import { symbolsFromTags } from '../index/symbols.js';
import type { FileToTag, SymbolRequest, SymbolResponse, SymbolWorkerOptions, TagResult } from './symbol-protocol.js';

const options = workerData as SymbolWorkerOptions;
const pool = new CtagsPool(options.ctagsCommand, options.ctagsProcesses);
const port = parentPort!;
/** Answers finished in this turn of the event loop, sent together at its end. */
let finished: TagResult[] = [];

port.on('message', (request: SymbolRequest) => {
  if (request.type === 'close') {
    void pool.close().then(() => port.postMessage({ type: 'closed' } satisfies SymbolResponse));
    return;
  }
  for (const file of request.files) tag(file);
});

function tag(file: FileToTag): void {
  const content = Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength);
  pool.tags(file.path, content, file.language).then(
    (tags) => answer({ id: file.id, symbols: symbolsFromTags(content, tags) }),
    (error: Error) => answer({ id: file.id, failed: error.message }),
  );
}

function answer(result: TagResult): void {
  if (finished.push(result) === 1) setImmediate(sendFinished);
}

function sendFinished(): void {
  const results = finished;
  finished = [];
  const transfer = results.flatMap((result) => ('symbols' in result ? [result.symbols.fields.buffer as ArrayBuffer] : []));
  port.postMessage({ type: 'tagged', results } satisfies SymbolResponse, transfer);
}
