import t from 'tap';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, validateConfig } from '../../src/config/config.js';
import { OPTIONS } from '../../src/config/options.js';
import { configReference, referenceBlock } from '../../src/config/reference.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

t.test("README's configuration reference is the one the option table generates", async (t) => {
  t.ok(fs.readFileSync(README, 'utf8').includes(referenceBlock()), 'up to date (run `npm run docs:config` after changing src/config/options.ts)');
});

t.test('the reference documents every option, with its default and bounds', async (t) => {
  const reference = configReference();
  for (const option of Object.keys(OPTIONS)) t.match(reference, `| \`${option}\` |`, option);
  t.match(reference, '| `server.maxBodyBytes` | integer 1,024–67,108,864 | `1048576` |');
  t.match(reference, '| `server.workers` | integer 1–256 | number of cores |');
});

t.test('the validator enforces what the table says', async (t) => {
  const base = { repos: [{ name: 'a/b', path: '/x' }] };
  const config = validateConfig(base, 'test');
  t.equal(config.server.maxBodyBytes, OPTIONS['server.maxBodyBytes'].default, 'defaults come from the table');
  t.equal(config.index.ctagsProcesses, OPTIONS['index.ctagsProcesses'].default);
  t.throws(() => validateConfig({ ...base, server: { maxBodyBytes: 1023 } }, 'test'), {
    message: /server\.maxBodyBytes: must be an integer from 1024 to 67108864/,
  });
  t.throws(() => validateConfig({ ...base, server: { nope: 1 } }, 'test'), ConfigError);
  t.throws(() => validateConfig({ repos: [{ name: 'a/b', path: '/x', colour: 'red' }] }, 'test'), {
    message: /repos\[0\]\.colour: unknown option \(expected one of name, path, branches, codeHostType, webUrl, displayName, public, archived, fork\)/,
  });
});
