/**
 * A search across the cluster: the caller's visible repositories grouped by partition, each partition asked of one
 * node serving it (this one's own through its pool), a node that fails replaced by another serving its
 * partitions, and the ranked answers merged as one node's answer is cut (api/ranked-files.ts). Partitions no live
 * node serves are reported, never waited for (docs/cluster.md, "Search").
 */
import type { RepositoryConfig } from '../config/config.js';
import type { SearchRequest, SearchResponse } from '../api/types.js';
import { compareFiles, matchRangesOf, withinRanges } from '../api/ranked-files.js';
import type { Logger } from '../obs/logger.js';
import type { QueryNode } from '../query/ast.js';
import { resultTypeOf } from '../query/plan.js';
import type { SearchCall, SearchPool } from '../search/pool.js';
import { accumulateStats, emptyStats } from '../search/response/stats.js';
import type { Member } from './membership.js';
import type { PeerSearch } from './peer-search.js';
import type { ClusterNode } from './node.js';

/** The header a node presents its cluster key in. */
export const CLUSTER_KEY_HEADER = 'x-trawl-cluster-key';
/** A peer waits this much longer than the search's time budget before it is given up. */
const PEER_GRACE_MS = 2_000;

export interface ClusterAnswer {
  response: SearchResponse;
  /** Partitions holding visible repositories that no live node served: the answer lacks them. */
  missing: number[];
}

export interface ClusterSearchOptions {
  node: ClusterNode;
  pool: SearchPool;
  logger: Logger;
  /** This node's repository ids, by name: a peer's answer is told in them. */
  repositoryIds: ReadonlyMap<string, number>;
  /** The search time budget now (a reload may change it). */
  timeBudgetMs: () => number;
}

export class ClusterSearch {
  private readonly node: ClusterNode;
  private readonly pool: SearchPool;

  constructor(private readonly options: ClusterSearchOptions) {
    this.node = options.node;
    this.pool = options.pool;
  }

  /** `query` (planned from `request`) over the repositories of `repositories` the call may see, wherever they are served. */
  async search(query: QueryNode, request: SearchRequest, call: SearchCall, repositories: readonly RepositoryConfig[]): Promise<ClusterAnswer> {
    const started = performance.now();
    const ranked: SearchRequest = { ...request, ranked: true };
    const visible = new Map<number, string[]>();
    for (const repository of repositories) {
      if (!call.visible(repository)) continue;
      const partition = this.node.partitionOf(repository.name);
      visible.set(partition, [...(visible.get(partition) ?? []), repository.name]);
    }
    const answers: SearchResponse[] = [];
    const missing: number[] = [];
    const failed = new Set<string>();
    for (let pending = [...visible.keys()]; pending.length > 0;) {
      const routes = this.node.route(pending, failed);
      missing.push(...routes.missing);
      pending = [];
      const asked: Promise<void>[] = [];
      if (routes.local.length > 0) {
        const local = new Set(routes.local);
        const localCall = { ...call, visible: (repository: RepositoryConfig) => call.visible(repository) && local.has(this.node.partitionOf(repository.name)) };
        asked.push(this.pool.search(query, ranked, localCall).then((answer) => void answers.push(answer)));
      }
      for (const [member, partitions] of routes.remote) {
        const peerSearch = { query, request: ranked, partitions, repositories: partitions.flatMap((partition) => visible.get(partition)!) };
        asked.push(
          this.ask(member, peerSearch).then(
            (answer) => void answers.push(inOwnIds(answer, this.options.repositoryIds)),
            (error: unknown) => {
              this.options.logger.warn({ node: member.node, err: error }, 'cluster: a node failed a search; its partitions are asked of another');
              failed.add(member.node);
              pending.push(...partitions);
            },
          ),
        );
      }
      await Promise.all(asked);
    }
    const countsFiles = resultTypeOf(query) !== undefined;
    const response = mergeRanked(answers, request, countsFiles, missing.length === 0);
    response.stats.duration = Math.round((performance.now() - started) * 1e6);
    response.stats.crashes += missing.length; // a partition unanswered counts as a failing shard does
    return { response, missing: missing.sort((a, b) => a - b) };
  }

  /** A peer's answer to `search`; rejects when it does not answer in time, or not with an answer (409: it no longer serves a partition). */
  private async ask(member: Member, search: PeerSearch): Promise<SearchResponse> {
    const response = await fetch(`${member.url}/api/cluster/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CLUSTER_KEY_HEADER]: this.node.peerKey },
      body: JSON.stringify(search),
      signal: AbortSignal.timeout(this.options.timeBudgetMs() + PEER_GRACE_MS),
    });
    if (!response.ok) throw new Error(`${member.node} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return (await response.json()) as SearchResponse;
  }
}

/** A peer's `answer` with the repository ids this node gave (those it gave none keep the peer's). */
function inOwnIds(answer: SearchResponse, ids: ReadonlyMap<string, number>): SearchResponse {
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
