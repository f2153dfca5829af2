/**
 * The worker-thread entry of live indexing: runs index passes for the
 * scheduler, one at a time, off the front end's thread. Messages are typed
 * in index-protocol.ts.
 */
import { parentPort } from 'node:worker_threads';
import type { IndexReply, IndexRequest } from './index-protocol.js';
import { runIndex } from './run-index.js';

const port = parentPort!;

port.on('message', (request: IndexRequest) => {
  const reply = (message: IndexReply) => port.postMessage(message);
  const options = request.only ? { only: request.only } : {};
  runIndex(request.config, { repositoryStarted: (name) => reply({ type: 'started', name }) }, options).then(
    (outcomes) => reply({ type: 'done', outcomes }),
    (error: unknown) => reply({ type: 'failed', error: (error as Error).message }),
  );
});
