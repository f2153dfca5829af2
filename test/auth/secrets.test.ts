import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { loadInstanceKey, newSecret, sameDigest, secretDigest, secretKind } from '../../src/auth/secrets.js';
import { tempDir } from '../helpers/tmp.js';

t.test('secrets: prefix and 64 lowercase hex, kinds recognised, anything else refused', async (t) => {
  const key = newSecret('apiKey');
  const token = newSecret('scopedToken');
  t.match(key, /^trawl_ak_[0-9a-f]{64}$/);
  t.match(token, /^trawl_st_[0-9a-f]{64}$/);
  t.not(newSecret('apiKey'), key, 'random');
  t.equal(secretKind(key), 'apiKey');
  t.equal(secretKind(token), 'scopedToken');
  for (const bad of ['', 'trawl_ak_', key.toUpperCase(), `${key}0`, key.slice(0, -1), `trawl_xx_${'a'.repeat(64)}`, ` ${key}`, `${key}\n`]) {
    t.equal(secretKind(bad), null, `refused: ${JSON.stringify(bad.slice(0, 20))}…`);
  }
});

t.test('only keyed digests are stored, and compared in constant time', async (t) => {
  const dir = tempDir(t);
  const instanceKey = loadInstanceKey(dir);
  const secret = newSecret('apiKey');
  const digest = secretDigest(instanceKey, secret);
  t.match(digest, /^[0-9a-f]{64}$/);
  t.notMatch(digest, secret.slice(9), 'the digest does not contain the secret');
  t.ok(sameDigest(digest, secretDigest(instanceKey, secret)));
  t.notOk(sameDigest(digest, secretDigest(instanceKey, newSecret('apiKey'))));
  t.notOk(sameDigest(digest, secretDigest(Buffer.alloc(32, 1), secret)), 'another instance key gives another digest');
  t.notOk(sameDigest(digest, ''), 'an empty digest never matches');
});

t.test('the instance key is created once, 32 bytes, mode 0600, and checked on load', async (t) => {
  const dir = tempDir(t);
  const first = loadInstanceKey(dir);
  const file = path.join(dir, 'instance.key');
  t.equal(fs.statSync(file).mode & 0o777, 0o600);
  t.same(loadInstanceKey(dir), first, 'stable across loads');
  fs.chmodSync(file, 0o644);
  t.throws(() => loadInstanceKey(dir), { message: /readable by its owner only/ });
  fs.chmodSync(file, 0o600);
  fs.writeFileSync(file, Buffer.alloc(5));
  t.throws(() => loadInstanceKey(dir), { message: /damaged: 5 bytes/ });
});
