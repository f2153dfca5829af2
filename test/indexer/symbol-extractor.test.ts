import t from 'tap';
import { SymbolExtractor } from '../../src/indexer/symbol-extractor.js';
import { symbolRows } from '../helpers/symbols.js';

t.test('files asked for in one turn are tagged together, each answered with its own symbols', async (t) => {
  const extractor = new SymbolExtractor({ ctagsCommand: 'ctags', ctagsProcesses: 2 });
  t.teardown(() => extractor.close());
  const files = Array.from({ length: 60 }, (_, i) => ({
    path: `src/f${i}.c`,
    content: Buffer.from(`${'\n'.repeat(i)}int function_${i}(void) { return ${i}; }\n`),
  }));
  const symbols = await Promise.all(files.map((file) => extractor.symbols(file.path, file.content, 'C')));
  t.same(
    symbols.map((packed, i) => symbolRows(files[i]!.content, packed)),
    files.map((_, i) => [[`function_${i}`, 'function']]),
  );
  const later = Buffer.from('struct later { int field; };\n');
  t.same(
    symbolRows(later, await extractor.symbols('later.c', later, 'C')),
    [
      ['later', 'struct'],
      ['field', 'member', 'later', 'struct'],
    ],
    'and a file asked for afterwards',
  );
});

t.test('a file asked for in the turn close is called is answered or failed, never left waiting, and no worker outlives close', async (t) => {
  const extractor = new SymbolExtractor({ ctagsCommand: 'ctags', ctagsProcesses: 1 });
  const content = Buffer.from('int last(void);\nint last(void) { return 0; }\n');
  const symbols = extractor.symbols('last.c', content, 'C');
  await t.resolves(extractor.close());
  // ctags may finish the file before the close reaches it, or be stopped first.
  const [outcome] = await Promise.allSettled([symbols]);
  if (outcome!.status === 'fulfilled') t.same(symbolRows(content, outcome!.value), [['last', 'function']], 'answered with its symbols');
  else t.match(outcome!.reason, { message: /symbol worker exited/ }, 'failed with the worker');
});
