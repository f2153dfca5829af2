/**
 * This daemon as one node of a cluster: its membership, the partitions it holds (placement.ts) and tells the
 * indexer about, the partitions it serves (tells the other nodes), and which node answers each partition a
 * search needs (docs/cluster.md).
 */
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { ClusterConfig, RepositoryConfig } from '../config/config.js';
import type { Logger } from '../obs/logger.js';
import { openEtcd, readClusterKey, unreachable, type EtcdKeys } from './etcd.js';
import { Membership, type Member } from './membership.js';
import { heldBy, partitionOf, placeMembers } from './placement.js';
import { sharedRepositoryIds } from './repository-ids.js';
import { askPeer, openPeer, postedJson } from './peer-client.js';

export interface ClusterNodeOptions {
  config: ClusterConfig;
  logger: Logger;
  /**
   * The held partitions changed, or etcd answered after a start without it: the indexer is to index the repositories
   * of `held` (and no others), those given the cluster's id meanwhile too.
   */
  onHeld: (held: readonly number[]) => void;
  /**
   * The partitions this node held when it last knew its cluster (last-known.ts), or null (read only when etcd cannot be
   * reached: with them the node starts, and holds them until etcd answers).
   */
  lastHeld: () => number[] | null;
}

/** Which node answers which partitions of a search, and the partitions no live node serves. */
export interface Routes {
  /** This node's partitions. */
  local: number[];
  remote: Map<Member, number[]>;
  missing: number[];
}

export class ClusterNode {
  private held: number[] = [];
  /** Counts the changes of `held`: who read it can tell whether it changed since. */
  heldVersion = 0;
  private serving: number[] = [];
  /** The bytes of each partition of `serving`, in its order. */
  private servingBytes: number[] = [];
  /** Spreads the partitions served by several nodes over them, search by search. */
  private turn = 0;
  private live: Member[] = [];
  private readonly partitions = new Map<string, number>();
  private membership: Membership | undefined;
  /** True from a start without etcd until the members are first read: this node is alone, on what it last knew. */
  private waiting = false;

  private constructor(
    readonly config: ClusterConfig,
    private readonly key: Buffer,
    private readonly etcd: EtcdKeys,
    private readonly logger: Logger,
    private readonly onHeld: (held: readonly number[]) => void,
  ) {}

  /**
   * Watches the cluster's members (the node joins with `join`); rejects (having closed what it opened) when the key
   * file fails, or etcd does and this node never knew its cluster (`lastHeld`).
   */
  static async start({ config, logger, onHeld, lastHeld }: ClusterNodeOptions): Promise<ClusterNode> {
    const key = readClusterKey(config);
    const etcd = await openEtcd(config);
    const node = new ClusterNode(config, key, etcd, logger, onHeld);
    const changed = (members: Member[]) => node.membersChanged(members);
    try {
      node.membership = await Membership.watch(etcd, config.node, logger, changed);
    } catch (error) {
      let held: number[] | null = null;
      let why = error;
      try {
        held = lastHeld();
      } catch (damaged) {
        why = damaged; // said with the refusal: a damaged record of the partitions held is never read as none
      }
      if (!held) {
        etcd.close();
        throw unreachable(config, why);
      }
      logger.warn({ err: error, held: held.length }, 'cluster: etcd cannot be reached; holding the partitions held before until it answers');
      node.held = held;
      node.waiting = true;
      node.membership = await Membership.watch(etcd, config.node, logger, changed, true);
    }
    return node;
  }

  /** Whether this node started without etcd and has not read the members since. */
  get waitingForEtcd(): boolean {
    return this.waiting;
  }

  /** Joins the cluster as a member answering at `url` (`cluster.advertiseUrl`, else where the daemon listens); once etcd answers, when it did not. */
  async join(url: string): Promise<void> {
    try {
      await this.membership!.join(this.config.advertiseUrl ?? url, this.waitingForEtcd);
    } catch (error) {
      throw unreachable(this.config, error);
    }
  }

  /**
   * The cluster's id of each of `names`, given now to those without one (`local`: this node's own ids, preferred;
   * `renamed`: a renamed repository's former name, whose id it takes: repository-ids.ts).
   */
  repositoryIds(names: readonly string[], local: ReadonlyMap<string, number>, renamed: ReadonlyMap<string, string>): Promise<Map<string, number>> {
    return sharedRepositoryIds(this.etcd, names, local, renamed);
  }

  /** The key this node's peers send (X-Trawl-Cluster-Key), checked in constant time. */
  keyMatches(presented: string): boolean {
    const bytes = Buffer.from(presented);
    return bytes.length === this.key.length && timingSafeEqual(bytes, this.key);
  }

  /** The key to send to a peer. */
  get peerKey(): string {
    return this.key.toString();
  }

  /** The live members other than this node. */
  peers(): Member[] {
    return this.live.filter((member) => member.node !== this.config.node);
  }

  /**
   * `body` POSTed as JSON to `path` of `member`, with the cluster key: its JSON answer. Rejects when it cannot be
   * reached, `signal` aborts, or it answers other than 200.
   */
  async ask<T>(member: Member, path: string, body: unknown, signal: AbortSignal): Promise<T> {
    return JSON.parse((await this.askBytes(member, path, body, signal)).toString()) as T;
  }

  /** Like `ask`, its answer's bytes, not decoded. */
  async askBytes(member: Member, path: string, body: unknown, signal: AbortSignal): Promise<Buffer> {
    const answer = await askPeer(`${member.url}${path}`, postedJson(body, this.peerKey, signal));
    if (answer.status !== 200) throw new Error(`${member.node} answered ${answer.status}: ${answer.body.subarray(0, 200).toString()}`);
    return answer.body;
  }

