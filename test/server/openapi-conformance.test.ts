/**
 * The OpenAPI document against the daemon's answers, as a contract tester (schemathesis, dredd) reads it:
 * every route is called without a credential, with one, with a malformed body and with a body over the
 * limit, a bad key until the failed authentications are refused, and MCP's transport with its own
 * refusals. Each answer's status must be one the document lists for that operation, and its JSON body
 * must fit the schema the document gives for that status (validated by Ajv, as such tools do).
 */
import t from 'tap';
import { Ajv } from 'ajv';
import fs from 'node:fs';
import { ROUTES } from '../../src/server/routes/index.js';
import { bearer, teamDaemon } from '../helpers/auth.js';

const MAX_BODY_BYTES = 4096;
const JSON_TYPE = { 'Content-Type': 'application/json' };
const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance', version: '1' } },
});

interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema: unknown }>;
}

t.test("every answer's status and body are the OpenAPI document's for its operation", async (t) => {
  const { daemon, owner } = await teamDaemon(t, {
    configure: (configFile) => {
      const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
      fs.writeFileSync(configFile, JSON.stringify({ ...config, auth: { anonymousAccess: true }, server: { ...config.server, maxBodyBytes: MAX_BODY_BYTES } }));
    },
  });
  const document = await (await daemon.fetch('/api/openapi.json')).json();
  // The document as one schema: each answer is checked against the JSON pointer of its operation's response.
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema({ ...document, $id: 'openapi' });
  const pointer = (...segments: string[]) => segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  const seen = new Map<string, Set<number>>();

  const check = async (method: string, path: string, what: string, response: Response) => {
    const operation = `${method.toUpperCase()} ${path}`;
    const status = response.status;
    const documented = document.paths[path]?.[method]?.responses?.[status] as DocumentedResponse | undefined;
    const body = await response.text();
    seen.set(operation, (seen.get(operation) ?? new Set()).add(status));
    if (!documented) return t.fail(`${operation}, ${what}: ${status} is not documented (${body.slice(0, 160)})`);
    if (documented.content?.['text/event-stream']) {
      // A client generated from the document types each event's data by the schema: every event must fit it.
      t.match(response.headers.get('content-type'), /^text\/event-stream/, `${operation}, ${what}: ${status} is a stream`);
      const validate = ajv.getSchema(`openapi#/${pointer('paths', path, method, 'responses', String(status), 'content', 'text/event-stream', 'schema')}`)!;
      const events = body
        .split('\n\n')
        .filter((event) => event.startsWith('data: '))
        .map((event) => event.slice('data: '.length));
      t.ok(events.length >= 3, `${operation}, ${what}: chunks, the final event and [DONE] (${events.length} events)`);
      for (const data of events) {
        const valid = validate(data === '[DONE]' ? data : JSON.parse(data));
        t.ok(valid, `${operation}, ${what}: the event ${data.slice(0, 40)}… fits its schema${valid ? '' : ` (${ajv.errorsText(validate.errors)})`}`);
      }
      return;
    }
    const json = documented.content?.['application/json'];
    if (!json) {
      if (!documented.content) t.equal(body, '', `${operation}, ${what}: ${status} has no body, as documented`);
      return;
    }
    t.match(response.headers.get('content-type'), /^application\/json/, `${operation}, ${what}: ${status} is JSON`);
    const validate = ajv.getSchema(`openapi#/${pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema')}`)!;
    const valid = validate(JSON.parse(body));
    t.ok(valid, `${operation}, ${what}: ${status} fits its schema${valid ? '' : ` (${ajv.errorsText(validate.errors)}: ${body.slice(0, 160)})`}`);
  };

  for (const route of ROUTES) {
    const path = route.path.replace(/\{\w+\}/g, 'x');
    const call = (headers: Record<string, string>, body?: string) =>
      daemon.fetch(path, { method: route.method.toUpperCase(), headers, body, redirect: 'manual' });
    const hasBody = route.method === 'post';
    await check(route.method, route.path, 'no credential', await call(JSON_TYPE, hasBody ? '{}' : undefined));
    await check(route.method, route.path, "an owner's key", await call(bearer(owner.key), hasBody ? '{}' : undefined));
    if (!hasBody) continue;
    await check(route.method, route.path, 'malformed JSON', await call(bearer(owner.key), '{"query": '));
    await check(route.method, route.path, 'a body over the limit', await call(bearer(owner.key), JSON.stringify({ padding: 'x'.repeat(MAX_BODY_BYTES) })));
  }

  const streamed = await daemon.fetch('/api/stream_search', {
    method: 'POST',
    headers: { ...bearer(owner.key), ...JSON_TYPE },
    body: JSON.stringify({ query: 'parse_expression', matches: 5 }),
  });
  await check('post', '/api/stream_search', 'a search', streamed);

  // Ten failed authentications in a burst, then one a second: a bad key is refused within a few more.
  for (let n = 0; n < 200 && !seen.get('GET /api/repos')?.has(429); n++)
    await check('get', '/api/repos', 'a bad key', await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${'0'.repeat(64)}`) }));
  t.ok(seen.get('GET /api/repos')?.has(429), 'failed authentications are refused in the end');

  const mcp = (headers: Record<string, string>, body?: string, method = 'POST') =>
    daemon.fetch('/api/mcp', { method, headers: { ...bearer(owner.key), ...headers }, body });
  const opened = await mcp(MCP_ACCEPT, INITIALIZE);
  const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
  await check('post', '/api/mcp', 'initialize', opened);
  await check(
    'post',
    '/api/mcp',
    'a notification',
    await mcp({ ...MCP_ACCEPT, ...session }, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })),
  );
  await check('post', '/api/mcp', 'a request', await mcp({ ...MCP_ACCEPT, ...session }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })));
  await check('post', '/api/mcp', 'not JSON-RPC', await mcp({ ...MCP_ACCEPT, ...session }, '[1, 2]'));
  await check('post', '/api/mcp', 'no session', await mcp(MCP_ACCEPT, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })));
  await check(
    'post',
    '/api/mcp',
    'an unknown session',
    await mcp({ ...MCP_ACCEPT, 'mcp-session-id': 'gone' }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })),
  );
  await check('post', '/api/mcp', 'no Accept', await mcp({}, INITIALIZE));
  await check('post', '/api/mcp', 'not JSON', await mcp({ ...MCP_ACCEPT, 'Content-Type': 'text/plain' }, INITIALIZE));
  await check('delete', '/api/mcp', 'an unknown session', await mcp({ 'mcp-session-id': 'gone' }, undefined, 'DELETE'));
  await check('delete', '/api/mcp', 'the session', await mcp(session, undefined, 'DELETE'));
  t.same([...seen.get('POST /api/mcp')!].sort(), [200, 202, 400, 404, 406, 415], "MCP's answers, each documented");
});
