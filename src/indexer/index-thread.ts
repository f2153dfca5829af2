/**
 * The worker-thread entry of live indexing: runs index passes for the
 * scheduler, one at a time, off the front end's thread. Messages are typed
 * in index-protocol.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/config.js';
import type { IndexReply, IndexRequest } from './index-protocol.js';
import { runIndex } from './run-index.js';

const config = workerData as Config;
const port = parentPort!;

port.on('message', (request: IndexRequest) => {
  const reply = (message: IndexReply) => port.postMessage(message);
  const options = request.only ? { only: request.only } : {};
  runIndex(config, { repositoryStarted: (name) => reply({ type: 'started', name }) }, options).then(
    (outcomes) => reply({ type: 'done', outcomes }),
    (error: unknown) => reply({ type: 'failed', error: (error as Error).message }),
  );
});
