import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from './fixture.js';

/** A GET with exactly these headers (fetch would not let a test set Host). */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
  });
}

/** The status line of the answer to a request written byte for byte (http.get joins or refuses a repeated Host). */
function rawStatus(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) {
        socket.destroy();
        resolve(answer.slice(0, answer.indexOf('\r\n')));
      }
    });
    socket.on('error', reject);
  });
}

t.test('on every listen address, only a Host the operator named is answered (DNS rebinding)', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, {
    repos: [repo.config],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    listen: { host: '0.0.0.0' },
    publicUrl: 'https://code.example.com',
    server: { allowedHosts: ['search.internal', '10.0.0.5:8080'] },
  });
  const port = Number(new URL(daemon.url).port);
  const repos = `http://127.0.0.1:${port}/api/repos`;
  for (const host of [
    'code.example.com',
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    'search.internal',
    `search.internal:${port}`,
    'Search.Internal',
    '10.0.0.5:8080',
  ]) {
    t.equal((await get(repos, { Host: host })).status, 200, `Host ${host} was named`);
  }
  for (const host of [`rebound.example:${port}`, 'rebound.example', `192.0.2.7:${port}`, '10.0.0.5', 'search.internal.rebound.example']) {
    const refused = await get(repos, { Host: host });
    t.equal(refused.status, 403, `Host ${host} is refused though the daemon listens on every address`);
    t.match(JSON.parse(refused.body), { errorCode: 'INSUFFICIENT_PERMISSIONS', message: /server\.allowedHosts/ });
  }
  // A page rebound to this server sends its own name as Origin too: an Origin equal to a foreign Host is no pass.
  t.equal((await get(repos, { Host: `rebound.example:${port}`, Origin: `http://rebound.example:${port}` })).status, 403, 'Origin equal to a foreign Host');
  const twice = await rawStatus(port, `GET /api/repos HTTP/1.1\r\nHost: code.example.com\r\nHost: rebound.example\r\n\r\n`);
  t.match(twice, /^HTTP\/1\.1 400 /, 'two Host headers are a malformed request');
  const twiceAllowed = await rawStatus(port, `GET /api/repos HTTP/1.1\r\nHost: code.example.com\r\nHost: code.example.com\r\n\r\n`);
  t.match(twiceAllowed, /^HTTP\/1\.1 400 /, 'even when both name this server');
  t.equal((await get(repos, { Host: `127.0.0.1:${port}` })).status, 200, 'and the daemon keeps serving');
});

t.test('on loopback, a foreign Host (DNS rebinding) or a foreign Origin is refused', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, {
    repos: [repo.config],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    publicUrl: 'https://code.example.com',
  });
  const { port } = new URL(daemon.url);
  const repos = `${daemon.url}/api/repos`;
  t.equal((await get(repos, { Host: `127.0.0.1:${port}` })).status, 200, 'the loopback address');
  t.equal((await get(repos, { Host: `localhost:${port}` })).status, 200, 'localhost');
  t.equal((await get(repos, { Host: 'code.example.com' })).status, 200, "publicUrl's host (behind a proxy)");
  const rebound = await get(repos, { Host: `evil.example:${port}` });
  t.equal(rebound.status, 403, 'a name that only resolves here');
  t.match(JSON.parse(rebound.body), { errorCode: 'INSUFFICIENT_PERMISSIONS', message: /Host "evil\.example:\d+" is not this server's/ });
  t.equal((await get(`${daemon.url}/`, { Host: `evil.example:${port}` })).status, 403, 'the web app too');

  t.equal((await get(repos, { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` })).status, 200, 'a same-origin page');
  t.equal((await get(repos, { Host: `127.0.0.1:${port}`, Origin: 'https://code.example.com' })).status, 200, "publicUrl's origin");
  for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${Number(port) + 1}`]) {
    const crossSite = await get(repos, { Host: `127.0.0.1:${port}`, Origin: origin });
    t.equal(crossSite.status, 403, `Origin ${origin} is refused`);
  }
  t.equal((await get(repos, { Host: `127.0.0.1:${port}` })).status, 200, 'and the daemon keeps serving');
});
