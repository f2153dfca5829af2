import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { shardDirectory } from '../../src/index/data-directory.js';
import { validateConfig, type Config } from '../../src/config/config.js';
import { runIndex, DataDirectoryLockedError, RETIRED_SHARD_GRACE_MS } from '../../src/indexer/run-index.js';
import { MAX_LISTED_WARNINGS } from '../../src/indexer/build-shards.js';
import { readManifest, writeManifest } from '../../src/index/manifest.js';
import { Shard } from '../../src/index/shard-reader.js';
import { DocumentFlags } from '../../src/index/format.js';
import { trigramAt } from '../../src/index/trigrams.js';
import { native } from '../../native/index.js';
import { tempDir } from '../helpers/tmp.js';
import { commitAll, git, loseObject, makeRepository, writeFiles } from '../helpers/git.js';

const APP_C_MAIN = `#include "util.h"

struct point {
\tint x;
\tint y;
};

static int add(int a, int b) { return a + b; }

int main(void) {
\treturn add(1, 2);
}
`;
const APP_C_RELEASE = APP_C_MAIN.replace('return add(1, 2);', 'return add(40, 2); /* release */');
const NON_ASCII_PATH = 'docs/naïve-日本語.md';
const NON_ASCII_CONTENT = '# Grüße\n\nこんにちは世界 — ünïcödé content\n';
const MAX_FILE_BYTES = 2000;

/** A repository with two indexed branches, binary, large, non-ASCII and shebang files. */
function makeFixture(root: string): { main: string; release: string } {
  git(root, 'init', '-q');
  writeFiles(root, {
    'src/app.c': APP_C_MAIN,
    'src/util.h': '#ifndef UTIL_H\n#define UTIL_H\nint util_helper(int value);\n#endif\n',
    'README.md': '# Fixture\n\nA small repository.\n',
    [NON_ASCII_PATH]: NON_ASCII_CONTENT,
    'assets/blob.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x00, 0xff]),
    'data/large.txt': 'x'.repeat(MAX_FILE_BYTES + 1),
    'tools/run': '#!/usr/bin/env python3\ndef tool_entry():\n    return 1\n',
    'test/app_test.c': 'int test_add(void) { return 0; }\n',
  });
  fs.symlinkSync('src/app.c', path.join(root, 'link-to-app.c'));
  const main = commitAll(root, 'main');
  git(root, 'checkout', '-q', '-b', 'release/1');
  writeFiles(root, { 'src/app.c': APP_C_RELEASE, 'only_release.py': 'class ReleaseOnly:\n    def method(self):\n        pass\n' });
  fs.rmSync(path.join(root, 'README.md'));
  const release = commitAll(root, 'release');
  git(root, 'checkout', '-q', '-b', 'feature/unindexed');
  writeFiles(root, { 'feature.txt': 'never indexed\n' });
  commitAll(root, 'feature');
  git(root, 'checkout', '-q', 'main');
  return { main, release };
}

function configFor(dataDir: string, repos: unknown[]): Config {
  return validateConfig({ dataDir, repos, index: { maxFileBytes: MAX_FILE_BYTES, ctagsProcesses: 1 } }, 'test');
}

function openShards(dataDir: string, name: string): Shard[] {
  const entry = readManifest(dataDir).repositories[name]!;
  return entry.shards.map((file) => Shard.open(path.join(shardDirectory(dataDir), file)));
}

function documentsByPath(shard: Shard) {
  return Array.from({ length: shard.documentCount }, (_, id) => ({
    id,
    path: shard.path(id),
    mask: shard.branchMask(id),
    content: shard.content(id).toString('utf8'),
    language: shard.language(id),
    flags: shard.flags(id),
    symbols: shard.symbols(id).map((s) => ({ name: shard.content(id).subarray(s.start, s.end).toString(), kind: s.kind, parent: s.parent })),
  }));
}

