/**
 * A search across the cluster: the caller's visible repositories grouped by partition, each partition asked of one
 * node serving it (this one's own through its pool), a node that fails replaced by another serving its
 * partitions, and the answers merged as one node's answer is cut (merge.ts). Partitions no live
 * node serves are reported, never waited for (docs/cluster.md, "Search").
 */
import type { RepositoryConfig } from '../config/config.js';
import type { SearchRequest, SearchResponse } from '../api/types.js';
import type { Static } from '@sinclair/typebox';
import type { PeerSearchRequest } from '../api/cluster-schemas.js';
import type { Logger } from '../obs/logger.js';
import type { QueryNode } from '../query/ast.js';
import { resultTypeOf } from '../query/plan.js';
import type { SearchCall, SearchPool } from '../search/pool.js';
import { cancelSearch, createSignal } from '../search/signal.js';
import type { StreamPart, StreamSummary } from '../search/sinks.js';
import { buildsOnFrontEnd } from '../search/response/build.js';
import { accumulateStats, emptyStats } from '../search/response/stats.js';
import type { Member } from './membership.js';
import type { ClusterNode, Routes } from './node.js';
import { inOwnIds, mergeFiles, mergeRanked, settleAcross, statsOf, type ClusterJson, type NodeFiles } from './merge.js';
import { decodeFiles } from './peer-files.js';
import { PEER_PARTS_TYPE, readParts } from './peer-parts.js';

/** The header a node names its caller in when it forwards a read (JSON: actorId, actorType), for the other node's audit trail. */
export const ON_BEHALF_OF_HEADER = 'x-trawl-on-behalf-of';
/** A peer waits this much longer than the search's time budget before it is given up. */
export const PEER_GRACE_MS = 2_000;
/** A peer that has not answered after this long is not waited for alone: the other nodes serving its partitions are asked too. */
const HEDGE_MS = 1_000;

/** What a node asks a peer (api/cluster-schemas.ts), its query planned. */
export type PeerSearch = Omit<Static<typeof PeerSearchRequest>, 'query'> & { query: QueryNode };

/** What a search looks in. */
export interface Scope {
  /** The repositories the caller may see and the query may match, by partition. */
  partitions: ReadonlyMap<number, string[]>;
  /** Whether the caller may see every repository: the peers are not told which it may (api/cluster-schemas.ts). */
  seesAll: boolean;
}

/** One search across the cluster as its parts see it: the planned query, the ranked request, and its scope; `files`: answered as files to merge (peer-files.ts). */
interface Search {
  query: QueryNode;
  request: SearchRequest;
  call: SearchCall;
  scope: Scope;
  files?: boolean;
}

/** An exhaustive search across the cluster: `abandoned` aborts once nobody reads its parts any more; the parts go to `onPart`, the summaries of their sources into `summaries`. */
interface PartsSearch extends Search {
  abandoned: AbortSignal;
  onPart: (part: StreamPart) => void;
  summaries: StreamSummary[];
}

/** A peer's answer as it sent it, decoded only to be merged with another; `ranked` when asked with scores. */
interface PeerJson {
  json: Buffer;
  ranked: boolean;
}

/** What some partitions' nodes answered (this node's as objects, the peers' as they sent them; or each node's files), and the partitions none did. */
interface Covered {
  answers: (SearchResponse | PeerJson | NodeFiles)[];
  missing: number[];
}

export interface ClusterAnswer {
  response: SearchResponse;
  /** Partitions holding visible repositories that no live node served: the answer lacks them. */
  missing: number[];
}

/** How an exhaustive search across the cluster ended: its parts' stats summed, and the partitions its parts lack. */
export interface ClusterParts {
  summary: StreamSummary;
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
  /** Counts each request to another node by its outcome (the metrics). */
  countPeerRequest: (node: string, outcome: 'answered' | 'failed' | 'hedged') => void;
}

export class ClusterSearch {
  private readonly node: ClusterNode;
  private readonly pool: SearchPool;

  constructor(private readonly options: ClusterSearchOptions) {
    this.node = options.node;
    this.pool = options.pool;
  }

