/**
 * The daemon's Prometheus metrics, in a registry of its own (so tests can
 * run several daemons in one process). Gauges that mirror live state read it
 * when scraped.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricsSources {
  searchesInFlight(): number;
  shardsMapped(): number;
  /** Shards of the current generation mapped by the search worker that has mapped the fewest. */
  workerShardsMapped(): number;
  /** Seconds each repository's index is behind the change last seen (0 when current). */
  indexLagSeconds(): Map<string, number>;
  failedSearchTasks(): number;
  /** Shards searches could not read, counted once per search. */
  failedShards(): number;
  renderSlotsInUse(): number;
  /** Search tasks that gave their worker up to another caller's (search/contention.ts). */
  yieldedSearchTasks(): number;
  /** Searches that gave their place in a full queue to another caller's (search/admissions.ts). */
  displacedSearches(): number;
  /** Git reads (blame) waiting for one of the git process slots. */
  gitReadsWaiting(): number;
  /** Running totals of each code host connection's syncs. */
  connectionTotals(): Map<string, { syncs: number; failures: number; fetchFailures: number; bytes: number; seconds: number }>;
  /** In a cluster: its live members, and the partitions this node holds and serves. */
  cluster?(): { members: number; held: number; serving: number };
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'trawl_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: 'trawl_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  /** A search across the cluster's requests to other nodes (cluster/fan-out.ts): answered, failed, or hedged (asked again of another node). */
  readonly peerRequests = new Counter({
    name: 'trawl_cluster_peer_requests_total',
    help: 'Searches this node asked of other nodes of its cluster, by node and outcome: answered, failed, hedged (not answered in time, asked of another node too)',
    labelNames: ['node', 'outcome'],
    registers: [this.registry],
  });
  readonly searchSeconds = new Histogram({
    name: 'trawl_search_duration_seconds',
    help: 'Search latency (planning, workers and response building) by query class',
    labelNames: ['class'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor(sources: MetricsSources) {
    /** A gauge that reads live state when scraped. */
    const mirror = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    mirror('trawl_search_queue_depth', 'Searches in flight', () => sources.searchesInFlight());
    mirror('trawl_shards_loaded', 'Shards mapped by the front end', () => sources.shardsMapped());
    mirror('trawl_worker_shards_loaded', 'Shards of the current generation mapped by the search worker that has mapped the fewest', () =>
      sources.workerShardsMapped(),
    );
    mirror('trawl_git_reads_waiting', 'Git reads (blame) waiting for a git process slot, served caller by caller in turn', () => sources.gitReadsWaiting());
    mirror('trawl_render_slots_in_use', 'Shared-memory slots held by searches in flight and by responses not yet written (0 at rest)', () =>
      sources.renderSlotsInUse(),
    );
    const { cluster } = sources;
    if (cluster) {
      mirror('trawl_cluster_members', "Live members of this node's cluster, as this node sees them", () => cluster().members);
      mirror('trawl_cluster_partitions_held', 'Partitions this node holds: indexes, or keeps until a new owner serves them', () => cluster().held);
      mirror('trawl_cluster_partitions_serving', 'Partitions this node serves to searches', () => cluster().serving);
    }
    new Gauge({
      name: 'trawl_index_lag_seconds',
      help: 'How far each repository index is behind its last seen change',
      labelNames: ['repo'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [repo, seconds] of sources.indexLagSeconds()) this.set({ repo }, seconds);
      },
    });
    /** A counter that reads a running total when scraped. */
    const total = (name: string, help: string, read: () => number) => {
      let counted = 0;
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          const now = read();
          this.inc(now - counted);
          counted = now;
        },
      });
    };
    total('trawl_worker_crashes_total', 'Search tasks that failed in a worker', () => sources.failedSearchTasks());
    total(
      'trawl_search_tasks_yielded_total',
      "Search tasks that gave their worker up to another caller's, the rest of their shards queued as a task of their own",
      () => sources.yieldedSearchTasks(),
    );
    total('trawl_searches_displaced_total', "Searches that gave their place in a full queue to another caller's (503 for them)", () =>
      sources.displacedSearches(),
    );
    /** A counter per connection that reads the syncer's running totals when scraped. */
    const perConnection = (
      name: string,
      help: string,
      read: (totals: ReturnType<MetricsSources['connectionTotals']> extends Map<string, infer T> ? T : never) => number,
    ) => {
      const counted = new Map<string, number>();
      new Counter({
        name,
        help,
        labelNames: ['connection'],
        registers: [this.registry],
        collect() {
          for (const [connection, totals] of sources.connectionTotals()) {
            const now = read(totals);
            this.inc({ connection }, now - (counted.get(connection) ?? 0));
            counted.set(connection, now);
          }
        },
      });
    };
    perConnection('trawl_connection_syncs_total', 'Syncs of each code host connection (a listing and a fetch of every repository)', (totals) => totals.syncs);
    perConnection(
      'trawl_connection_sync_failures_total',
      "Syncs whose listing of the host's repositories failed (the repositories were kept as they were)",
      (totals) => totals.failures,
    );
    perConnection(
      'trawl_connection_fetch_failures_total',
      'Repository fetches that failed (the mirror kept its last good state)',
      (totals) => totals.fetchFailures,
    );
    perConnection('trawl_connection_fetched_bytes_total', "Bytes the connection's mirrors grew by through fetches", (totals) => totals.bytes);
    perConnection('trawl_connection_sync_seconds_total', "Time spent in the connection's syncs", (totals) => totals.seconds);
    total(
      'trawl_shard_failures_total',
      'Shards a search could not read (corrupt, missing, or changed under its mapping), once per search: their results are missing from it',
      () => sources.failedShards(),
    );
  }

  /** The exposition text, with the per-repository series of only the repositories `visible` names. */
  async text(visible: (repository: string) => boolean): Promise<string> {
    const text = await this.registry.metrics();
    return text
      .split('\n')
      .filter((line) => {
        const repository = REPOSITORY_LABEL.exec(line)?.[1];
        return repository === undefined || visible(unescapeLabel(repository));
      })
      .join('\n');
  }
}

/** A sample line with a `repo` label (the only label that names repositories). */
const REPOSITORY_LABEL = /^[a-z_]+\{(?:[a-z_]+="(?:[^"\\]|\\.)*",)*repo="((?:[^"\\]|\\.)*)"/;

/** A label value as the exposition format escapes it (\\, \", \n). */
function unescapeLabel(value: string): string {
  return value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
}
