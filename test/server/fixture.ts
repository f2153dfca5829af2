import path from 'node:path';
import type { Test } from 'tap';
import { commitAll, git, makeRepository, writeFiles } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

/** A small public git repository with two commits, a binary file and nested directories; its config entry. */
export function fixtureRepository(t: Test, name = 'example.com/acme/widgets') {
  const root = path.join(tempDir(t, 'trawl-fixture-'), 'widgets');
  makeRepository(root, {
    'src/parser.c':
      '#include "parser.h"\n\nint parse_expression(const char *text) {\n  return text[0] == \'(\';\n}\n\nint main(void) {\n  return parse_expression("(1)");\n}\n',
    'src/parser.h': 'int parse_expression(const char *text);\n',
    'docs/guide.md': '# Guide\n\nCall parse_expression to parse.\n',
    'README.md': '# Widgets\n\nÜnïcode line with parse_expression\ttab\n',
    'assets/logo.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03]),
  });
  const first = git(root, 'rev-parse', 'HEAD').trim();
  writeFiles(root, { 'src/lexer.c': 'int next_token(void) { return 0; }\n', 'docs/guide.md': '# Guide\n\nCall parse_expression to parse. Then next_token.\n' });
  const second = commitAll(root, 'Add the lexer\n\nIt reads tokens.');
  git(root, 'tag', 'v1.0');
  return { root, first, second, config: { name, path: root, public: true, codeHostType: 'github', webUrl: 'https://example.com/acme/widgets' } };
}

/** A repository with ~12 MB of text in which a regex without literals matches nowhere: searches for it take a while. */
export function slowCorpus(t: Test) {
  const root = path.join(tempDir(t, 'trawl-slow-'), 'slow');
  const line = 'the quick brown fox jumps over the lazy dog 0123456789\n';
  makeRepository(root, Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`text/file${i}.txt`, line.repeat(4500)])));
  return { name: 'example.com/acme/slow', path: root, public: true };
}
export const SLOW_QUERY = { query: '[a-z]{3}[0-9]{11}', matches: 10, isRegexEnabled: true };

/**
 * Four repositories (four shards) in each of which `router` is in every file's content, and in the name of
 * test/Router.js only, which static rank puts last: a capped search for it must find those first, whatever
 * the split between workers.
 */
export function routerRepositories(t: Test) {
  return ['alpha', 'beta', 'gamma', 'delta'].map((name) => {
    const root = path.join(tempDir(t, 'trawl-router-'), name);
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/module${i}.js`] = `// uses the router\nconst router = require('router');\nrouter.get('/${name}/${i}', handler);\n`;
    files['test/Router.js'] = `describe('${name}', () => it('works', () => {}));\n`;
    makeRepository(root, files);
    return { name: `example.com/acme/${name}`, path: root, public: true };
  });
}
