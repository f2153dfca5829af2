/**
 * The answers of a search's nodes made one, as one node's would be (docs/cluster.md, "Search"): their files and ranks
 * merged as views of their bytes (`mergeFiles`), or, for `type:` queries and answers as objects, decoded and
 * merged (`mergeRanked`).
 */
import type { SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import { compareFiles, matchRangesOf, withinRanges } from '../api/ranked-files.js';
import { responsePieces } from '../search/response/build.js';
import { mergeRenderedFiles, redraftJson, type FilesPart, type Redraft, type Redrafted } from '../search/response/rendered-files.js';
import { accumulateStats, emptyStats } from '../search/response/stats.js';

/** A node's files to merge with the others' (fan-out.ts `Search.files`); this node's own with how to draft their files again from their matches. */
export interface NodeFiles {
  parts: FilesPart[];
  redraft?: Redraft;
}

/** A ClusterAnswer as JSON (in pieces), with its stats. */
export interface ClusterJson {
  json: readonly Uint8Array[];
  stats: SearchStats;
  missing: number[];
}

/** The nodes' files (answered with `files`) merged by rank and cut as one node's workers' are (rendered-files.ts); `missing`: the partitions none answered. */
export function mergeFiles(request: SearchRequest, answers: readonly NodeFiles[], missing: number[], started: number): ClusterJson {
  const parts: FilesPart[] = [];
  const redrafts: ((file: number, budget: number) => Redrafted)[] = [];
  for (const answer of answers) {
    answer.parts.forEach((part, index) => {
      parts.push(part);
      // From the file's match where this node has it, else (a peer's file, or a shard gone meanwhile) from its JSON.
      redrafts.push((file, budget) => answer.redraft?.(index, file, budget) ?? redraftJson(part, file, budget));
    });
  }
  const merged = mergeRenderedFiles(parts, request, (part, file, budget) => redrafts[part]!(file, budget))!; // every file can be drafted again
  const { stats } = merged;
  const isSearchExhaustive = settleAcross(stats, merged.isSearchExhaustive, missing, started);
  const json = responsePieces({ stats, files: merged.files, repositoryInfo: merged.repositoryInfo, isSearchExhaustive });
  return { json, stats, missing: missing.sort((a, b) => a - b) };
}

/**
 * `stats` of an answer across the cluster that began at `started` and lacks the partitions `missing`, each counted
 * as a failing shard is: its duration, its crashes, and its flush reason when it is not exhaustive. Whether it is:
 * `exhaustive` (its nodes' answers were) and none missing.
 */
export function settleAcross(stats: SearchStats, exhaustive: boolean, missing: readonly number[], started: number): boolean {
  stats.duration = Math.round((performance.now() - started) * 1e6);
  stats.crashes += missing.length;
  const isSearchExhaustive = exhaustive && missing.length === 0;
  if (!isSearchExhaustive && stats.flushReason === 'FLUSH_REASON_FINAL_FLUSH') stats.flushReason = 'FLUSH_REASON_MAX_SIZE';
  return isSearchExhaustive;
}

const STATS_OPENING = Buffer.from('{"stats":{');

/** The stats of a SearchResponse's JSON as trawl writes it, stats first (search/response/build.ts `responseOpening`): undefined when it is not. */
export function statsOf(json: Buffer): SearchStats | undefined {
  if (!json.subarray(0, STATS_OPENING.length).equals(STATS_OPENING)) return undefined;
  const end = json.indexOf('}', STATS_OPENING.length); // the stats are numbers and one name: no brace inside
  return end < 0 ? undefined : (JSON.parse(json.subarray(STATS_OPENING.length - 1, end + 1).toString()) as SearchStats);
}

/** A peer's `answer` with the repository ids this node gave (those it gave none keep the peer's). */
export function inOwnIds(answer: SearchResponse, ids: ReadonlyMap<string, number>): SearchResponse {
  for (const file of answer.files) file.repositoryId = ids.get(file.repository) ?? file.repositoryId;
  for (const info of answer.repositoryInfo) info.id = ids.get(info.name) ?? info.id;
  return answer;
}

/**
 * One answer from the nodes' ranked answers: their files ranked together and cut at `matches` (results: match
 * ranges, or files when `countsFiles`), their stats summed; exhaustive when each was, nothing was cut, and
 * `complete` (every partition answered). Scores are kept only when the request was `ranked`.
 */
export function mergeRanked(answers: readonly SearchResponse[], request: SearchRequest, countsFiles: boolean, complete: boolean): SearchResponse {
  const ranked = answers.flatMap((answer) => answer.files).sort(compareFiles);
  const files = [];
  let taken = 0;
  let found = 0;
  let rangesKept = 0;
  for (const file of ranked) {
    const ranges = matchRangesOf(file);
    const counted = countsFiles ? 1 : ranges;
    found += counted;
    if (taken >= request.matches) continue;
    const left = request.matches - taken;
    const kept = counted > left ? withinRanges(file, left) : file;
    if (!request.ranked) delete kept.score;
    files.push(kept);
    taken += Math.min(counted, left);
    rangesKept += countsFiles ? ranges : Math.min(ranges, left);
  }
  const stats = emptyStats();
  for (const answer of answers) accumulateStats(stats, answer.stats);
  stats.actualMatchCount = rangesKept;
  const isSearchExhaustive = complete && found <= request.matches && answers.every((answer) => answer.isSearchExhaustive);
  if (!isSearchExhaustive && stats.flushReason === 'FLUSH_REASON_FINAL_FLUSH') stats.flushReason = 'FLUSH_REASON_MAX_SIZE';
  // The repositories of the files kept, in the order their first file comes, as one node lists them.
  const known = new Map(answers.flatMap((answer) => answer.repositoryInfo.map((info) => [info.name, info] as const)));
  const repositoryInfo = new Map(files.flatMap((file) => (known.has(file.repository) ? [[file.repository, known.get(file.repository)!] as const] : [])));
  return { files, repositoryInfo: [...repositoryInfo.values()], stats, isSearchExhaustive };
}
