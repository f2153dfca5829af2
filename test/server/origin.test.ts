import t from 'tap';
import http from 'node:http';
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

t.test('on loopback, a foreign Host (DNS rebinding) or a foreign Origin is refused', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, publicUrl: 'https://code.example.com' });
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
