/**
 * Password hashing for sign-in (docs/sessions.md): scrypt (N = 2^15, r = 8,
 * p = 1: 32 MiB and tens of milliseconds, on libuv's thread pool, never the
 * front end's thread), a 16-byte random salt, stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>`; compared in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AUTH_LIMITS } from './limits.js';

const { passwordMinCharacters, passwordMaxBytes } = AUTH_LIMITS;

const COST = { log2N: 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 256 * 2 ** log2N * r + (1 << 20) };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** Why `password` cannot be set, or null when it can. */
export function passwordProblem(password: string): string | null {
  if ([...password].length < passwordMinCharacters) return `a password needs at least ${passwordMinCharacters} characters`;
  if (Buffer.byteLength(password) > passwordMaxBytes) return `a password has at most ${passwordMaxBytes} bytes`;
  return null;
}

/** The stored form of a new password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST.log2N, COST.r, COST.p);
  return `scrypt$${COST.log2N}$${COST.r}$${COST.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A stored hash no password matches, verified against when a sign-in names no account (so both take as long). */
export const UNUSABLE_HASH = `scrypt$${COST.log2N}$${COST.r}$${COST.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_BYTES).toString('base64')}`;

/** Whether `password` is the one `stored` was made from; false for an over-long password or a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const found = FORMAT.exec(stored);
  if (!found || Buffer.byteLength(password) > passwordMaxBytes) return false;
  const [log2N, r, p] = [Number(found[1]), Number(found[2]), Number(found[3])];
  if (log2N > 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(found[5]!, 'base64');
  const actual = await derive(password, Buffer.from(found[4]!, 'base64'), log2N, r, p);
  return expected.length === KEY_BYTES && timingSafeEqual(actual, expected) && stored !== UNUSABLE_HASH;
}
