/**
 * Per-credential rate limiting: a token bucket per caller (an API key or a
 * scoped token by its id; anonymous callers by their address) refilled at
 * `perSecond`, holding up to twice that (a burst). A caller over it gets 429
 * RATE_LIMITED with Retry-After; failed authentications count against their
 * address, so guessing keys is slowed too. Failed authentications also have
 * a budget of their own per address, on by default (FAILED_AUTHENTICATIONS):
 * past it a request that carries a credential is refused before it is
 * checked or audited.
 */
import { ApiError } from '../api/errors.js';
import { credentialRecord } from '../auth/model.js';
import type { Caller } from './access.js';
import { addressKey } from './client-address.js';
import type { Request } from './http.js';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Buckets past this count are swept of the full ones (callers idle long enough to have refilled). */
const SWEEP_AT = 10_000;

/** Failed authentications one address may make: one a second, in bursts of ten. */
export const FAILED_AUTHENTICATIONS = { perSecond: 1, burst: 10 } as const;

/** Who a request is from, as a key: its credential (kind and id), or its address's (client-address.ts) when it has none (or a failed one). */
export function callerKey(caller: Caller | null, request: Request): string {
  const credential = caller?.credential;
  return credential ? `${credential.kind}:${credentialRecord(credential).id}` : addressKey(request.remoteAddress);
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly capacity = perSecond * 2,
    private readonly what = 'requests per second from this credential',
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Takes one request's token for `caller` (null: a request whose credential
   * failed, counted against its address), or throws RATE_LIMITED saying when
   * to retry.
   */
  take(caller: Caller | null, request: Request): void {
    this.takeFor(callerKey(caller, request));
  }

  /** Takes a token of `key`'s bucket, or throws RATE_LIMITED. */
  takeFor(key: string): void {
    const bucket = this.refilled(key);
    bucket.tokens -= 1;
  }

  /** Throws RATE_LIMITED when `key`'s bucket is empty; takes nothing. */
  checkFor(key: string): void {
    this.refilled(key);
  }

  /** Whether `key`'s bucket has a token left; takes nothing. */
  allows(key: string): boolean {
    return this.bucket(key).tokens >= 1;
  }

  /** Takes a token of `key`'s bucket whether or not one is left (an event that already happened: a failure). */
  spend(key: string): void {
    const bucket = this.bucket(key);
    bucket.tokens = Math.max(-this.capacity, bucket.tokens - 1);
  }

  /** Whether `key` has spent tokens it has not got back yet. */
  hasSpent(key: string): boolean {
    return this.buckets.has(key) && this.bucket(key).tokens < this.capacity;
  }

  /** Forgets `key`: its bucket is full again. */
  forget(key: string): void {
    this.buckets.delete(key);
  }

  private refilled(key: string): Bucket {
    const bucket = this.bucket(key);
    if (bucket.tokens < 1) {
      const retryAfter = Math.ceil((1 - bucket.tokens) / this.perSecond);
      throw new ApiError('RATE_LIMITED', `more than ${+this.perSecond.toPrecision(2)} ${this.what}; retry in ${retryAfter} s`, {
        'Retry-After': String(retryAfter),
      });
    }
    return bucket;
  }

  /** `key`'s bucket, refilled for the time since it was last used. */
  private bucket(key: string): Bucket {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, updatedAt: now };
    bucket.tokens = Math.min(this.capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond);
    bucket.updatedAt = now;
    if (this.buckets.size >= SWEEP_AT) this.sweep(now);
    this.buckets.set(key, bucket);
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.perSecond >= this.capacity) this.buckets.delete(key);
    }
  }
}
