/**
 * Shards opened (mapped) once per thread and kept while their files exist.
 * Every thread that searches or assembles results holds one: the mappings are
 * MAP_SHARED, so all of them share the page cache.
 */
import fs from 'node:fs';
import { Shard } from '../index/shard-reader.js';
import type { EvaluationStats, ScoredMatch } from '../worker/search-protocol.js';
import type { Found } from './response/build.js';

export class ShardCache {
  private readonly shards = new Map<string, Shard>();
  private generation = -1;

  /**
   * The shard in `file`, mapped on first use and again after its mapping faulted. Throws
   * ShardFormatError or the fs error when it cannot be opened.
   */
  get(file: string): Shard {
    let shard = this.shards.get(file);
    if (!shard || shard.faulted) {
      // Bulk checksums were verified when the indexer wrote the file; structure and bounds are checked here.
      shard = Shard.open(file, { verify: 'structure' });
      this.shards.set(file, shard);
    }
    return shard;
  }

  /** The shard in `file` if this thread has mapped it (and its mapping has not faulted); never maps it. */
  mapped(file: string): Shard | undefined {
    const shard = this.shards.get(file);
    return shard && !shard.faulted ? shard : undefined;
  }

  /** Maps the shard in `file` ahead of its use; one that cannot be opened is left to the searches that need it to count as a crash. */
  prefetch(file: string): void {
    try {
      this.get(file);
    } catch {
      // reported by the searches that need it
    }
  }

  /** `matches` with their shards (`shardFiles[match.shard]`) mapped here; those of a shard that cannot be opened are dropped and counted in `stats`. */
  resolve(matches: readonly ScoredMatch[], shardFiles: readonly string[], stats: EvaluationStats): Found[] {
    const found: Found[] = [];
    for (const match of matches) {
      try {
        found.push({ doc: match.doc, content: match.content, path: match.path, shard: this.get(shardFiles[match.shard]!), score: match.score });
      } catch {
        stats.crashes++;
      }
    }
    return found;
  }

  /**
   * Called with the manifest generation of each search: on a new generation,
   * shards whose files were deleted are forgotten (their mappings go with the
   * last reference, so searches still holding them finish unharmed).
   */
  advance(generation: number): void {
    if (generation === this.generation) return;
    this.generation = generation;
    for (const file of this.shards.keys()) if (!fs.existsSync(file)) this.shards.delete(file);
  }

  get size(): number {
    return this.shards.size;
  }
}