t.test('indexing a git repository with two branches', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  fs.mkdirSync(repoDir);
  const commits = makeFixture(repoDir);
  const dataDir = path.join(root, 'data');
  const config = configFor(dataDir, [{ name: 'example.com/acme/fixture', path: repoDir, branches: ['release/*', 'no-such-branch'], public: true }]);

  const outcomes = await runIndex(config);
  t.equal(outcomes.length, 1);
  t.equal(outcomes[0]!.status, 'indexed');
  const entry = readManifest(dataDir).repositories['example.com/acme/fixture']!;
  t.equal(entry.state, 'ready');
  t.same(
    entry.branches,
    [
      { name: 'HEAD', commit: commits.main },
      { name: 'main', commit: commits.main },
      { name: 'release/1', commit: commits.release },
    ],
    'HEAD, the default branch under its own name, then the configured ones',
  );
  t.match(entry.warnings, [/"no-such-branch" matches no branch/], 'an unknown branch is reported, not fatal');

  const [shard, ...more] = openShards(dataDir, 'example.com/acme/fixture');
  t.equal(more.length, 0, 'a small repository fits one shard');
  t.equal(shard!.meta.repository.name, 'example.com/acme/fixture');
  t.equal(shard!.meta.repository.public, true);
  const docs = documentsByPath(shard!);
  const find = (p: string, mask?: bigint) => docs.filter((d) => d.path === p && (mask === undefined || d.mask === mask));

  t.same(
    docs.map((d) => d.path).filter((p) => p.startsWith('link')),
    [],
    'symlinks are not indexed',
  );
  t.same(find('feature.txt'), [], 'unconfigured branches are not indexed');
  t.equal(find('src/app.c').length, 2, 'a file that differs between branches is stored per version');
  t.equal(find('src/app.c', 3n)[0]?.content, APP_C_MAIN, 'HEAD version on bits 0 and 1 (HEAD and main)');
  t.equal(find('src/app.c', 4n)[0]?.content, APP_C_RELEASE, 'release version on bit 2');
  t.equal(find('src/util.h', 7n).length, 1, 'an identical blob on every branch is stored once with every bit');
  t.equal(find('README.md', 3n).length, 1, 'a file deleted on release is only on HEAD (and main)');
  t.equal(find('only_release.py', 4n).length, 1, 'a file only on release is only on release');

  const nonAscii = find(NON_ASCII_PATH)[0];
  t.equal(nonAscii?.content, NON_ASCII_CONTENT, 'non-ASCII path and content round-trip');
  t.equal(nonAscii?.language, 'Markdown');

  const binary = find('assets/blob.bin')[0]!;
  t.equal(binary.flags, DocumentFlags.binary, 'binary files are flagged');
  t.equal(binary.content, '', 'binary content is not stored');
  const large = find('data/large.txt')[0]!;
  t.equal(large.flags, DocumentFlags.tooLarge, 'large files are flagged');
  t.equal(large.content, '', 'large content is not stored');
  t.equal(shard!.originalSize(large.id), MAX_FILE_BYTES + 1, 'the original size is kept');
  t.ok(shard!.pathTrigrams.postingsOf(trigramAt(Buffer.from('large'), 1))?.includes(large.id), 'a skipped file is findable by path');

  t.equal(find('src/app.c')[0]?.language, 'C');
  t.equal(find('src/util.h')[0]?.language, 'C');
  t.equal(find('tools/run')[0]?.language, 'Python', 'language from the shebang');
  t.equal(find('only_release.py')[0]?.language, 'Python');

  const mainSymbols = find('src/app.c', 3n)[0]!.symbols;
  t.match(mainSymbols, [
    { name: 'point', kind: 'struct' },
    { name: 'x', kind: 'member', parent: { symbol: 'point', kind: 'struct' } },
    { name: 'y', kind: 'member', parent: { symbol: 'point', kind: 'struct' } },
    { name: 'add', kind: 'function' },
    { name: 'main', kind: 'function' },
  ]);
  t.match(find('only_release.py')[0]!.symbols, [
    { name: 'ReleaseOnly', kind: 'class' },
    { name: 'method', kind: 'member', parent: { symbol: 'ReleaseOnly', kind: 'class' } },
  ]);
  t.match(find('tools/run')[0]!.symbols, [{ name: 'tool_entry', kind: 'function' }]);

  const order = docs.map((d) => d.path);
  t.ok(order.indexOf('test/app_test.c') > order.indexOf('only_release.py'), 'tests rank after ordinary files');
  t.ok(order.indexOf('README.md') < order.indexOf('src/app.c'), 'shorter paths rank first');

  await t.test('an unchanged repository is skipped', async (t) => {
    const generation = readManifest(dataDir).generation;
    const again = await runIndex(config);
    t.same(again, [{ name: 'example.com/acme/fixture', status: 'unchanged' }]);
    t.equal(readManifest(dataDir).generation, generation, 'no new generation');
  });

  await t.test('a new commit on an indexed branch re-indexes and retires the old shards', async (t) => {
    const oldShards = readManifest(dataDir).repositories['example.com/acme/fixture']!.shards;
    git(repoDir, 'checkout', '-q', 'release/1');
    writeFiles(repoDir, { 'src/new_file.go': 'package fresh\n\nfunc Fresh() {}\n' });
    const newCommit = commitAll(repoDir, 'more');
    git(repoDir, 'checkout', '-q', 'main');
    const outcomes = await runIndex(config);
    t.equal(outcomes[0]!.status, 'indexed');
    const entry = readManifest(dataDir).repositories['example.com/acme/fixture']!;
    t.equal(entry.branches[2]!.commit, newCommit);
    const docs = documentsByPath(openShards(dataDir, 'example.com/acme/fixture')[0]!);
    t.match(
      docs.find((d) => d.path === 'src/new_file.go'),
      { mask: 4n, language: 'Go', symbols: [{ name: 'fresh' }, { name: 'Fresh', kind: 'func' }] },
    );
    // Searches planned on the previous generation may still open the old shards: they stay for a grace period.
    const retired = readManifest(dataDir).retired ?? [];
    t.same(retired.map((r) => r.file).sort(), [...oldShards].sort(), 'the old shards are retired');
    for (const file of oldShards) t.ok(fs.existsSync(path.join(shardDirectory(dataDir), file)), `old shard ${file} kept during the grace period`);
    const manifest = readManifest(dataDir);
    manifest.retired = retired.map((r) => ({ ...r, at: new Date(Date.now() - RETIRED_SHARD_GRACE_MS - 1000).toISOString() }));
    writeManifest(dataDir, manifest);
    await runIndex(config);
    for (const file of oldShards) t.notOk(fs.existsSync(path.join(shardDirectory(dataDir), file)), `old shard ${file} removed after the grace period`);
    t.same(readManifest(dataDir).retired, [], 'and no longer listed');
  });
});

