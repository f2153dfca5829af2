/**
 * Whether the credentials a node of a cluster applied are current (docs/cluster.md, "Freshness"): every BEAT_MS it
 * asks etcd for the log's head and, once it has applied that far, counts its state current for FRESH_MS from when
 * it asked. A request that finds it stale (the node was paused, say) asks first; a node that cannot reach etcd
 * serves with what it has.
 */
import type { EtcdKeys } from '../cluster/etcd.js';
import { headRevision } from './etcd-log.js';

const BEAT_MS = 500;
const FRESH_MS = 1_500;
const BEAT_CALL_MS = 1_000;

export class Freshness {
  /** Until when the state applied here is known to be current. */
  private freshUntil = 0;
  private beating: Promise<void> | null = null;
  /** Whether the last beat failed to reach etcd: then requests are served with what the node has. */
  private cutOff = false;
  private readonly beats: NodeJS.Timeout;

  /** `reached`: whether the node applied the log through a revision within a time. */
  constructor(
    private readonly etcd: EtcdKeys,
    private readonly reached: (revision: number, timeoutMs: number) => Promise<boolean>,
  ) {
    this.beats = setInterval(() => void this.beat(), BEAT_MS).unref();
  }

  /** Resolves once the state is known current (at once while it is, unless `latest`), or etcd could not say. */
  async current(latest: boolean): Promise<void> {
    if (this.cutOff || (!latest && Date.now() < this.freshUntil)) return;
    // A beat in flight may have asked before this request came (before a pause, say): one asked after it counts.
    await (this.beating?.then(() => this.beat()) ?? this.beat());
  }

  async stop(): Promise<void> {
    clearInterval(this.beats);
    await this.beating;
  }

  /** Asks etcd for the log's head and waits (briefly) to have applied it: then the state is current as of the asking. */
  private beat(): Promise<void> {
    this.beating ??= (async () => {
      const askedAt = Date.now();
      try {
        const head = await headRevision(this.etcd, askedAt + BEAT_CALL_MS);
        this.cutOff = false;
        if (await this.reached(head, BEAT_CALL_MS)) this.freshUntil = askedAt + FRESH_MS;
      } catch {
        this.cutOff = true;
      }
    })().finally(() => (this.beating = null));
    return this.beating;
  }
}
