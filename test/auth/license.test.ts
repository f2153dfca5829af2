import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { licenseActive, LicenseError, readLicense, signLicense, trustedLicenseKeys, TEST_LICENSE_KEY_VARIABLE } from '../../src/auth/license.js';
import { LICENSE_ENV, TEST_LICENSE_KEYS, testLicense } from '../helpers/auth.js';

t.test('a license verifies under its key only', async (t) => {
  const key = testLicense({ licensee: 'Acme', seats: 3, expiresAt: '2030-01-01T00:00:00.000Z' });
  t.match(key, /^trawl_license_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.same(readLicense(key, TEST_LICENSE_KEYS), { licensee: 'Acme', seats: 3, expiresAt: '2030-01-01T00:00:00.000Z' });
  t.throws(() => readLicense(key, trustedLicenseKeys({})), /does not verify/, 'the daemon does not trust the test key unless told');
  t.ok(readLicense(key, trustedLicenseKeys(LICENSE_ENV)), `…and does with $${TEST_LICENSE_KEY_VARIABLE}`);
  const other = generateKeyPairSync('ed25519').privateKey;
  t.throws(
    () => readLicense(signLicense({ licensee: 'Acme', seats: 3, expiresAt: '2030-01-01T00:00:00Z' }, other), TEST_LICENSE_KEYS),
    LicenseError,
    'another signer',
  );
  const [payload, signature] = key.slice('trawl_license_'.length).split('.');
  const widened = Buffer.from(JSON.stringify({ licensee: 'Acme', seats: 3000, expiresAt: '2030-01-01T00:00:00.000Z' })).toString('base64url');
  t.throws(() => readLicense(`trawl_license_${widened}.${signature}`, TEST_LICENSE_KEYS), /does not verify/, 'a changed payload');
  t.throws(() => readLicense(`trawl_license_${payload}`, TEST_LICENSE_KEYS), /not a trawl license key/);
  t.throws(() => readLicense('hello', TEST_LICENSE_KEYS), LicenseError);
});

t.test('payloads without licensee, seats or expiry are refused; expiry decides activity', async (t) => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = [generateKeyPairSync('ed25519').publicKey];
  t.throws(() => readLicense(signLicense({ licensee: 'x', seats: 0, expiresAt: '2030-01-01' }, privateKey), publicKey), LicenseError);
  const noSeats = testLicense({ seats: 0 });
  t.throws(() => readLicense(noSeats, TEST_LICENSE_KEYS), /lacks licensee, seats or expiresAt/);
  t.throws(() => readLicense(testLicense({ expiresAt: 'soon' }), TEST_LICENSE_KEYS), /lacks/);
  const license = readLicense(testLicense({ expiresAt: '2030-01-01T00:00:00.000Z' }), TEST_LICENSE_KEYS);
  t.ok(licenseActive(license, Date.parse('2029-12-31T23:59:59.999Z')));
  t.notOk(licenseActive(license, Date.parse('2030-01-01T00:00:00.000Z')), 'expired at the instant');
  t.notOk(licenseActive(null, 0));
});
