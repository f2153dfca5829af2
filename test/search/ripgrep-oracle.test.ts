/**
 * The correctness oracle: for a table of queries over a fixture corpus, the
 * (file, line) pairs trawl matches equal those ripgrep (Debian `ripgrep`) finds.
 */
import { shardDirectory } from '../../src/index/data-directory.js';
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { validateConfig } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { readManifest } from '../../src/index/manifest.js';
import { Shard } from '../../src/index/shard-reader.js';
import { parseQuery } from '../../src/query/parser.js';
import { searchShard } from '../../src/search/shard/shard-search.js';
import { layChunks } from '../../src/search/response/chunks.js';
import { RANGE_WORDS } from '../../src/search/response/positions.js';
import { tempDir } from '../helpers/tmp.js';
import { writeFiles } from '../helpers/git.js';

const LONG_LITERAL = `long_${'x'.repeat(140)}_literal`;

const corpus: Record<string, string> = {
  'src/main.c': '#include <stdio.h>\n\nint main(void) {\n\tprintf("Hello, World\\n");\n\treturn 0; /* PM_RESUME */\n}\n',
  'src/power.h': '#define PM_RESUME 1\n#define PM_SUSPEND 2\n#define pm_resume_lower 3\nstatic int PM_RESUME_COUNT;\n',
  'src/windows.txt': 'line one\r\nPM_RESUME in a CRLF file\r\n\tindented\twith tabs\r\nlast line without newline',
  'docs/unicode.md': '# Grüße\n\nÜber straße — ÜBER STRASSE\nnaïve café résumé Résumé\n日本語のテキスト resume\n',
  'docs/notes.md': 'TODO: resume work\ntodo: lower\nToDo: Mixed\nnothing here\n',
  'lib/util.py': 'def resume_all(items):\n    for item in items:\n        item.resume()\n    return len(items)  # resume count\n',
  'empty.txt': '',
  'big/registers.h': bigFile(),
};

/**
 * A file long enough to be cut into index blocks (docs/index-format.md,
 * BLKS: 16 KiB blocks for files over 64 KiB), with occurrences across block
 * boundaries, at a block's first byte, in its last bytes, and at the end of
 * the file.
 */
function bigFile(): string {
  const block = 16384;
  const lines: string[] = [];
  for (let i = 0; lines.join('').length < 10 * block; i++) lines.push(`#define reg_${String(i).padStart(5, '0')}_mask 0x${i.toString(16)}\n`);
  const text = Buffer.from(lines.join(''));
  const put = (offset: number, value: string) => Buffer.from(value).copy(text, offset);
  put(block - 4, 'PM_RESUME'); // across the first boundary
  put(3 * block, 'pm_Resume'); // a block's first byte
  put(5 * block - 2, LONG_LITERAL); // longer than a block's reach
  put(7 * block - 3, 'RÉSUMÉ'); // multi-byte, across a boundary
  put(8 * block - 1, 'PM_RESUME'); // starting at a block's last byte
  return text.toString() + 'ToDo PM_RESUME';
}

/** [pattern, regex, case-sensitive, the same pattern for ripgrep where its syntax differs]. */
const queries: [pattern: string, regex: boolean, caseSensitive: boolean, forRipgrep?: string][] = [
  ['PM_RESUME', false, true],
  ['PM_RESUME', false, false],
  ['resume', false, false],
  ['Resume', false, true],
  ['todo', false, false],
  ['ToDo', false, true],
  ['résumé', false, false],
  ['über', false, false],
  ['日本語', false, true],
  ['\t', false, true],
  ['with tabs', false, true],
  ['line', false, true],
  ['pm_resume', false, true],
  [LONG_LITERAL, false, true],
  [LONG_LITERAL.toUpperCase(), false, false],
  ['reg_00042_mask', false, true],
  ['[A-Z]+_RESUME', true, true],
  ['pm_\\w+', true, false],
  ['^#define\\s+PM_', true, true],
  ['resume\\(\\)', true, true],
  ['item[s]?', true, true],
  ['\\d+$', true, true],
  ['(?i)todo:', true, true],
  ['r[eé]sum[eé]', true, false],
  // Searched in the lines that hold their longest literal (the big file's by its blocks): at the file's end, across blocks.
  ['PM_RESUME$', true, true],
  ['_mask 0x1[0-9a-f]$', true, true],
  ['^#define reg_0004\\d', true, true],
  ['p[m]_resume\\b', true, false],
  // Runs between semicolons: matches that may hold a newline but no `;`.
  ['PM_\\w+\\s+\\d$', true, true],
  ['\\w+\\s*\\(items\\)', true, true],
  // RE2's \w is ASCII, ripgrep's Unicode: ripgrep gets the ASCII class spelled out.
  ['\\w{5}[ \t]+\\w{5}', true, true, '[0-9A-Za-z_]{5}[ \t]+[0-9A-Za-z_]{5}'],
  ['^\\s*return\\b', true, true, '^\\s*return(?-u:\\b)'],
];

t.test('trawl finds exactly the lines ripgrep finds', async (t) => {
  const root = tempDir(t);
  const repo = path.join(root, 'corpus');
  writeFiles(repo, corpus);
  const dataDir = path.join(root, 'data');
  await runIndex(validateConfig({ dataDir, repos: [{ name: 'oracle', path: repo }], index: { ctagsCommand: '' } }, 'oracle'));
  const shards = readManifest(dataDir).repositories.oracle!.shards.map((file) => Shard.open(path.join(shardDirectory(dataDir), file)));

  for (const [pattern, regex, caseSensitive, forRipgrep] of queries) {
    const ours = new Set<string>();
    // content: so that paths do not match; quoted so spaces stay in the pattern.
    const query = parseQuery(`content:"${pattern.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`, { regex, caseSensitive });
    for (const shard of shards) {
      const result = searchShard(shard, query, {}, { maxMatchRanges: 100000, deadline: Infinity, isCancelled: () => false });
      for (const match of result.matches) {
        // Each range's line as the response gives it (its start's position).
        const { positions } = layChunks({ content: shard.content(match.doc), ranges: match.content, contextLines: 0, symbols: [] });
        for (let at = 0; at < positions.length; at += RANGE_WORDS) ours.add(`${shard.path(match.doc)}:${positions[at + 1]}`);
      }
    }
    const theirs = ripgrep(repo, forRipgrep ?? pattern, regex, caseSensitive);
    t.same([...ours].sort(), theirs, `${regex ? 'regex' : 'literal'}${caseSensitive ? '' : ', case-insensitive'}: ${pattern} (${theirs.length} lines)`);
  }
});

/** "path:line" for every line ripgrep matches, sorted. */
function ripgrep(cwd: string, pattern: string, regex: boolean, caseSensitive: boolean): string[] {
  const args = ['--no-config', '--no-heading', '--line-number', '--with-filename', '--hidden', '--no-ignore', '--color=never'];
  if (!regex) args.push('--fixed-strings');
  args.push(caseSensitive ? '--case-sensitive' : '--ignore-case', '-e', pattern, '.');
  let out = '';
  try {
    out = execFileSync('rg', args, { cwd, encoding: 'utf8' });
  } catch (error) {
    if ((error as { status?: number }).status !== 1) throw error; // 1 = no match
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [file, number] = line.split(':');
      return `${file!.replace(/^\.\//, '')}:${number}`;
    })
    .sort();
}

t.test('ripgrep is installed for the oracle', async (t) => {
  t.ok(fs.existsSync('/usr/bin/rg'), 'apt-get install ripgrep (README test command)');
});
