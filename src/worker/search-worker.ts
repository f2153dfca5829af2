/**
 * The Piscina worker entry: searches the shard group of a task with the
 * shards this thread has mapped. A shard that cannot be opened is counted in
 * `crashes`, like a shard that fails mid-search.
 */
import { searchShards } from '../search/engine.js';
import { ShardCache } from '../search/shard-cache.js';
import type { Shard } from '../index/shard-reader.js';
import type { SearchTask, SearchTaskResult } from './protocol.js';

const cache = new ShardCache();

export default function searchTask(task: SearchTask): SearchTaskResult {
  cache.advance(task.generation);
  const shards: Shard[] = [];
  const fileIndex: number[] = [];
  let unopened = 0;
  task.shardFiles.forEach((file, index) => {
    try {
      shards.push(cache.get(file));
      fileIndex.push(index);
    } catch {
      unopened++;
    }
  });
  const deadline = task.deadlineEpochMs - performance.timeOrigin;
  const outcome = searchShards(task.query, shards, task.contexts, { wanted: task.wanted, deadline, signal: task.signal });
  outcome.stats.crashes += unopened;
  outcome.stats.shardFilesConsidered += unopened;
  for (const match of outcome.matches) match.shard = fileIndex[match.shard]!;
  return outcome;
}

/** The watchdog's liveness probe: answered only by a worker that takes tasks. */
export function ping(): true {
  return true;
}
