import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository } from '../server/fixture.js';

const UNIT = fileURLToPath(new URL('../../systemd/trawl.service', import.meta.url));

t.test('systemd-analyze verify finds nothing to say about trawl.service', async (t) => {
  const result = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' });
  t.equal(result.status, 0);
  t.equal(`${result.stdout}${result.stderr}`.trim(), '', 'no warnings (unknown keys and bad values are warnings, not failures)');
});

t.test('under systemd: READY=1 after the first index pass, then watchdog pings while the pool answers', async (t) => {
  const socket = path.join(tempDir(t), 'notify.sock');
  // A datagram socket like systemd's, printing every notification it receives.
  const receiver = spawn('python3', ['-c', `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print('bound', flush=True)
while True:
    print(s.recv(4096).decode(), flush=True)`, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => receiver.kill());
  let received = '';
  receiver.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
  await waitFor(async () => received.startsWith('bound'), 10_000, 'the notify socket');
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } }, { env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '400000' } });
  await waitFor(async () => /READY=1\n(.*\n)*WATCHDOG=1/.test(received), 10_000, 'READY=1, then a watchdog ping');
  t.pass('READY=1 once the first index pass is published, then watchdog pings');
  await daemon.stop();
  await waitFor(async () => /STOPPING=1/.test(received), 5000, 'STOPPING=1');
  t.pass('STOPPING=1 on SIGTERM');
});
