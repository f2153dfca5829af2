import t from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
import fs from 'node:fs';
import { ERROR_CODES } from '../../src/api/errors.js';
import { HealthResponse, VersionResponse } from '../../src/api/schemas.js';
import { ROUTES } from '../../src/server/routes/index.js';
import { startDaemon } from '../helpers/daemon.js';
import { assertSchema } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

t.test('docs/errors.md lists exactly the error registry', async (t) => {
  const doc = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| (\d{3}) \| ([A-Z_]+) \| (.+) \|$/gm)].map(([, status, code, when]) => ({
    code: code!,
    status: Number(status),
    when: when!,
  }));
  t.same(
    rows,
    Object.entries(ERROR_CODES).map(([code, { status, when }]) => ({ code, status, when })),
    'same codes, statuses and descriptions, in the same order',
  );
});

t.test('system endpoints, OpenAPI, metrics, unknown paths and methods', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });

  const health = await daemon.fetch('/api/health');
  t.equal(health.status, 200);
  assertSchema(t, HealthResponse, await health.json(), 'health');
  const version = await (await daemon.fetch('/api/version')).json();
  assertSchema(t, VersionResponse, version, 'version');
  t.equal(version.version, JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);

  const document = await (await daemon.fetch('/api/openapi.json')).json();
  t.equal(document.openapi, '3.0.3');
  for (const route of ROUTES) {
    const operation = document.paths[route.path]?.[route.method];
    t.ok(operation, `${route.method.toUpperCase()} ${route.path} is documented`);
    for (const code of route.errors) t.ok(operation?.responses[String(ERROR_CODES[code].status)], `${route.path} documents ${code}`);
  }
  const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
  for (const ref of new Set(refs)) t.ok(document.components.schemas[ref], `$ref ${ref} resolves`);
  // A third party's reading of the document, as client generators make it: the OpenAPI 3.0 schema, every $ref.
  await t.resolves(SwaggerParser.validate(structuredClone(document)), 'a valid OpenAPI 3.0 document (swagger-parser)');

  for (const [query, isRegexEnabled] of [
    ['parse_expression', false],
    ['parse_\\w+', true],
    ['sym:parse_expression', false],
    ['file:parser', false],
  ] as const) {
    t.equal((await daemon.post('/api/search', { query, matches: 5, isRegexEnabled })).status, 200);
  }
  const metrics = await daemon.fetch('/metrics');
  t.equal(metrics.status, 200);
  const text = await metrics.text();
  for (const name of [
    'trawl_http_requests_total',
    'trawl_http_request_duration_seconds',
    'trawl_search_duration_seconds',
    'trawl_search_queue_depth',
    'trawl_shards_loaded',
    'trawl_worker_shards_loaded',
    'trawl_index_lag_seconds',
    'trawl_worker_crashes_total',
    'trawl_shard_failures_total',
    'trawl_render_slots_in_use',
    'trawl_search_tasks_yielded_total',
    'trawl_searches_displaced_total',
  ]) {
    t.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `metric ${name}`);
  }
  t.match(text, /trawl_shards_loaded 1$/m, 'the one shard is mapped');
  t.match(text, /trawl_worker_shards_loaded 1$/m, 'by every worker too');
  t.match(text, /^trawl_render_slots_in_use 0$/m, 'no response holds a render slot once written');
  for (const queryClass of ['literal', 'regex', 'symbol', 'path']) {
    t.match(text, new RegExp(`^trawl_search_duration_seconds_count\\{class="${queryClass}"\\} 1$`, 'm'), `search latency of the ${queryClass} class`);
  }

  const unknown = await daemon.fetch('/api/nothing/here');
  t.equal(unknown.status, 404);
  t.same(await unknown.json(), { statusCode: 404, errorCode: 'NOT_FOUND', message: 'This API endpoint does not exist: /api/nothing/here' });
  for (const route of ROUTES) {
    const used = ROUTES.filter((other) => other.path === route.path).map((other) => other.method.toUpperCase());
    const wrong = ['GET', 'POST', 'DELETE', 'PUT'].find((method) => !used.includes(method))!;
    const response = await daemon.fetch(route.path, { method: wrong });
    t.equal(response.status, 405, `${wrong} ${route.path} is 405`);
    t.ok(response.headers.get('allow')?.split(', ').includes(route.method.toUpperCase()), `with Allow (${response.headers.get('allow')})`);
    t.equal((await response.json()).errorCode, 'METHOD_NOT_ALLOWED');
  }
});

t.test('a daemon listening on an IPv6 address links to itself by a valid URL', async (t) => {
  const repo = fixtureRepository(t);
  const listenOnIpv6 = async (configFile: string) => {
    const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { listen: { host: string } };
    config.listen.host = '::1';
    fs.writeFileSync(configFile, JSON.stringify(config));
  };
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } }, { prepare: listenOnIpv6 });
  t.match(daemon.url, /^http:\/\/\[::1\]:\d+$/);
  const search = await daemon.post('/api/search', { query: 'parse_expression', matches: 10 });
  t.equal(search.status, 200, 'a search answers (its links are made from publicUrl)');
  const { files } = (await search.json()) as { files: { webUrl: string }[] };
  t.ok(files.length > 0 && files.every((file) => file.webUrl.startsWith(`${daemon.url}/browse/`)), 'links to the daemon itself');
  t.equal((await daemon.fetch('/api/repos')).status, 200);
});
