import t from 'tap';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AUDIT_ACTIONS, AUDITED_READS } from '../../src/auth/audit-actions.js';
import { bearer, teamDaemon } from '../helpers/auth.js';
import { waitFor } from '../helpers/daemon.js';

// The audit actions are one typed table (src/auth/audit-actions.ts); the docs list the same ones.
t.test("docs/state-log.md lists exactly the table's actions", async (t) => {
  const text = fs.readFileSync(fileURLToPath(new URL('../../docs/state-log.md', import.meta.url)), 'utf8');
  const paragraph = text.slice(text.indexOf('Actions (`src/auth/audit-actions.ts`)'), text.indexOf('`actorType` is `user`'));
  const listed = [...paragraph.slice(0, paragraph.indexOf('. Of')).matchAll(/`([a-z_.]+)`/g)].map((found) => found[1]!);
  t.same(listed, Object.keys(AUDIT_ACTIONS), 'the same actions, in the same order');
});

t.test('the audited reads are audited on every call; the other reads are not', async (t) => {
  const { daemon, owner } = await teamDaemon(t);
  const repo = 'example.com/acme/widgets';
  const headers = bearer(owner.key);
  const post = (path: string, body: unknown) => daemon.fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  const get = (path: string) => daemon.fetch(path, { headers });
  const reads: [string, () => Promise<Response>][] = [
    ['search', () => post('/api/search', { query: 'parse_expression', matches: 5 })],
    ['file.read', () => get(`/api/source?repo=${repo}&path=src/parser.c`)],
    ['tree.read', () => post('/api/tree', { repoName: repo, revisionName: 'HEAD', paths: ['src'] })],
    ['file.blamed', () => get(`/api/blame?repo=${repo}&path=src/parser.c`)],
    ['commits.authors.read', () => get(`/api/commits/authors?repo=${repo}`)],
  ];
  const unaudited = [
    '/api/repos',
    '/api/connections',
    `/api/commits?repo=${repo}`,
    `/api/commit?repo=${repo}&ref=HEAD`,
    `/api/diff?repo=${repo}&base=HEAD~1&head=HEAD`,
    '/api/health',
    '/api/version',
  ];
  for (const [, call] of reads) t.equal((await call()).status, 200);
  for (const path of unaudited) t.equal((await get(path)).status, 200, path);
  const stream = await post('/api/stream_search', { query: 'parse_expression', matches: 5 });
  await stream.text();
  t.same([...new Set(reads.map(([action]) => action))].sort(), [...AUDITED_READS].sort(), 'the test calls each audited read');
  let actions: string[] = [];
  await waitFor(
    async () => {
      const entries = (await (await get('/api/ee/audit?perPage=100')).json()) as { action: string }[];
      actions = entries.map((entry) => entry.action);
      return actions.filter((action) => action === 'search').length === 2;
    },
    10_000,
    'the audit records (written in batches)',
  );
  for (const action of AUDITED_READS) t.ok(actions.includes(action), `${action} recorded`);
  t.same(
    actions.filter((action) => !(AUDITED_READS as readonly string[]).includes(action)),
    [],
    'nothing else recorded for the unaudited reads',
  );
});
