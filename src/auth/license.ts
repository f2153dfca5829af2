/**
 * Offline license keys: `trawl_license_` + base64url(JSON payload) + `.` +
 * base64url(Ed25519 signature of the payload bytes). The payload names the
 * licensee, the seats (users the instance may have) and the expiry. A license
 * is active while its signature verifies under a trusted public key and it
 * has not expired; nothing is checked over the network.
 *
 * The daemon trusts the vendor's key below. Tests sign their own licenses
 * with a key pair they make, which the daemon trusts only when
 * $TRAWL_TEST_LICENSE_PUBLIC_KEY names it (logged as a warning at start).
 */
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

const PREFIX = 'trawl_license_';
/** The vendor's license signing key (Ed25519, SPKI DER, base64). */
const VENDOR_PUBLIC_KEY = 'MCowBQYDK2VwAyEAZFhN7kgkurl0sRKCrIXkt48yz4hTuCGHIvC4efM24r8=';
/** Names a test key pair's public half (SPKI DER, base64) the daemon should trust as well. */
export const TEST_LICENSE_KEY_VARIABLE = 'TRAWL_TEST_LICENSE_PUBLIC_KEY';

export interface License {
  licensee: string;
  seats: number;
  /** ISO 8601. */
  expiresAt: string;
}

export class LicenseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LicenseError';
  }
}

/** The public keys licenses are verified with: the vendor's, and a test key only when the environment names one. */
export function trustedLicenseKeys(environment: NodeJS.ProcessEnv = process.env): KeyObject[] {
  const keys = [publicKeyFromBase64(VENDOR_PUBLIC_KEY)];
  const test = environment[TEST_LICENSE_KEY_VARIABLE];
  if (test) keys.push(publicKeyFromBase64(test));
  return keys;
}

export function publicKeyFromBase64(spkiBase64: string): KeyObject {
  return createPublicKey({ key: Buffer.from(spkiBase64, 'base64'), format: 'der', type: 'spki' });
}

/** Issues a license key: what the vendor does with its private key, and tests with theirs. */
export function signLicense(license: License, privateKey: KeyObject): string {
  const payload = Buffer.from(JSON.stringify(license));
  return `${PREFIX}${payload.toString('base64url')}.${sign(null, payload, privateKey).toString('base64url')}`;
}

/** The license a key carries, once its signature verifies under one of `trusted`; LicenseError otherwise (expiry is not checked here). */
export function readLicense(text: string, trusted: readonly KeyObject[]): License {
  const found = /^trawl_license_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(text.trim());
  if (!found) throw new LicenseError('not a trawl license key (expected trawl_license_<payload>.<signature>)');
  const payload = Buffer.from(found[1]!, 'base64url');
  const signature = Buffer.from(found[2]!, 'base64url');
  if (!trusted.some((key) => verify(null, payload, key, signature)))
    throw new LicenseError('the license signature does not verify: this key was not issued for trawl');
  let license: unknown;
  try {
    license = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new LicenseError('the license payload is not JSON');
  }
  const { licensee, seats, expiresAt } = license as Partial<License>;
  if (
    typeof licensee !== 'string' ||
    !Number.isInteger(seats) ||
    (seats as number) < 1 ||
    typeof expiresAt !== 'string' ||
    Number.isNaN(Date.parse(expiresAt))
  ) {
    throw new LicenseError('the license payload lacks licensee, seats or expiresAt');
  }
  return { licensee, seats: seats as number, expiresAt };
}

/** Whether `license` is still valid at `now` (ms since the epoch). */
export function licenseActive(license: License | null, now: number): license is License {
  return license !== null && now < Date.parse(license.expiresAt);
}

/** The licenses installed keys are, each read (its signature checked) once while it is the one installed. */
export class InstalledLicenses {
  private last: { key: string; license: License | null } | null = null;

  constructor(private readonly trusted: readonly KeyObject[]) {}

  /** The license `key` is, whether or not it expired; null for no key, or one whose signature no longer verifies. */
  of(key: string | undefined): License | null {
    if (key === undefined) return null;
    if (this.last?.key !== key) {
      let license: License | null = null;
      try {
        license = readLicense(key, this.trusted);
      } catch {
        license = null;
      }
      this.last = { key, license };
    }
    return this.last.license;
  }
}
