/**
 * Credentials as the API hands them out (and session cookies): a prefix and
 * 64 lowercase hex characters (32 random bytes), shown once. Only an HMAC-SHA256 of a secret,
 * keyed by this instance's key (`instance.key` in the state directory, mode
 * 0600), is ever stored; comparisons are constant-time.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export type SecretKind = 'apiKey' | 'scopedToken' | 'session' | 'oauthAccess' | 'oauthRefresh';

const PREFIX: Record<SecretKind, string> = {
  apiKey: 'trawl_ak_',
  scopedToken: 'trawl_st_',
  session: 'trawl_ss_',
  oauthAccess: 'trawl_oa_',
  oauthRefresh: 'trawl_or_',
};
const KIND_BY_TAG: Record<string, SecretKind> = { ak: 'apiKey', st: 'scopedToken', ss: 'session', oa: 'oauthAccess', or: 'oauthRefresh' };
const SECRET_PATTERN = /^trawl_(ak|st|ss|oa|or)_[0-9a-f]{64}$/;
const INSTANCE_KEY_FILE = 'instance.key';
const INSTANCE_KEY_BYTES = 32;

/** A new secret of `kind`. */
export function newSecret(kind: SecretKind): string {
  return PREFIX[kind] + randomBytes(32).toString('hex');
}

/** The kind of a well-formed secret, or null (wrong prefix, length or characters). */
export function secretKind(text: string): SecretKind | null {
  const found = SECRET_PATTERN.exec(text);
  return found ? KIND_BY_TAG[found[1]!]! : null;
}

/** What is stored for a secret: its HMAC-SHA256 under the instance key, hex. */
export function secretDigest(instanceKey: Buffer, secret: string): string {
  return createHmac('sha256', instanceKey).update(secret).digest('hex');
}

/** The CSRF token of a session: derived from its secret, so nothing more is stored, and useless without the cookie. */
export function csrfToken(instanceKey: Buffer, sessionSecret: string): string {
  return createHmac('sha256', instanceKey).update(`csrf\0${sessionSecret}`).digest('hex');
}

/** A key for one `purpose`, derived from the instance key (never the instance key itself outside this module's callers). */
export function derivedKey(instanceKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', instanceKey).update(`key\0${purpose}`).digest();
}

const SEAL_IV_BYTES = 12;
const SEAL_TAG_BYTES = 16;

/** `text` encrypted and authenticated (AES-256-GCM) under `key`, bound to `context`: base64url. */
export function seal(key: Buffer, context: string, text: string): string {
  const iv = randomBytes(SEAL_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** What `seal` sealed under `key` and `context`, or null when `sealed` is malformed, altered or sealed otherwise. */
export function unseal(key: Buffer, context: string, sealed: string): string | null {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < SEAL_IV_BYTES + SEAL_TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, SEAL_IV_BYTES)).setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(bytes.length - SEAL_TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(SEAL_IV_BYTES, bytes.length - SEAL_TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** Constant-time equality of two digests (hex strings of equal length). */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/**
 * The instance key of a state directory, created (32 random bytes, mode
 * 0600, exclusively: two processes cannot both create it) when missing and
 * `create`. Throws when the file is missing (and not created), has another
 * size or is readable by others.
 */
export function loadInstanceKey(stateDirectory: string, create = true): Buffer {
  const file = path.join(stateDirectory, INSTANCE_KEY_FILE);
  if (create) createKeyFile(file);
  const stats = fs.statSync(file);
  if ((stats.mode & 0o077) !== 0) throw new Error(`${file} must be readable by its owner only (chmod 600 ${file})`);
  const key = fs.readFileSync(file);
  if (key.length !== INSTANCE_KEY_BYTES) throw new Error(`${file} is damaged: ${key.length} bytes instead of ${INSTANCE_KEY_BYTES}`);
  return key;
}

/** Writes a new key to `file` (mode 0600) unless it exists. */
function createKeyFile(file: string): void {
  try {
    const fd = fs.openSync(file, 'wx', 0o600);
    try {
      fs.writeSync(fd, randomBytes(INSTANCE_KEY_BYTES));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Makes `key` the instance key of a state directory (a cluster's, shared by its nodes), replacing the file atomically when it differs. */
export function storeInstanceKey(stateDirectory: string, key: Buffer): void {
  const file = path.join(stateDirectory, INSTANCE_KEY_FILE);
  if (fs.existsSync(file) && fs.readFileSync(file).equals(key)) return;
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, key, { mode: 0o600 });
  const fd = fs.openSync(temporary, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temporary, file);
}
