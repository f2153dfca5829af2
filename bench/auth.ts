/**
 * Auth benchmarks (issue 5), into docs/benchmarks.md:
 * - search throughput with an API key versus anonymous, on the Linux 6.1
 *   index (selective literals, wrk at c = 16, alternating rounds);
 * - scoped token creations per second at c = 32, each acknowledged only
 *   after fdatasync (group commit), with their audit records;
 * - replay time of a state log of one million records.
 *
 *   npm run bench:auth        (apt-get install wrk; indexes linux-source-6.1 first if needed)
 *
 * Token creation is an EE endpoint: the run signs a license with a key pair
 * of its own, trusted by its daemon through $TRAWL_TEST_LICENSE_PUBLIC_KEY.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signLicense, TEST_LICENSE_KEY_VARIABLE, publicKeyFromBase64 } from '../src/auth/license.js';
import { authRecord } from '../src/auth/model.js';
import { STATE_LOG_FILE } from '../src/auth/state-log.js';
import { encodeRecord } from '../src/auth/state-record.js';
import { AuthStore, stateDirectory } from '../src/auth/store.js';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig } from './corpus.js';
import { formatMs, median, removeScratch, runWrk, scratch, searchBody, startDaemon, threadCpuSeconds, wrkScript } from './http-harness.js';
import { QUERY_CLASSES } from './queries.js';
import { writeReportBlock } from './report.js';

const SECONDS = Number(process.env.TRAWL_BENCH_HTTP_SECONDS ?? 6);
const ROUNDS = 5;
const REPLAY_RECORDS = 1_000_000;

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const licenseEnv = { [TEST_LICENSE_KEY_VARIABLE]: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
const trustedLicenseKeys = [publicKeyFromBase64(licenseEnv[TEST_LICENSE_KEY_VARIABLE]!)];

/** A data directory sharing the Linux index, with a licensed owner whose API key is returned. */
async function seededDataDir(indexDir: string): Promise<{ dataDir: string; apiKey: string; authenticateMicroseconds: number }> {
  const dataDir = path.join(scratch, 'data');
  fs.mkdirSync(dataDir);
  for (const entry of ['manifest.json', 'shards']) fs.symlinkSync(path.join(indexDir, entry), path.join(dataDir, entry));
  const { store } = await AuthStore.open({ directory: stateDirectory(dataDir), trustedLicenseKeys });
  try {
    await store.installLicense(signLicense({ licensee: 'benchmark', seats: 10, expiresAt: new Date(Date.now() + 86_400_000).toISOString() }, privateKey));
    const owner = await store.addUser({ name: 'Bench', email: 'bench@example.com', role: 'owner' });
    const apiKey = (await store.createApiKey(owner.id, 'bench')).secret;
    return { dataDir, apiKey, authenticateMicroseconds: authenticateCost(store, apiKey) };
  } finally {
    await store.close();
  }
}

/** Microseconds one `authenticate` of an API key takes in process (HMAC-SHA256, lookup, constant-time compare). */
function authenticateCost(store: AuthStore, secret: string): number {
  const runs = 200_000;
  for (let i = 0; i < 10_000; i++) store.authenticate(secret);
  const started = performance.now();
  for (let i = 0; i < runs; i++) store.authenticate(secret);
  return ((performance.now() - started) * 1000) / runs;
}

/** Seconds to open (replay) a state log of `count` records: one user, one key, the rest scoped tokens. */
async function replaySeconds(count: number): Promise<{ seconds: number[]; bytes: number }> {
  const directory = path.join(scratch, 'replay');
  fs.mkdirSync(directory, { mode: 0o700 });
  const at = Date.now();
  const records = [
    encodeRecord(authRecord({ type: 'user.added', userId: 'u1', name: 'Bench', email: 'bench@example.com', role: 'owner' }, at)),
    encodeRecord(authRecord({ type: 'apikey.created', keyId: 'k1', userId: 'u1', name: 'bench', digest: randomBytes(32).toString('hex') }, at)),
  ];
  for (let i = records.length; i < count; i++) {
    records.push(
      encodeRecord(authRecord({ type: 'token.created', tokenId: `t${i}`, userId: 'u1', digest: randomBytes(32).toString('hex'), repoIds: [1, 2, 3] }, at)),
    );
  }
  fs.writeFileSync(path.join(directory, STATE_LOG_FILE), Buffer.concat(records), { mode: 0o600 });
  const seconds: number[] = [];
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    const { store } = await AuthStore.open({ directory, trustedLicenseKeys });
    seconds.push((performance.now() - started) / 1000);
    if (store.state.tokens.size !== count - 2) throw new Error(`replayed ${store.state.tokens.size} tokens, expected ${count - 2}`);
    await store.close();
  }
  return { seconds, bytes: fs.statSync(path.join(directory, STATE_LOG_FILE)).size };
}

const corpus = ensureLinuxCorpus();
const indexDir = path.join(benchDirectory(), 'data-linux');
const repository = linuxRepositoryConfig(corpus);
console.error('indexing (skipped when the index is current) …');
await runIndex(validateConfig({ dataDir: indexDir, repos: [repository] }, 'bench'));
const { dataDir, apiKey, authenticateMicroseconds } = await seededDataDir(indexDir);
const fileSystem = execFileSync('df', ['--output=fstype', scratch], { encoding: 'utf8' }).trim().split('\n').at(-1);
const daemon = await startDaemon({ dataDir, repos: [repository], server: { rescanIntervalSeconds: 0 } }, licenseEnv);

