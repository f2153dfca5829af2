/**
 * The worker-thread entry of live indexing: runs index passes for the
 * scheduler, one at a time, off the front end's thread. Messages are typed
 * in index-protocol.ts.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { INDEX_NICE_INCREMENT, uninterrupted, type IndexReply, type IndexRequest } from './index-protocol.js';
import { runIndex } from '../indexer/run-index.js';

const port = parentPort!;
/** The stop handshake shared with the scheduler (index-protocol.ts). */
const stop = (workerData as { stop: Int32Array }).stop;
// On Linux a priority set with pid 0 is this thread's alone; 19 is the lowest there is.
os.setPriority(0, Math.min(19, os.getPriority(0) + INDEX_NICE_INCREMENT));

port.on('message', (request: IndexRequest) => {
  const reply = (message: IndexReply) => port.postMessage(message);
  const options = {
    ...(request.only ? { only: request.only } : {}),
    ...(request.replicas ? { replicas: request.replicas } : {}),
    uninterrupted: <T>(run: () => T) => uninterrupted(stop, run),
  };
  runIndex(request.config, { repositoryStarted: (name) => reply({ type: 'started', name }) }, options).then(
    (outcomes) => reply({ type: 'done', outcomes }),
    (error: unknown) => reply({ type: 'failed', error: (error as Error).message }),
  );
});