t.test('bad repositories are reported one by one and do not stop the others', async (t) => {
  const root = tempDir(t);
  const good = path.join(root, 'good');
  makeRepository(good, { 'hello.txt': 'hello\n' });
  const notRepo = path.join(root, 'file.txt');
  fs.writeFileSync(notRepo, 'a file');
  const brokenGit = path.join(root, 'broken');
  writeFiles(brokenGit, { '.git': 'gitdir: /nonexistent/elsewhere\n' });
  const emptyGit = path.join(root, 'empty');
  fs.mkdirSync(emptyGit);
  git(emptyGit, 'init', '-q');
  const plain = path.join(root, 'plain');
  writeFiles(plain, { 'notes/todo.md': 'remember the milk\n', 'main.rs': 'fn main() {}\n', '.git/ignored': 'not a repo dir' });
  fs.rmSync(path.join(plain, '.git'), { recursive: true });

  const dataDir = path.join(root, 'data');
  const outcomes = await runIndex(
    configFor(dataDir, [
      { name: 'missing', path: path.join(root, 'does-not-exist') },
      { name: 'file', path: notRepo },
      { name: 'broken', path: brokenGit },
      { name: 'empty', path: emptyGit },
      { name: 'good', path: good },
      { name: 'plain', path: plain },
    ]),
  );
  t.match(outcomes, [
    { name: 'missing', status: 'failed', error: /cannot be read: ENOENT/ },
    { name: 'file', status: 'failed', error: /is not a directory/ },
    { name: 'broken', status: 'failed', error: /not a readable git repository/ },
    { name: 'empty', status: 'failed', error: /HEAD does not resolve to a commit/ },
    { name: 'good', status: 'indexed', documents: 1 },
    { name: 'plain', status: 'indexed', documents: 2 },
  ]);
  const manifest = readManifest(dataDir);
  t.equal(manifest.repositories.missing?.state, 'error');
  t.match(manifest.repositories.missing?.error, /ENOENT/);
  t.equal(manifest.repositories.good?.state, 'ready');
  const plainShard = openShards(dataDir, 'plain')[0]!;
  t.same(
    documentsByPath(plainShard)
      .map((d) => [d.path, d.language, d.mask])
      .sort(),
    [
      ['main.rs', 'Rust', 1n],
      ['notes/todo.md', 'Markdown', 1n],
    ],
  );
  t.equal(plainShard.meta.branches[0]?.name, 'HEAD', 'a plain directory has the pseudo-branch HEAD');

  await t.test('a repository removed from the config loses its shards', async (t) => {
    const goodShards = manifest.repositories.good!.shards;
    await runIndex(configFor(dataDir, [{ name: 'plain', path: plain }]));
    const after = readManifest(dataDir);
    t.same(Object.keys(after.repositories), ['plain']);
    t.same(
      after.retired?.map((r) => r.file),
      goodShards,
      'its shards are retired (deleted after the grace period)',
    );
  });
});

