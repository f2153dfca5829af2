/**
 * A search's frames made into one answer, ranked and cut once at `matches`: from the frames' matches
 * (response/build.ts), or from the files their workers rendered, interleaved by rank with those of the frames that
 * came without them, built here (response/rendered-files.ts); or handed to a worker to build as a task of its own.
 * Frames from any source merge alike: a frame's matches index its own shard files, which the merger lays one
 * frame's after the other's.
 */
import type { SearchRequest } from '../api/types.js';
import type { RenderedFiles, RenderMergedTask, RenderSpec, ScoredMatch, ShardsOutcome } from '../worker/search-protocol.js';
import { buildResponse, buildsOnFrontEnd, type Built, type FileSink, type Found } from './response/build.js';
import {
  mergeRenderedFiles,
  redraftFrom,
  renderedFiles,
  type FilesPart,
  type FilesRendered,
  type MatchOf,
  type MergedFiles,
  type Redraft,
} from './response/rendered-files.js';
import { combinedStop } from './response/stats.js';
import { findPackedMatch, unpackMatch } from './packed-matches.js';
import { emptyEvaluationStats } from './shard/evaluate.js';
import type { ShardCache } from './shard-cache.js';
import type { SearchRun } from './search-run.js';
import type { Frame } from './worker-source.js';

export class Merger {
  /** Every frame's matches, their `shard` indexing `shardFiles`. */
  private readonly matches: ScoredMatch[] = [];
  private readonly shardFiles: string[] = [];
  /** Every frame's outcome without its matches. */
  readonly outcomes: Omit<ShardsOutcome, 'matches'>[] = [];
  /** The files of the frames that came rendered, with where their shard files start in `shardFiles`; their matches are not in `matches` until unpacked. */
  private readonly rendered: { files: RenderedFiles; shardOffset: number }[] = [];
  /** The outcomes of the frames that came without rendered files: their matches are `matches` (until rendered ones are unpacked). */
  private readonly unrendered: Omit<ShardsOutcome, 'matches'>[] = [];

  /** `shards`: this thread's mappings, in which the matches are resolved. */
  constructor(
    private readonly run: SearchRun,
    private readonly shards: ShardCache,
  ) {}

  /** Takes a frame (an OnFrame). */
  readonly add = ({ outcome: { matches, ...outcome }, shardFiles, rendered }: Frame): void => {
    if (rendered) this.rendered.push({ files: rendered, shardOffset: this.shardFiles.length });
    for (const match of matches) {
      match.shard += this.shardFiles.length;
      this.matches.push(match);
    }
    for (const file of shardFiles) this.shardFiles.push(file);
    this.outcomes.push(outcome);
    if (!rendered) this.unrendered.push(outcome);
  };

  /**
   * The frames' files merged by rank and cut (rendered-files.ts): as their workers rendered them, with the files of
   * the frames that came without them built here when those are few (`buildsOnFrontEnd`); undefined when no frame
   * came rendered, those files are many, or the file `matches` cuts cannot be drafted again. The matches of
   * rendered frames are unpacked then.
   */
  mergedFiles(scratch: Buffer): MergedFiles | undefined {
    const { request, query } = this.run;
    const unrenderedRanges = this.unrendered.reduce((sum, outcome) => sum + outcome.totalRanges, 0);
    let files: MergedFiles | undefined;
    if (this.rendered.length > 0 && (this.unrendered.length === 0 || buildsOnFrontEnd(request, query, Math.min(unrenderedRanges, request.matches)))) {
      const { parts, redraft } = this.filesParts(scratch);
      files = mergeRenderedFiles(parts, request, redraft);
    }
    if (!files) this.unpackRendered();
    return files;
  }

  /**
   * The frames' files as parts for another node to merge with its own (cluster/fan-out.ts), and how to draft their
   * files again: as their workers rendered them, and the files of the frames that came without them built here as one part.
   */
  filesParts(scratch: Buffer): { parts: FilesPart[]; redraft: Redraft } {
    const parts: FilesPart[] = this.rendered.map((part) => part.files);
    let builtMatches: Found[] = [];
    if (this.unrendered.length > 0) {
      const sink = (): FileSink<FilesRendered> => {
        const files = renderedFiles(undefined, scratch);
        builtMatches = []; // the files of this attempt only (a shard that faulted meanwhile makes buildResponse start again)
        return {
          add: (file, match) => {
            builtMatches.push(match);
            files.add(file, match);
          },
          leftOut: () => files.leftOut?.(),
          result: () => files.result(),
        };
      };
      const { files, stats, repositoryInfo } = this.build(sink, this.run.request, this.unrendered);
      parts.push(Object.assign(files, { stats, repositoryInfo, outcome: { stop: combinedStop(this.unrendered.map((outcome) => outcome.stop)) } }));
    }
    const matchOf: MatchOf = (part, file) => {
      if (part === this.rendered.length) return builtMatches[file];
      const { files, shardOffset } = this.rendered[part]!;
      const match = findPackedMatch(files.packedMatches, files.shards[file]!, files.docs[file]!, shardOffset);
      return match && this.shards.resolve([match], this.shardFiles, emptyEvaluationStats())[0];
    };
    return { parts, redraft: redraftFrom(matchOf, this.run.request, this.run.settings.publicUrl) };
  }

  /** Match ranges found, at most `matches`: what the answer holds at most. */
  rangesWithinMatches(): number {
    return Math.min(
      this.run.request.matches,
      this.outcomes.reduce((sum, outcome) => sum + outcome.totalRanges, 0),
    );
  }

  /** The task a worker builds the answer from (RenderMergedTask), as `render` asks. */
  renderTask(render: RenderSpec): RenderMergedTask {
    return { generation: this.run.generation, shardFiles: this.shardFiles, query: this.run.query, matches: this.matches, outcomes: this.outcomes, render };
  }

  /**
   * The answer built on this thread from `matches`, its files made by `files`; `request` when a part of a stream holds
   * fewer than the search's `matches`; `outcomes` when `matches` are those of some frames only (the unrendered ones).
   * Matches of shards this thread cannot map are counted in the answer's stats.
   */
  build<T>(files: () => FileSink<T>, request: SearchRequest = this.run.request, outcomes = this.outcomes): Built<T> {
    const unmapped = emptyEvaluationStats();
    const found = this.shards.resolve(this.matches, this.shardFiles, unmapped);
    const built = buildResponse(files, request, this.run.query, found, outcomes, this.run.settings.publicUrl, this.run.timings());
    built.stats.crashes += unmapped.crashes;
    return built;
  }

  /** Adds the matches of the frames that came rendered to `matches`, from their packed form. */
  private unpackRendered(): void {
    for (const { files, shardOffset } of this.rendered) {
      for (let index = 0; index < files.packedMatches.docs.length; index++) this.matches.push(unpackMatch(files.packedMatches, index, shardOffset));
    }
    this.rendered.length = 0;
  }
}
