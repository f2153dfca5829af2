import t from 'tap';
import { ESLint } from 'eslint';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

// The layering of docs/architecture.md, as eslint.config.js encodes it (`npm run lint` runs the same check).
const eslint = new ESLint({ cwd: fileURLToPath(new URL('..', import.meta.url)) });

t.test("src/ keeps its layering; src/, test/ and bench/ pass typescript-eslint's recommended rules", async (t) => {
  const results = await eslint.lintFiles(['src', 'test', 'bench']);
  const problems = results.flatMap((result) => result.messages.map((message) => `${result.filePath}:${message.line} ${message.ruleId}: ${message.message}`));
  t.same(problems, [], 'no import crosses a layer it must not, and no other rule is broken');
  t.ok(results.length > 100, `every source file was read (${results.length})`);
});

t.test('the rules refuse what the architecture forbids', async (t) => {
  // The snippets import names they never use: only the layering rule's verdict counts here.
  const refused = async (filePath: string, source: string) =>
    (await eslint.lintText(source, { filePath }))
      .flatMap((result) => result.messages.map((message) => message.ruleId))
      .filter((rule) => rule !== '@typescript-eslint/no-unused-vars');
  const cases: [string, string, boolean][] = [
    ['src/query/planner.ts', "import { app } from '../server/app.js';", true],
    ['src/index/reader.ts', "import { auth } from '../auth/store.js';", true],
    ['src/query/planner.ts', "import { Shard } from '../index/shard-reader.js';", true],
    ['src/query/planner.ts', "import { resolveLanguage } from '../language/languages.js';", false],
    ['src/query/planner.ts', "import { MAX_BRANCHES } from '../index/format.js';", true],
    ['src/language/languages.ts', "import { ShardFormatError } from '../index/errors.js';", true],
    ['src/api/auth-schemas.ts', "import { AUTH_LIMITS } from '../auth/limits.js';", false],
    ['src/api/auth-schemas.ts', "import { AuthStore } from '../auth/store.js';", true],
    ['src/auth/password.ts', "import { ERROR_CODES } from '../api/errors.js';", true],
    ['src/search/fan-out.ts', "import task from '../worker/search-thread.js';", true],
    ['src/search/fan-out.ts', "import type { SearchTask } from '../worker/search-protocol.js';", false],
    ['src/search/shard/scan.ts', "import task from '../../worker/search-thread.js';", true],
    ['src/search/shard/scan.ts', "import type { StopReason } from '../../worker/search-protocol.js';", false],
    ['src/indexer/pass.ts', "import '../worker/index-thread.js';", true],
    ['src/indexer/pass.ts', "import { threadUrl } from '../worker/thread-url.js';", false],
    ['src/worker/search-protocol.ts', "import type { Found } from '../search/response/build.js';", true],
    ['src/worker/index-protocol.ts', "import type { IndexReporter } from '../indexer/run-index.js';", true],
    ['src/worker/search-thread.ts', "import { searchShards } from '../search/shard/evaluate.js';", false],
    ['src/server/routes/raw.ts', "import { Shard } from '../../index/shard-reader.js';", true],
    ['src/web/page.ts', "import { SearchPool } from '../search/pool.js';", true],
    ['src/web/page.ts', "import type { FileResult } from '../api/types.js';", false],
    ['src/auth/keys.ts', "import { listCommits } from '../git/history.js';", true],
  ];
  for (const [file, source, forbidden] of cases) {
    t.same(await refused(file, source), forbidden ? ['no-restricted-imports'] : [], `${file}: ${source}`);
  }
});

t.test('the per-match files refuse a spread plus members; per-search code may use one', async (t) => {
  const source = 'export const withShard = (match: { doc: number }, shard: string) => ({ ...match, shard });\n';
  const rules = async (filePath: string) => (await eslint.lintText(source, { filePath })).flatMap((result) => result.messages.map((message) => message.ruleId));
  t.same(await rules('src/search/shard/evaluate.ts'), ['no-restricted-syntax'], 'per match: refused');
  t.same(await rules('src/search/response/build.ts'), ['no-restricted-syntax'], 'per file: refused');
  t.same(await rules('src/search/pool.ts'), [], 'per search: allowed');
});

t.test('search results are ranked by one order, written once (search/shard/rank.ts compareRanks)', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '--', 'src/search', 'src/worker', 'src/server'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts') && fs.existsSync(path.join(root, file)));
  const ordering = /localeCompare|\.score\s*-|score[A-Z]\w*\s*-\s*score/;
  const orderingFiles = files.filter((file) => ordering.test(fs.readFileSync(path.join(root, file), 'utf8')));
  t.same(orderingFiles, ['src/search/shard/rank.ts'], 'only rank.ts compares scores or locations');
  const ranked = files.filter((file) => /\bcompareRanks\(/.test(fs.readFileSync(path.join(root, file), 'utf8')));
  t.ok(ranked.length >= 3, `the merger's ranking, the rendered files' interleaving and each shard's cut use it (${ranked.join(', ')})`);
});

t.test('modules stay readable: no source file over 420 lines but generated ones, docs/benchmarks.md under 360', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const lineCount = (file: string) => fs.readFileSync(path.join(root, file), 'utf8').split('\n').length - 1;
  const sources = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '--', 'src'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /\.(ts|cc|h)$/.test(file) && fs.existsSync(path.join(root, file)));
  const generated = (file: string) => fs.readFileSync(path.join(root, file), 'utf8').startsWith('// Generated by');
  const long = sources.filter((file) => !generated(file) && lineCount(file) > 420).map((file) => `${file}: ${lineCount(file)}`);
  t.same(long, [], 'split a module at its seams rather than grow it (docs/architecture.md)');
  t.ok(sources.length > 100, `every source file was read (${sources.length})`);
  t.ok(lineCount('docs/benchmarks.md') < 360, 'benchmarks.md: tables and one line per decision');
});

t.test('the repository relies on nothing outside it: no tracked file points at a document beside the checkout', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((file) => /\.(ts|js|md|json|sh)$|^\.ci\//.test(file));
  const outside = /\.\.\/shared\/|\bshared\/(?:spec|notes|ARCHITECTURE)/;
  const offenders = tracked.filter((file) => fs.existsSync(path.join(root, file)) && outside.test(fs.readFileSync(path.join(root, file), 'utf8')));
  t.same(offenders, [], 'docs, code and tests cite files of this repository only');
  t.ok(tracked.length > 100, `every tracked text file was read (${tracked.length})`);
});

t.test('every TypeScript file is formatted as .prettierrc.json says (npm run format)', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const files = execFileSync('git', ['ls-files', '-z', '--', 'src/*.ts', 'test/*.ts', 'bench/*.ts', 'native/*.ts', 'eslint.config.js'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file && fs.existsSync(path.join(root, file)));
  const unformatted: string[] = [];
  for (const file of files) {
    const filepath = path.join(root, file);
    if ((await prettier.getFileInfo(filepath, { ignorePath: path.join(root, '.prettierignore') })).ignored) continue;
    const options = await prettier.resolveConfig(filepath);
    if (!(await prettier.check(fs.readFileSync(filepath, 'utf8'), { ...options, filepath }))) unformatted.push(file);
  }
  t.same(unformatted, [], 'no file differs from what the formatter writes');
  t.ok(files.length > 100, `every tracked TypeScript file was read (${files.length})`);
});
