import t from 'tap';
import { FindSymbolResponse } from '../../src/api/schemas.js';
import { startDaemon } from '../helpers/daemon.js';
import { assertSchema } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

t.test('find_references and find_definitions', async (t) => {
  const repo = fixtureRepository(t);
  const other = fixtureRepository(t, 'example.com/acme/other');
  const daemon = await startDaemon(t, { repos: [repo.config, other.config], auth: { anonymousAccess: true } });
  const name = 'example.com/acme/widgets';

  const references = await (await daemon.post('/api/find_references', { symbolName: 'parse_expression', repoName: name })).json();
  assertSchema(t, FindSymbolResponse, references, 'references response');
  t.same(new Set(references.files.map((file: { fileName: string }) => file.fileName)), new Set(['src/parser.c', 'src/parser.h', 'docs/guide.md', 'README.md']));
  t.equal(references.stats.matchCount, 5);
  const parserC = references.files.find((file: { fileName: string }) => file.fileName === 'src/parser.c');
  t.same(
    parserC.matches.map((match: { lineContent: string }) => match.lineContent),
    ['int parse_expression(const char *text) {', '  return parse_expression("(1)");'],
    'each match with its whole line',
  );
  t.same(parserC.matches[0].range.start, { byteOffset: 25, lineNumber: 3, column: 5 });
  t.same(
    references.repositoryInfo.map((info: { name: string }) => info.name),
    [name],
    'only the named repository',
  );

  const cOnly = await (await daemon.post('/api/find_references', { symbolName: 'parse_expression', repoName: name, language: 'c++' })).json();
  t.same(new Set(cOnly.files.map((file: { fileName: string }) => file.fileName)), new Set(['src/parser.c', 'src/parser.h']), 'C++ includes the C family');

  const definitions = await (await daemon.post('/api/find_definitions', { symbolName: 'parse_expression', repoName: name })).json();
  assertSchema(t, FindSymbolResponse, definitions, 'definitions response');
  t.same(
    new Set(definitions.files.map((file: { fileName: string }) => file.fileName)),
    new Set(['src/parser.c']),
    'the ctags definition (ctags does not report C prototypes by default)',
  );

  const literal = await (await daemon.post('/api/find_references', { symbolName: 'parse_.*', repoName: name })).json();
  t.equal(literal.stats.matchCount, 0, 'the name is taken literally, not as a regex');
  const partial = await (await daemon.post('/api/find_references', { symbolName: 'parse', repoName: name })).json();
  t.equal(partial.stats.matchCount, 1, 'whole words only: "to parse." in the guide, never inside parse_expression');

  const both = await (await daemon.post('/api/find_references', { symbolName: 'next_token' })).json();
  t.equal(both.repositoryInfo.length, 2, 'every visible repository without repoName');

  const notFound = await daemon.post('/api/find_references', { symbolName: 'x', repoName: 'nope' });
  t.equal(notFound.status, 404);
  t.equal((await notFound.json()).errorCode, 'NOT_FOUND');
  const empty = await daemon.post('/api/find_definitions', { symbolName: '' });
  t.equal(empty.status, 400);
  t.equal((await empty.json()).errorCode, 'INVALID_REQUEST_BODY');
  const badLanguage = await daemon.post('/api/find_references', { symbolName: 'x', language: 'Klingon' });
  t.equal((await badLanguage.json()).errorCode, 'INVALID_REQUEST_BODY');
  const badRevision = await daemon.post('/api/find_references', { symbolName: 'x', revisionName: 'nope' });
  t.equal(badRevision.status, 200, 'an unindexed revision has no matches');
  t.equal((await badRevision.json()).stats.matchCount, 0);
});
