/**
 * Auth for tests: a license signing key pair of the test's own (trusted by a
 * daemon only through $TRAWL_TEST_LICENSE_PUBLIC_KEY), and users with API
 * keys written into a data directory with the real state log before a
 * daemon starts.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import type { Test } from 'tap';
import { publicKeyFromBase64, signLicense, TEST_LICENSE_KEY_VARIABLE, type License } from '../../src/auth/license.js';
import type { Role } from '../../src/auth/model.js';
import { AuthStore, stateDirectory } from '../../src/auth/store.js';
import { fixtureRepository } from '../server/fixture.js';
import { startDaemon } from './daemon.js';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const publicKeyBase64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

/** The environment under which the daemon and `trawl admin` trust licenses signed here. */
export const LICENSE_ENV = { [TEST_LICENSE_KEY_VARIABLE]: publicKeyBase64 };
export const TEST_LICENSE_KEYS = [publicKeyFromBase64(publicKeyBase64)];

/** A license signed with the test key; by default 10 seats, valid for a year. */
export function testLicense(overrides: Partial<License> = {}): string {
  return signLicense({ licensee: 'Test Corp', seats: 10, expiresAt: new Date(Date.now() + 365 * 86_400_000).toISOString(), ...overrides }, privateKey);
}

export interface SeededUser {
  id: string;
  email: string;
  role: Role;
  /** The user's API key. */
  key: string;
}

/**
 * Writes users with one API key each (and a password when given) into the data directory of
 * `configFile` (under a 10-seat test license), then installs `license`;
 * returns the users by email.
 */
export async function seedUsers(
  configFile: string,
  users: { email: string; role: Role; password?: string }[],
  license = testLicense(),
): Promise<Record<string, SeededUser>> {
  const { dataDir } = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { dataDir: string };
  const { store } = await AuthStore.open({ directory: stateDirectory(dataDir), trustedLicenseKeys: TEST_LICENSE_KEYS });
  try {
    await store.installLicense(testLicense());
    const seeded: Record<string, SeededUser> = {};
    for (const { email, role, password } of users) {
      const user = await store.addUser({ name: email.split('@')[0]!, email, role });
      if (password !== undefined) await store.setPassword(user.id, password);
      const { secret } = await store.createApiKey(user.id, 'test');
      seeded[email] = { id: user.id, email, role, key: secret };
    }
    await store.installLicense(license);
    return seeded;
  } finally {
    await store.close();
  }
}

/** Request headers carrying `secret` as a bearer token (and a JSON body type). */
export function bearer(secret: string): Record<string, string> {
  return { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' };
}

/**
 * The daemon on the fixture repository with an owner (owner@example.com) and a member
 * (dev@example.com), each with an API key (and `password` when given), under a test license;
 * `configure` edits the config file before the start.
 */
export async function teamDaemon(t: Test, options: { password?: string; license?: string; configure?: (configFile: string) => void } = {}) {
  const repo = fixtureRepository(t);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        options.configure?.(configFile);
        users = await seedUsers(
          configFile,
          [
            { email: 'owner@example.com', role: 'owner', password: options.password },
            { email: 'dev@example.com', role: 'member', password: options.password },
          ],
          options.license,
        );
      },
    },
  );
  return { daemon, owner: users['owner@example.com']!, dev: users['dev@example.com']! };
}