t.test('a locked data directory is refused', async (t) => {
  const dataDir = tempDir(t);
  fs.mkdirSync(shardDirectory(dataDir));
  const fd = fs.openSync(path.join(dataDir, 'index.lock'), 'a');
  t.teardown(() => fs.closeSync(fd));
  t.equal(native.tryLockExclusive(fd), true);
  await t.rejects(runIndex(configFor(dataDir, [])), DataDirectoryLockedError);
});

t.test('a repository is split into several shards past the content cap', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  const files: Record<string, string> = {};
  for (let i = 0; i < 40; i++) files[`f${String(i).padStart(2, '0')}.txt`] = `file ${i} `.repeat(10000).slice(0, 60 * 1024);
  writeFiles(repoDir, files);
  const dataDir = path.join(root, 'data');
  const config = validateConfig({ dataDir, repos: [{ name: 'big', path: repoDir }], index: { maxShardContentBytes: 1 << 20, ctagsCommand: '' } }, 'test');
  const outcomes = await runIndex(config);
  t.match(outcomes, [{ status: 'indexed', documents: 40 }]);
  const shards = openShards(dataDir, 'big');
  t.ok(shards.length >= 2, `split into ${shards.length} shards`);
  t.same(
    shards.map((s) => s.meta.shardIndex),
    shards.map((_, i) => i),
  );
  t.equal(
    shards.reduce((sum, s) => sum + s.documentCount, 0),
    40,
    'every document is in exactly one shard',
  );
  for (const shard of shards) t.ok(shard.bytes.length < (1 << 20) * 1.5, 'each shard stays near the cap');
});

t.test('without a working ctags, files are indexed without symbols and the problem is reported', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  writeFiles(repoDir, { 'a.c': 'int a(void) { return 1; }\n', 'b.c': 'int b(void) { return 2; }\n' });
  const dataDir = path.join(root, 'data');
  const config = validateConfig({ dataDir, repos: [{ name: 'r', path: repoDir }], index: { ctagsCommand: path.join(root, 'no-ctags-here') } }, 'test');
  const outcomes = await runIndex(config);
  t.match(outcomes, [{ status: 'indexed', documents: 2 }]);
  const warnings = outcomes[0]!.status === 'indexed' ? [...outcomes[0]!.warnings].sort() : [];
  t.match(
    warnings,
    [/^a\.c: indexed without symbols \(ctags .*could not run/, /^b\.c: indexed without symbols/],
    'one warning per file (in any order: ctags runs in parallel)',
  );
  const shard = openShards(dataDir, 'r')[0]!;
  t.same([shard.symbols(0), shard.symbols(1)], [[], []]);
  t.equal(shard.content(0).toString().startsWith('int'), true, 'content is still indexed');
});

