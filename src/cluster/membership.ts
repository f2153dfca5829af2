/**
 * The cluster's live members, as etcd holds them: each node keeps one key under `trawl/members/`, bound to a
 * 3-second lease it keeps alive, whose value says where it answers and which partitions it serves. A node that
 * dies or stops answering loses its lease and its key within the lease's time; every node watches the keys and
 * sees it go (docs/cluster.md, "Membership").
 */
import type { IKeyValue, Lease, Watcher } from 'etcd3';
import type { EtcdKeys } from './etcd.js';
import type { Logger } from '../obs/logger.js';

export const MEMBERS_PREFIX = 'trawl/members/';
/** A member whose node stops keeping its lease alive is gone this long after its last keep-alive. */
export const LEASE_SECONDS = 3;
/** A lost lease is granted again, and a failed watch started again, after this long, until it is. */
const RETRY_MS = 250;

export interface Member {
  node: string;
  /** Where it answers the other nodes. */
  url: string;
  /** The partitions it serves: indexed and searchable. */
  serving: number[];
  /** The bytes of each partition of `serving` (its shard files), in the same order; empty from a node that does not say. */
  bytes: number[];
}

export class Membership {
  private readonly live = new Map<string, Member>();
  private lease: Lease | null = null;
  private watcher: Watcher | null = null;
  private closed = false;

  private readonly self: Member;

  private constructor(
    private readonly etcd: EtcdKeys,
    node: string,
    private readonly logger: Logger,
    private readonly onChange: (members: Member[]) => void,
  ) {
    this.self = { node, url: '', serving: [], bytes: [] };
  }

  /**
   * Starts watching the members (`onChange`: a member came, went or changed); rejects when etcd cannot be reached,
   * unless `keepTrying`: then it watches once etcd answers. `node` joins with `join`.
   */
  static async watch(etcd: EtcdKeys, node: string, logger: Logger, onChange: (members: Member[]) => void, keepTrying = false): Promise<Membership> {
    const membership = new Membership(etcd, node, logger, onChange);
    if (keepTrying) {
      membership.watchAgain();
      return membership;
    }
    try {
      await membership.watchMembers();
    } catch (error) {
      await membership.close();
      throw error;
    }
    return membership;
  }

  /**
   * Registers this node, answering at `url`, as a member; rejects when etcd cannot be reached, unless `keepTrying`:
   * then it registers once etcd answers.
   */
  async join(url: string, keepTrying = false): Promise<void> {
    this.self.url = url;
    if (keepTrying) this.registerAgain();
    else await this.register();
  }

  /** The live members (this node among them while its lease lives), by name. */
  members(): Member[] {
    return [...this.live.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  /**
   * Says that this node serves `partitions`, of `bytes` each (kept in its key, and in the key it registers again
   * after a lost lease).
   */
  async serve(partitions: readonly number[], bytes: readonly number[]): Promise<void> {
    this.self.serving = [...partitions];
    this.self.bytes = [...bytes];
    if (this.lease) await this.lease.put(this.key).value(JSON.stringify(this.self));
  }

  /** Leaves the cluster at once (the lease revoked, the key gone), if etcd answers; otherwise the lease runs out. */
  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.cancel().catch(() => {});
    await this.lease?.revoke().catch(() => {});
    this.lease = null;
  }

  private get key(): string {
    return MEMBERS_PREFIX + this.self.node;
  }

  private async register(): Promise<void> {
    const lease = this.etcd.lease(LEASE_SECONDS, { autoKeepAlive: true });
    lease.on('lost', (error) => {
      if (this.lease !== lease || this.closed) return;
      this.lease = null;
      this.logger.warn({ err: error }, 'cluster: the membership lease was lost; registering again');
      this.registerAgain();
    });
    await lease.put(this.key).value(JSON.stringify(this.self));
    this.lease = lease;
  }

  private registerAgain(): void {
    if (this.closed) return;
    this.register().catch(() => setTimeout(() => this.registerAgain(), RETRY_MS).unref());
  }

  /**
   * The members as of one revision, then every change after it, in order; listed again when the watch fails (its
   * revision compacted away in etcd's history, say).
   */
  private async watchMembers(): Promise<void> {
    const listed = await this.etcd.getAll().prefix(MEMBERS_PREFIX).exec();
    this.live.clear();
    for (const kv of listed.kvs) this.apply(kv, true);
    this.onChange(this.members());
    const watcher = await this.etcd
      .watch()
      .prefix(MEMBERS_PREFIX)
      .startRevision(String(BigInt(listed.header.revision) + 1n))
      .create();
    if (this.closed) return void (await watcher.cancel().catch(() => {}));
    watcher.on('put', (kv) => this.changed(kv, true));
    watcher.on('delete', (kv) => this.changed(kv, false));
    watcher.on('disconnected', (error) => this.logger.warn({ err: error }, 'cluster: the members watch lost etcd; it reconnects'));
    watcher.on('error', (error) => {
      this.logger.warn({ err: error }, 'cluster: the members watch failed; listing the members again');
      if (this.watcher !== watcher) return;
      this.watcher = null;
      this.watchAgain();
    });
    this.watcher = watcher;
  }

  private watchAgain(): void {
    if (this.closed) return;
    this.watchMembers().catch(() => setTimeout(() => this.watchAgain(), RETRY_MS).unref());
  }

  private changed(kv: IKeyValue, present: boolean): void {
    if (this.apply(kv, present)) this.onChange(this.members());
  }

  /** Applies one key's state; whether the members changed. A malformed value is logged and counts as no member. */
  private apply(kv: IKeyValue, present: boolean): boolean {
    const node = kv.key.toString().slice(MEMBERS_PREFIX.length);
    const member = present ? parseMember(node, kv.value.toString()) : undefined;
    if (present && !member) this.logger.warn({ node }, 'cluster: a member key holds no valid member; ignored');
    const before = this.live.get(node);
    if (member) this.live.set(node, member);
    else this.live.delete(node);
    return JSON.stringify(before) !== JSON.stringify(member);
  }
}

/** The member `node` its key's `value` describes; undefined when malformed. */
export function parseMember(node: string, value: string): Member | undefined {
  try {
    const parsed = JSON.parse(value) as Partial<Member>;
    if (typeof parsed.url !== 'string' || !Array.isArray(parsed.serving) || !parsed.serving.every(Number.isInteger)) return undefined;
    const bytes = Array.isArray(parsed.bytes) && parsed.bytes.length === parsed.serving.length && parsed.bytes.every(isSize) ? parsed.bytes : [];
    return { node, url: parsed.url, serving: parsed.serving, bytes };
  } catch {
    return undefined;
  }
}

function isSize(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