  /** The repositories of `repositories` that the caller may see (`canSee`) and the query may match (`mayMatch`), by partition. */
  scope(
    canSee: (repository: RepositoryConfig) => boolean,
    mayMatch: (repository: RepositoryConfig) => boolean,
    repositories: readonly RepositoryConfig[],
  ): Scope {
    const partitions = new Map<number, string[]>();
    let seesAll = true;
    for (const repository of repositories) {
      if (!canSee(repository)) {
        seesAll = false;
        continue;
      }
      if (!mayMatch(repository)) continue;
      const partition = this.node.partitionOf(repository.name);
      const names = partitions.get(partition);
      if (names) names.push(repository.name);
      else partitions.set(partition, [repository.name]);
    }
    return { partitions, seesAll };
  }

  /** Whether this node serves every partition of `scope`: its own search answers alone. */
  servesAll(scope: Scope): boolean {
    for (const partition of scope.partitions.keys()) if (!this.node.servesPartition(partition)) return false;
    return true;
  }

  /** The partitions of `scope` no live node serves now. */
  unserved(scope: Scope): number[] {
    return this.node.route(scope.partitions.keys()).missing;
  }

  /** `query` (planned from `request`) over the repositories of `scope`, wherever they are served. */
  async search(query: QueryNode, request: SearchRequest, call: SearchCall, scope: Scope): Promise<ClusterAnswer> {
    const started = performance.now();
    return this.merged(
      query,
      request,
      await this.cover(this.node.route(scope.partitions.keys()), new Set(), { query, request: ranked(request), call, scope }),
      started,
    );
  }

  /**
   * Like `search`, as JSON. When one other node serves every partition, it is asked the search as it came and its
   * answer is passed on as it sent it, never decoded; otherwise each node answers with its files and their ranks,
   * merged as views of their bytes (peer-files.ts), but for `type:` queries (docs/cluster.md, "Search").
   */
  async searchJson(query: QueryNode, request: SearchRequest, call: SearchCall, scope: Scope): Promise<ClusterJson> {
    const started = performance.now();
    const routes = this.node.route(scope.partitions.keys());
    const alone = routes.local.length === 0 && routes.missing.length === 0 && routes.remote.size === 1;
    // A small answer is decoded at less cost than its files are built for merging (docs/cluster.md, "Search").
    if (!alone && resultTypeOf(query) === undefined && !buildsOnFrontEnd(request, query, request.matches)) {
      const { answers, missing } = await this.cover(routes, new Set(), { query, request, call, scope, files: true });
      return mergeFiles(request, answers as NodeFiles[], missing, started);
    }
    const covered = await this.cover(routes, new Set(), { query, request: alone ? request : ranked(request), call, scope });
    const [only] = covered.answers;
    if (covered.answers.length === 1 && covered.missing.length === 0 && only && 'json' in only && only.ranked === (request.ranked === true)) {
      const stats = statsOf(only.json);
      if (stats) return { json: [only.json], stats, missing: [] };
    }
    const { response, missing } = this.merged(query, request, covered, started);
    return { json: [Buffer.from(JSON.stringify(response))], stats: response.stats, missing };
  }

  /** The answers of `covered` as one (mergeRanked). */
  private merged(query: QueryNode, request: SearchRequest, { answers, missing }: Covered, started: number): ClusterAnswer {
    const decoded = (answers as (SearchResponse | PeerJson)[]).map((answer) =>
      'json' in answer ? inOwnIds(JSON.parse(answer.json.toString()) as SearchResponse, this.options.repositoryIds) : answer,
    );
    const response = mergeRanked(decoded, request, resultTypeOf(query) !== undefined, missing.length === 0);
    response.isSearchExhaustive = settleAcross(response.stats, response.isSearchExhaustive, missing, started);
    return { response, missing: missing.sort((a, b) => a - b) };
  }

