/**
 * Worker thread that runs the ctags processes and turns their output into
 * symbol ranges, so their pipes drain while the indexer's thread is busy
 * building shards (a full pipe would stall ctags).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CtagsPool } from '../indexer/ctags.js';
import { symbolsFromTags } from '../index/symbols.js';
import type { SymbolRequest, SymbolResponse, SymbolWorkerOptions } from './symbol-protocol.js';

const options = workerData as SymbolWorkerOptions;
const pool = new CtagsPool(options.ctagsCommand, options.ctagsProcesses);
const port = parentPort!;
const reply = (response: SymbolResponse) => port.postMessage(response);

port.on('message', (request: SymbolRequest) => {
  if (request.type === 'close') {
    void pool.close().then(() => reply({ type: 'closed' }));
    return;
  }
  const content = Buffer.from(request.content.buffer, request.content.byteOffset, request.content.byteLength);
  pool.tags(request.path, content, request.language).then(
    (tags) => {
      const symbols = symbolsFromTags(content, tags);
      port.postMessage({ type: 'symbols', id: request.id, symbols } satisfies SymbolResponse, [symbols.fields.buffer as ArrayBuffer]);
    },
    (error: Error) => reply({ type: 'failed', id: request.id, message: error.message }),
  );
});
