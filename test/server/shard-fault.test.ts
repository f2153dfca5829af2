import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { SHARD_FILE_EXTENSION } from '../../src/index/format.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

// A shard file truncated in place under the daemon's mappings (a full disk, an operator's mistake, a bad
// copy): reads past its new end raise SIGBUS, which kills a process that does not guard its mappings.
t.test('a shard truncated under its mappings is a counted shard failure, never a dead daemon', async (t) => {
  const root = path.join(tempDir(t, 'trawl-fault-'), 'big');
  // Many pages of content, the needle in the last file: the search reads well past the first page.
  const filler = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n'.repeat(2000);
  makeRepository(root, {
    ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`text/filler${i}.txt`, filler])),
    'src/z.c': 'int truncation_needle = 1;\n',
  });
  const daemon = await startDaemon(t, { repos: [{ name: 'example.com/acme/big', path: root, public: true }], auth: { anonymousAccess: true } });
  const search = async () => {
    const response = await daemon.post('/api/search', { query: 'truncation_needle', matches: 10 });
    t.equal(response.status, 200);
    return (await response.json()) as { files: { fileName: { text: string } }[]; stats: { crashes: number } };
  };

  const before = await search();
  t.same(
    before.files.map((file) => file.fileName.text),
    ['src/z.c'],
  );
  t.equal(before.stats.crashes, 0);

  const shardDirectory = path.join(path.dirname(daemon.configFile), 'data', 'shards');
  const shards = fs.readdirSync(shardDirectory).filter((name) => name.endsWith(SHARD_FILE_EXTENSION));
  t.equal(shards.length, 1, 'one shard');
  const shardFile = path.join(shardDirectory, shards[0]!);
  t.ok(fs.statSync(shardFile).size > 16 * 4096, 'the shard spans many pages');
  fs.truncateSync(shardFile, 4096);

  for (const round of ['the search that meets the fault', 'a search after it']) {
    const after = await search();
    t.same(after.files, [], `${round}: nothing read from the shrunk shard is served`);
    t.equal(after.stats.crashes, 1, `${round}: the shard counts as failed`);
  }
  t.match(await (await daemon.fetch('/metrics')).text(), /^trawl_shard_failures_total 2$/m, 'each search counted the failed shard');
  t.equal((await daemon.fetch('/api/health')).status, 200, 'the daemon keeps serving');
  t.equal(daemon.process.exitCode, null);
  t.equal(daemon.process.signalCode, null);
});