  /**
   * The exhaustive `search`: every part of each partition's answer handed to `onPart` as it comes, this node's from
   * its pool, the others' relayed as their nodes sent them, never decoded (peer-parts.ts); a peer's next part is read
   * once `search.call.ready` resolves. A node that has not begun its answer after HEDGE_MS, or fails
   * before its first part, has its partitions asked of another; one that fails later is not asked again: the answer
   * lacks its partitions (docs/cluster.md, "Exhaustive searches").
   */
  async parts(search: Search & { abandoned: AbortSignal }, onPart: (part: StreamPart) => void): Promise<ClusterParts> {
    const started = performance.now();
    const summaries: StreamSummary[] = [];
    const missing = await this.coverParts([...search.scope.partitions.keys()], new Set(), { ...search, onPart, summaries });
    const accumulatedStats = emptyStats();
    for (const summary of summaries) accumulateStats(accumulatedStats, summary.accumulatedStats);
    const isSearchExhaustive = settleAcross(
      accumulatedStats,
      summaries.every((summary) => summary.isSearchExhaustive),
      missing,
      started,
    );
    return { summary: { accumulatedStats, isSearchExhaustive }, missing: missing.sort((a, b) => a - b) };
  }

  /** The parts of `partitions` (this node's, and the peers' serving the others, none of `excluded`); resolves with the partitions no node answered. */
  private async coverParts(partitions: number[], excluded: ReadonlySet<string>, search: PartsSearch): Promise<number[]> {
    const routes = this.node.route(partitions, excluded);
    const parts: Promise<number[]>[] = [];
    if (routes.local.length > 0) {
      // A signal of its own: the pool cancels it as this node's search ends, which must not end the relays.
      const signal = createSignal();
      search.abandoned.addEventListener('abort', () => cancelSearch(signal), { once: true });
      const call = { ...search.call, visible: visibleIn(routes.local, search.scope), signal };
      const own = this.pool.stream(search.query, search.request, call, search.onPart);
      parts.push(
        own.then((summary) => {
          search.summaries.push(summary);
          return [];
        }),
      );
    }
    for (const [member, group] of routes.remote) parts.push(this.relay(member, group, excluded, search));
    return [...routes.missing, ...(await Promise.all(parts)).flat()];
  }

  /** `partitions`' parts from `member`, relayed (see `parts`); resolves with the partitions left unanswered. */
  private async relay(member: Member, partitions: number[], excluded: ReadonlySet<string>, search: PartsSearch): Promise<number[]> {
    const { query, request, call, scope, abandoned, onPart, summaries } = search;
    const repositories = repositoriesIn(partitions, scope);
    const abort = new AbortController();
    const late = setTimeout(() => abort.abort(new Error(`${member.node} had not begun its answer after ${HEDGE_MS} ms`)), HEDGE_MS);
    const signal = AbortSignal.any([abort.signal, abandoned, AbortSignal.timeout(this.options.timeBudgetMs() + PEER_GRACE_MS)]);
    let relayed = false;
    try {
      const answer = await this.node.askStream(member, '/api/cluster/search', { query, request, partitions, repositories }, PEER_PARTS_TYPE, signal);
      clearTimeout(late);
      summaries.push(
        await readParts(answer, async (part) => {
          if (abandoned.aborted) throw new Error('the search was abandoned');
          relayed = true;
          onPart(part);
          await call.ready?.();
        }),
      );
      this.options.countPeerRequest(member.node, 'answered');
      return [];
    } catch (error) {
      clearTimeout(late);
      abort.abort();
      if (abandoned.aborted) return [];
      this.options.countPeerRequest(member.node, 'failed');
      this.options.logger.warn({ node: member.node, err: error }, 'cluster: a node failed an exhaustive search');
      return relayed ? partitions : this.coverParts(partitions, new Set(excluded).add(member.node), search);
    }
  }

  /** Answers for `partitions`: this node's own, and the peers' serving the others (none of `excluded`); the partitions no node answered are missing. */
  private async cover(routes: Routes, excluded: ReadonlySet<string>, search: Search, signal?: AbortSignal): Promise<Covered> {
    const parts: Promise<Covered>[] = [];
    if (routes.local.length > 0) {
      const call = { ...search.call, visible: visibleIn(routes.local, search.scope) };
      const own = search.files ? this.pool.searchFiles(search.query, search.request, call) : this.pool.search(search.query, search.request, call);
      parts.push(own.then((answer) => ({ answers: [answer], missing: [] })));
    }
    for (const [member, group] of routes.remote) parts.push(this.hedged(member, group, excluded, search, signal));
    const covered = await Promise.all(parts);
    return { answers: covered.flatMap((part) => part.answers), missing: [...routes.missing, ...covered.flatMap((part) => part.missing)] };
  }

