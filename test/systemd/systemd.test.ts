import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository, SLOW_QUERY, slowCorpus } from '../server/fixture.js';

const UNIT = fileURLToPath(new URL('../../systemd/trawl.service', import.meta.url));

t.test('systemd-analyze verify finds nothing to say about trawl.service', async (t) => {
  const result = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
  t.equal(result.status, 0);
  t.equal(`${result.stdout}${result.stderr}`.trim(), '', 'no warnings (unknown keys and bad values are warnings, not failures)');
});

/** A datagram socket like systemd's notify socket; `received()` is every notification so far, one per line. */
async function notifySocket(t: Test): Promise<{ socket: string; received: () => string }> {
  const socket = path.join(tempDir(t), 'notify.sock');
  const receiver = spawn(
    'python3',
    [
      '-c',
      `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print('bound', flush=True)
while True:
    print(s.recv(4096).decode(), flush=True)`,
      socket,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => receiver.kill());
  let received = '';
  receiver.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
  await waitFor(async () => received.startsWith('bound'), 10_000, 'the notify socket');
  return { socket, received: () => received };
}

t.test('under systemd: READY=1 after the first index pass, then watchdog pings while the pool answers', async (t) => {
  const { socket, received } = await notifySocket(t);
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } },
    { env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' } },
  );
  await waitFor(async () => /READY=1\n(.*\n)*WATCHDOG=1/.test(received()), 10_000, 'READY=1, then a watchdog ping');
  t.pass('READY=1 once the first index pass is published, then watchdog pings');
  await daemon.waitForLog(
    /server.searchTimeBudgetMs is not below half of WatchdogSec/,
    'the warning that the 10 s search budget is longer than the 200 ms probe interval',
  );
  await daemon.stop();
  await waitFor(async () => /STOPPING=1/.test(received()), 5000, 'STOPPING=1');
  t.pass('STOPPING=1 on SIGTERM');
});

t.test('a busy pool keeps the watchdog pinged while searches queue for many of its intervals', async (t) => {
  const { socket, received } = await notifySocket(t);
  const daemon = await startDaemon(
    t,
    { repos: [slowCorpus(t)], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } },
    { env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' } }, // a probe every 200 ms
  );
  await waitFor(async () => /WATCHDOG=1/.test(received()), 10_000, 'a first watchdog ping');
  const pings = () =>
    received()
      .split('\n')
      .filter((line) => line === 'WATCHDOG=1').length;
  const before = pings();
  const started = performance.now();
  const searches = Array.from({ length: 160 }, () => daemon.post('/api/search', SLOW_QUERY));
  const statuses = await Promise.all(searches.map(async (response) => (await response).status));
  const busyMs = performance.now() - started;
  t.same(new Set(statuses), new Set([200]), 'every search answered');
  t.ok(busyMs > 1000, `the searches kept the one worker busy for more than five probe intervals (${busyMs.toFixed(0)} ms)`);
  // A no-op probe queued behind 160 searches would have missed every interval: progress counts as life.
  t.ok(pings() - before >= 3, `the watchdog was pinged while they queued (${pings() - before} pings in ${busyMs.toFixed(0)} ms)`);
});
