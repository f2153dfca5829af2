import t from 'tap';
import { fileGlobSource, globToRegExp } from '../../src/config/glob.js';

const cases: [glob: string, matches: string[], rejects: string[]][] = [
  ['main', ['main'], ['main2', 'xmain', 'feature/main']],
  ['release/*', ['release/1.0', 'release/x'], ['release', 'release/1.0/hotfix', 'prerelease/1']],
  ['release/**', ['release/1.0', 'release/1.0/hotfix'], ['release']],
  ['v?.x', ['v1.x', 'v2.x'], ['v10.x', 'v/.x']],
  ['feat+fix.(1)', ['feat+fix.(1)'], ['featfix.1', 'feat+fixx(1)']],
];

for (const [glob, matches, rejects] of cases) {
  const pattern = globToRegExp(glob);
  for (const name of matches) t.ok(pattern.test(name), `${glob} matches ${name}`);
  for (const name of rejects) t.notOk(pattern.test(name), `${glob} does not match ${name}`);
}

const fileCases: [glob: string, matches: string[], rejects: string[]][] = [
  ['**/*.ts', ['a.ts', 'src/a.ts', 'src/x/y.ts'], ['a.tsx', 'src/a.js']],
  ['src/**/*.test.{ts,tsx}', ['src/a.test.ts', 'src/x/a.test.tsx'], ['src/a.test.js', 'lib/a.test.ts']],
  ['*.{c,h}', ['main.c', 'x.h'], ['src/main.c', 'main.cc']],
  ['docs/?.md', ['docs/a.md'], ['docs/ab.md']],
  ['{a,b', ['a', 'b'], ['{a,b']],
];
for (const [glob, matches, rejects] of fileCases) {
  const pattern = new RegExp(fileGlobSource(glob));
  for (const name of matches) t.ok(pattern.test(name), `file glob ${glob} matches ${name}`);
  for (const name of rejects) t.notOk(pattern.test(name), `file glob ${glob} does not match ${name}`);
}
