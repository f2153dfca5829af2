import t from 'tap';
import { globToRegExp } from '../../src/config/glob.js';

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