  /** Like `ask`, its answer (of `contentType`) to be read as it comes; rejects when the answer is another. */
  async askStream(member: Member, path: string, body: unknown, contentType: string, signal: AbortSignal): Promise<http.IncomingMessage> {
    const answer = await openPeer(`${member.url}${path}`, postedJson(body, this.peerKey, signal));
    if (answer.statusCode === 200 && answer.headers['content-type'] === contentType) return answer;
    const { value } = await answer[Symbol.asyncIterator]().next(); // the start of the error, to say why
    answer.destroy();
    throw new Error(`${member.node} answered ${answer.statusCode}: ${String(value ?? '').slice(0, 200)}`);
  }

  /** The partition of `repository` (remembered: a search asks it of every repository the caller may see). */
  partitionOf(repository: string): number {
    let partition = this.partitions.get(repository);
    if (partition === undefined) {
      partition = partitionOf(repository, this.config.partitions);
      this.partitions.set(repository, partition);
    }
    return partition;
  }

  /** Whether this node holds `repository`'s partition: the indexer keeps it. */
  holds(repository: string): boolean {
    return this.held.includes(this.partitionOf(repository));
  }

  /** Whether this node serves `partition`: it answers searches of it. */
  servesPartition(partition: number): boolean {
    return this.serving.includes(partition);
  }

  /** How many members are live, and how many partitions this node holds and serves (its metrics). */
  counts(): { members: number; held: number; serving: number } {
    return { members: this.live.length, held: this.held.length, serving: this.serving.length };
  }

  /**
   * After the index published: serves each held partition whose every repository of `repositories` is indexed, and
   * says the bytes of each. `indexedBytes`: a repository's shards' bytes, undefined when it is not indexed.
   */
  async published(repositories: readonly RepositoryConfig[], indexedBytes: (repository: RepositoryConfig) => number | undefined): Promise<void> {
    const ready = new Map(this.held.map((partition) => [partition, 0]));
    for (const repository of repositories) {
      const partition = this.partitionOf(repository.name);
      const bytes = indexedBytes(repository);
      if (bytes === undefined) ready.delete(partition);
      else if (ready.has(partition)) ready.set(partition, ready.get(partition)! + bytes);
    }
    const serving = [...ready.keys()].sort((a, b) => a - b);
    const servingBytes = serving.map((partition) => ready.get(partition)!);
    if (serving.join() !== this.serving.join() || servingBytes.join() !== this.servingBytes.join()) await this.serve(serving, servingBytes);
  }

  /** Serves `partitions` (of `bytes` each) from now on, and says so to the other nodes (a failure is logged: the next change says it again). */
  private async serve(partitions: number[], bytes: number[]): Promise<void> {
    this.serving = partitions;
    this.servingBytes = bytes;
    try {
      await this.membership?.serve(partitions, bytes);
    } catch (error) {
      this.logger.warn({ err: error }, 'cluster: the partitions served could not be told to etcd');
    }
  }

  /** The other live members serving `repository`'s partition, starting with the next in turn. */
  peersServing(repository: string): Member[] {
    const serving = this.peersOf(this.partitionOf(repository));
    const turn = this.turn++ % Math.max(1, serving.length);
    return [...serving.slice(turn), ...serving.slice(0, turn)];
  }

  /** The live members other than this node, and none of `excluded`, that serve `partition`. */
  private peersOf(partition: number, excluded: ReadonlySet<string> = new Set()): Member[] {
    return this.peers().filter((member) => !excluded.has(member.node) && member.serving.includes(partition));
  }

  /** Which node answers each of `partitions`: this one when it serves it, else a member that does (in turn), else none. */
  route(partitions: Iterable<number>, excluded: ReadonlySet<string> = new Set()): Routes {
    const routes: Routes = { local: [], remote: new Map(), missing: [] };
    const turn = this.turn++;
    for (const partition of partitions) {
      if (this.serving.includes(partition) && !excluded.has(this.config.node)) {
        routes.local.push(partition);
        continue;
      }
      const serving = this.peersOf(partition, excluded);
      if (serving.length === 0) {
        routes.missing.push(partition);
        continue;
      }
      const member = serving[turn % serving.length]!;
      routes.remote.set(member, [...(routes.remote.get(member) ?? []), partition]);
    }
    return routes;
  }

  async close(): Promise<void> {
    await this.membership?.close();
    this.etcd.close();
  }

  private membersChanged(members: Member[]): void {
    this.live = members;
    const reached = this.waiting;
    if (reached) this.logger.info({ members: members.length }, 'cluster: etcd answers; the members are read');
    this.waiting = false;
    const nodes = members.map((member) => member.node);
    if (!nodes.includes(this.config.node)) nodes.push(this.config.node); // its own key may not be seen yet, or be lost for a moment
    const placement = placeMembers(nodes, members, this.config);
    const servedBy = new Map(members.map((member) => [member.node, member.serving] as const));
    const held = heldBy(this.config.node, placement.ownedBy(this.config.node), this.serving, servedBy, (partition) => placement.ownersOf(partition));
    const changed = held.join() !== this.held.join();
    if (!changed && !reached) return;
    this.held = held;
    this.heldVersion++;
    if (changed) this.logger.info({ held: held.length, members: nodes.length }, 'cluster: the partitions held changed');
    const kept = this.serving.flatMap((partition, i) => (held.includes(partition) ? [i] : []));
    if (kept.length < this.serving.length)
      void this.serve(
        kept.map((i) => this.serving[i]!),
        kept.map((i) => this.servingBytes[i]!),
      );
    this.onHeld(held);
  }
}
