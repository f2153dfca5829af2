/**
 * A task's matches in a few typed arrays, handed over to the front end instead of cloned object by
 * object: a split search whose tasks rendered their files needs one match back at most (the file cut
 * at `matches`), all of them only when the files cannot be merged (docs/design.md, "The search path").
 */
import type { PackedMatches, ScoredMatch } from '../worker/search-protocol.js';

export function packMatches(matches: readonly ScoredMatch[]): PackedMatches {
  let words = 0;
  for (const match of matches) words += match.path.length + match.content.length;
  const packed: PackedMatches = {
    docs: new Uint32Array(matches.length),
    shards: new Uint32Array(matches.length),
    scores: new Float64Array(matches.length),
    pathEnds: new Uint32Array(matches.length),
    ends: new Uint32Array(matches.length),
    ranges: new Uint32Array(words),
  };
  let at = 0;
  matches.forEach(({ doc, shard, score, path, content }, index) => {
    packed.docs[index] = doc;
    packed.shards[index] = shard;
    packed.scores[index] = score;
    packed.ranges.set(path, at);
    at += path.length;
    packed.pathEnds[index] = at;
    packed.ranges.set(content, at);
    at += content.length;
    packed.ends[index] = at;
  });
  return packed;
}

/** The memory of `packed`, for the task's answer to hand over. */
export function packedBuffers(packed: PackedMatches): ArrayBuffer[] {
  return [packed.docs, packed.shards, packed.scores, packed.pathEnds, packed.ends, packed.ranges].map((array) => array.buffer as ArrayBuffer);
}

/** Match `index` of `packed`, its shard moved on by `shardOffset`. */
export function unpackMatch(packed: PackedMatches, index: number, shardOffset = 0): ScoredMatch {
  const start = index === 0 ? 0 : packed.ends[index - 1]!;
  const pathEnd = packed.pathEnds[index]!;
  return {
    doc: packed.docs[index]!,
    shard: shardOffset + packed.shards[index]!,
    score: packed.scores[index]!,
    path: Array.from(packed.ranges.subarray(start, pathEnd)),
    content: Array.from(packed.ranges.subarray(pathEnd, packed.ends[index])),
  };
}

/** The match of document `doc` of shard `shard` in `packed`, its shard moved on by `shardOffset`; undefined when it has none. */
export function findPackedMatch(packed: PackedMatches, shard: number, doc: number, shardOffset = 0): ScoredMatch | undefined {
  for (let index = 0; index < packed.docs.length; index++) {
    if (packed.docs[index] === doc && packed.shards[index] === shard) return unpackMatch(packed, index, shardOffset);
  }
  return undefined;
}