  /**
   * `partitions` asked of `member`, and asked again of the other nodes serving them when it fails or has not answered
   * after HEDGE_MS (a paused node): the first complete answer is taken and the other request cancelled.
   */
  private hedged(member: Member, partitions: number[], excluded: ReadonlySet<string>, search: Search, signal?: AbortSignal): Promise<Covered> {
    // Controllers are aborted only while their request is in flight: an abort builds a DOMException, a cost on every search.
    const primaryAbort = new AbortController();
    let fallbackAbort: AbortController | undefined;
    let primarySettled = false;
    let fallbackSettled = false;
    const repositories = repositoriesIn(partitions, search.scope);
    const primary = this.node
      .askBytes(
        member,
        '/api/cluster/search',
        { query: search.query, request: search.request, partitions, repositories, files: search.files },
        primaryAbort.signal,
      )
      .then((answer): NodeFiles | PeerJson => (search.files ? { parts: decodeFiles(answer) } : { json: answer, ranked: search.request.ranked === true }));
    const givenUp = () => primaryAbort.abort(new Error(`${member.node} did not answer within the time budget plus ${PEER_GRACE_MS} ms`));
    const timeout = setTimeout(givenUp, this.options.timeBudgetMs() + PEER_GRACE_MS);
    const cancelled = () => finish(undefined);
    signal?.addEventListener('abort', cancelled, { once: true }); // the search that asked is over
    let done = false;
    let resolveCovered!: (covered: Covered) => void;
    let rejectCovered!: (error: unknown) => void;
    const finish = (covered: Covered | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(hedge);
      clearTimeout(timeout);
      signal?.removeEventListener('abort', cancelled);
      if (!primarySettled) primaryAbort.abort();
      if (!fallbackSettled) fallbackAbort?.abort();
      if (covered) resolveCovered(covered);
    };
    let primaryFailed = false;
    let incomplete: Covered | undefined; // the other nodes' answer, lacking partitions the primary may still bring
    const fallBack = () => {
      if (done || fallbackAbort) return;
      fallbackAbort = new AbortController();
      // Ranked: the other nodes' answers may be several, to be merged (files carry their ranks).
      const others = new Set(excluded).add(member.node);
      const rankedSearch = search.files ? search : { ...search, request: ranked(search.request) };
      this.cover(this.node.route(partitions, others), others, rankedSearch, fallbackAbort.signal).then(
        (covered) => {
          fallbackSettled = true;
          if (covered.missing.length === 0 || primaryFailed) finish(covered);
          else incomplete = covered;
        },
        (error: unknown) => {
          fallbackSettled = true;
          rejectCovered(error);
        },
      );
    };
    const hedge = setTimeout(() => {
      if (done) return;
      this.options.countPeerRequest(member.node, 'hedged');
      fallBack();
    }, HEDGE_MS);
    primary.then(
      (answer) => {
        primarySettled = true;
        this.options.countPeerRequest(member.node, 'answered');
        finish({ answers: [answer], missing: [] });
      },
      (error: unknown) => {
        primarySettled = true;
        if (done) return;
        this.options.countPeerRequest(member.node, 'failed');
        primaryFailed = true;
        this.options.logger.warn({ node: member.node, err: error }, 'cluster: a node failed a search; its partitions are asked of another');
        if (incomplete) finish(incomplete);
        else fallBack();
      },
    );
    return new Promise<Covered>((resolve, reject) => {
      resolveCovered = resolve;
      rejectCovered = reject;
    });
  }
}

/** `request` with each file's score: answers to be merged. */
const ranked = (request: SearchRequest): SearchRequest => ({ ...request, ranked: true });

/** Which repositories a search of `partitions` of `scope` on this node looks in. */
function visibleIn(partitions: readonly number[], scope: Scope): (repository: RepositoryConfig) => boolean {
  const names = new Set(partitions.flatMap((partition) => scope.partitions.get(partition)!));
  return (repository) => names.has(repository.name);
}

/** The repositories a peer is told to look in for `partitions` of `scope`: none named when the caller may see all. */
function repositoriesIn(partitions: readonly number[], scope: Scope): string[] | undefined {
  return scope.seesAll ? undefined : partitions.flatMap((partition) => scope.partitions.get(partition)!);
}