t.test('an unreadable blob is reported and the rest of the repository is indexed', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, { 'ok.txt': 'fine\n', 'lost.txt': 'this object will be deleted\n' });
  loseObject(repoDir, 'HEAD:lost.txt');
  const dataDir = path.join(root, 'data');
  const outcomes = await runIndex(configFor(dataDir, [{ name: 'damaged', path: repoDir }]));
  t.match(outcomes, [{ status: 'indexed', documents: 1, warnings: [/lost\.txt: not indexed, cannot be read \(git cat-file: [0-9a-f]{40} missing\)/] }]);
  t.same(
    documentsByPath(openShards(dataDir, 'damaged')[0]!).map((d) => d.path),
    ['ok.txt'],
  );
});

t.test('a directory whose tree is missing is reported and the rest of the repository is indexed', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, { 'ok.txt': 'fine\n', 'lost/a.txt': 'under a lost tree\n', 'lost/deeper/b.txt': 'deeper\n', 'kept/c.txt': 'kept\n' });
  // A second branch at another commit with the same lost directory: one warning, not one per branch.
  git(repoDir, 'checkout', '-q', '-b', 'other');
  writeFiles(repoDir, { 'other.txt': 'on the other branch\n' });
  commitAll(repoDir, 'other');
  const tree = loseObject(repoDir, 'HEAD:lost');
  const dataDir = path.join(root, 'data');
  const outcomes = await runIndex(configFor(dataDir, [{ name: 'damaged', path: repoDir, branches: ['*'] }]));
  t.match(outcomes, [
    { status: 'indexed', warnings: [new RegExp(`^lost/: not indexed, its tree cannot be read \\(git object ${tree} is missing from this server's copy`)] },
  ]);
  t.equal((outcomes[0] as { warnings: string[] }).warnings.length, 1, 'one warning for both branches');
  t.same(
    documentsByPath(openShards(dataDir, 'damaged')[0]!)
      .map((d) => d.path)
      .sort(),
    ['kept/c.txt', 'ok.txt', 'other.txt'],
    'every file outside it is indexed',
  );

  // Past the listed bound the rest are counted in one line. (Committing writes lost/'s tree again from the index.)
  const many = MAX_LISTED_WARNINGS + 3;
  writeFiles(repoDir, Object.fromEntries(Array.from({ length: many }, (_, i) => [`gone/${i}/f.txt`, `file ${i}\n`])));
  commitAll(repoDir, 'many directories');
  for (let i = 0; i < many; i++) loseObject(repoDir, `HEAD:gone/${i}`);
  const [again] = (await runIndex(configFor(dataDir, [{ name: 'damaged', path: repoDir, branches: ['*'] }]))) as { warnings: string[] }[];
  t.equal(again!.warnings.filter((warning) => /^gone\/\d+\/: not indexed/.test(warning)).length, MAX_LISTED_WARNINGS, 'the first listed');
  t.equal(again!.warnings.at(-1), `${many - MAX_LISTED_WARNINGS} more directories not indexed, their trees cannot be read`, 'the rest counted');
});

t.test('warnings past the listed bound are counted in one line, in the outcome and the manifest', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  const lost = MAX_LISTED_WARNINGS + 3;
  makeRepository(repoDir, { 'ok.txt': 'fine\n', ...Object.fromEntries(Array.from({ length: lost }, (_, i) => [`lost/${i}.txt`, `lost ${i}\n`])) });
  for (let i = 0; i < lost; i++) loseObject(repoDir, `HEAD:lost/${i}.txt`);
  const dataDir = path.join(root, 'data');
  const outcomes = await runIndex(configFor(dataDir, [{ name: 'damaged', path: repoDir }]));
  const warnings = outcomes[0]!.status === 'indexed' ? outcomes[0]!.warnings : [];
  t.equal(warnings.length, MAX_LISTED_WARNINGS + 1, 'the listed warnings and one line for the rest');
  t.ok(
    warnings.slice(0, -1).every((warning) => /^lost\/\d+\.txt: not indexed, cannot be read/.test(warning)),
    'each listed warning names its file',
  );
  t.equal(warnings.at(-1), '3 more files not indexed or indexed without symbols');
  t.same(readManifest(dataDir).repositories['damaged']!.warnings, warnings, 'the manifest holds the same');
  t.match(outcomes, [{ status: 'indexed', documents: 1 }]);
});
