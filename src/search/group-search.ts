/**
 * A search task's shard group evaluated on the calling thread with the shards it has mapped: by a search worker,
 * and by the front end for a search it runs itself (docs/design.md, "Workers"). A shard that cannot be opened is
 * counted in `crashes` by the task that tried it.
 */
import type { Shard } from '../index/shard-reader.js';
import type { SearchTask, ShardsOutcome } from '../worker/search-protocol.js';
import { searchShards } from './shard/evaluate.js';
import type { TaskSlice } from './shard/shard-search.js';
import type { ShardCache } from './shard-cache.js';

export interface GroupSearch {
  /** Its matches index `shards`; its `resume` indexes the task's shard files. */
  outcome: ShardsOutcome;
  /** The shards opened, in order. */
  shards: Shard[];
  /** Each of `shards` as an index into the task's shard files. */
  fileIndex: number[];
}

/** `task` evaluated over the shards of `cache` (mapped on first use) until `slice` is over. */
export function searchGroup(task: SearchTask, cache: ShardCache, slice: TaskSlice): GroupSearch {
  cache.advance(task.generation);
  const shards: Shard[] = [];
  const fileIndex: number[] = [];
  const unopened: number[] = [];
  task.shardFiles.forEach((file, index) => {
    try {
      shards.push(cache.get(file));
      fileIndex.push(index);
    } catch {
      unopened.push(index);
    }
  });
  const deadline = task.deadlineEpochMs - performance.timeOrigin;
  const resume = fileIndex[0] === 0 ? task.resume : undefined;
  const outcome = searchShards(task.query, shards, task.contexts, { wanted: task.wanted, deadline, signal: task.signal, resume, slice });
  if (outcome.resume) outcome.resume.shard = fileIndex[outcome.resume.shard]!;
  // Counted by the task that tried them: not the resumed one, nor those left to the resuming task.
  const tried = unopened.filter((index) => !(index === 0 && task.resume !== undefined) && index < (outcome.resume?.shard ?? Infinity));
  outcome.stats.crashes += tried.length;
  outcome.stats.shardFilesConsidered += tried.length;
  return { outcome, shards, fileIndex };
}

/** The group's outcome with its matches indexing the task's shard files, as a frame has them. */
export function indexedByFile({ outcome, fileIndex }: GroupSearch): ShardsOutcome {
  for (const match of outcome.matches) match.shard = fileIndex[match.shard]!;
  return outcome;
}