const selective = QUERY_CLASSES.find((queryClass) => queryClass.name === 'selective literal')!;
const bodies = selective.queries.map(searchBody);
const anonymousScript = wrkScript('anonymous', '/api/search', bodies);
const keyScript = wrkScript('api-key', '/api/search', bodies, { Authorization: `Bearer ${apiKey}` });
const tokenScript = wrkScript('tokens', '/api/ee/scoped_access_token', [JSON.stringify({ repos: [repository.name] })], { Authorization: `Bearer ${apiKey}` });
/** Per round: requests/s, and the front end's CPU per request in ms (where authentication happens). */
const anonymous: { rps: number; frontEndMs: number }[] = [];
const withKey: { rps: number; frontEndMs: number }[] = [];
let tokens: Awaited<ReturnType<typeof runWrk>>;
try {
  await runWrk(daemon.url, anonymousScript, 16, 3); // warm the queries' pages and the JIT
  await runWrk(daemon.url, keyScript, 16, 3);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [script, results] of [
      [anonymousScript, anonymous],
      [keyScript, withKey],
    ] as const) {
      const before = threadCpuSeconds(daemon.child.pid!).main;
      const result = await runWrk(daemon.url, script, 16, SECONDS);
      const frontEndMs = ((threadCpuSeconds(daemon.child.pid!).main - before) * 1000) / (result.rps * SECONDS);
      if (result.failed > 0) throw new Error(`${result.failed} requests failed`);
      results.push({ rps: result.rps, frontEndMs });
      console.error(
        `${script === keyScript ? 'API key' : 'anonymous'} round ${round + 1}: ${result.rps.toFixed(0)} req/s, front end ${frontEndMs.toFixed(2)} ms/request`,
      );
    }
  }
  tokens = await runWrk(daemon.url, tokenScript, 32, SECONDS);
  if (tokens.failed > 0) throw new Error(`${tokens.failed} token creations failed`);
  console.error(`token creations: ${tokens.rps.toFixed(0)}/s`);
} finally {
  await daemon.stop();
}
const replay = await replaySeconds(REPLAY_RECORDS);
removeScratch();

const rpsOf = (rounds: typeof anonymous) => median(rounds.map((round) => round.rps));
const cpuOf = (rounds: typeof anonymous) => median(rounds.map((round) => round.frontEndMs));
const overhead = (1 - rpsOf(withKey) / rpsOf(anonymous)) * 100;
const body = `Search throughput, anonymous versus an API key (\`Authorization: Bearer\`: an HMAC-SHA256 of the key, a map lookup,
visibility from the caller's role; an audit record either way): the daemon on the Linux 6.1 index, selective literals,
wrk at c = 16 for ${SECONDS} s, ${ROUNDS} alternating rounds each after a warm-up, on the same ${os.availableParallelism()} cores as the daemon.
Front-end CPU per request is the daemon's main thread's CPU time (from /proc) over the requests served: it is where
authentication runs, and it is less noisy than throughput on a machine shared with the load generator.

| caller | requests/s (median) | front-end CPU ms/request (median) | requests/s by round |
|---|---|---|---|
| anonymous | ${rpsOf(anonymous).toFixed(0)} | ${cpuOf(anonymous).toFixed(3)} | ${anonymous.map((round) => round.rps.toFixed(0)).join(', ')} |
| API key | ${rpsOf(withKey).toFixed(0)} | ${cpuOf(withKey).toFixed(3)} | ${withKey.map((round) => round.rps.toFixed(0)).join(', ')} |

Throughput overhead of the API key: **${overhead.toFixed(1)} %** (target ≤ 5 %; negative: the key's rounds were faster);
front-end CPU per request ${((cpuOf(withKey) / cpuOf(anonymous) - 1) * 100).toFixed(1)} %. What the key itself costs, measured in process:
${authenticateMicroseconds.toFixed(1)} µs per authentication, ${((authenticateMicroseconds / 1000 / cpuOf(anonymous)) * 100).toFixed(2)} % of the front end's time per request; the rest
of the difference between the rows is the machine's noise.

Scoped token creations (\`POST /api/ee/scoped_access_token\`, each answered only after its record is fdatasync'ed, with its
audit record; group commit shares the syncs), wrk at c = 32 for ${SECONDS} s, the state directory on ${fileSystem}:
**${tokens.rps.toFixed(0)} tokens/s**, p50 ${formatMs(tokens.p50)} ms, p99 ${formatMs(tokens.p99)} ms (target ≥ 500/s).

Replay of a state log of ${REPLAY_RECORDS.toLocaleString('en')} records (${(replay.bytes / 2 ** 20).toFixed(0)} MiB: a user, an API key and scoped tokens), \`AuthStore.open\`
(read, CRC-32C check, MessagePack decode, apply) three times: median **${median(replay.seconds).toFixed(2)} s**
(${replay.seconds.map((seconds) => seconds.toFixed(2)).join(', ')}).`;
console.log(`wrote ${writeReportBlock('auth', body)}`);
console.log(body);
