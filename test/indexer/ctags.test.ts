import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { CtagsPool } from '../../src/indexer/ctags.js';
import { tempDir } from '../helpers/tmp.js';

t.test('files are tagged by long-lived processes, in order, with parents', async (t) => {
  const pool = new CtagsPool('ctags', 2);
  t.teardown(() => pool.close());
  const files = Array.from({ length: 50 }, (_, i) => Buffer.from(`struct s${i} { int field${i}; };\nint f${i}(void) { return ${i}; }\n`));
  const results = await Promise.all(files.map((content, i) => pool.tags(`dir/file${i}.c`, content, 'C')));
  results.forEach((tags, i) =>
    t.match(tags, [
      { name: `s${i}`, line: 1, kind: 'struct' },
      { name: `field${i}`, line: 1, kind: 'member', scope: `s${i}`, scopeKind: 'struct' },
      { name: `f${i}`, line: 2, kind: 'function' },
    ]),
  );
  t.match(
    await pool.tags('scripts/tool', Buffer.from('#!/usr/bin/env python3\ndef entry():\n    pass\n'), 'Python'),
    [{ name: 'entry', kind: 'function' }],
    'an extension-less script is parsed as its linguist language',
  );
  t.same(await pool.tags('notes.unknownext', Buffer.from('nothing to tag here\n'), ''), [], 'an unknown language yields no tags');
});

t.test('a hanging ctags is killed; its files fail and the next file gets a fresh process', async (t) => {
  const dir = tempDir(t);
  const hanging = path.join(dir, 'hanging-ctags');
  const marker = path.join(dir, 'started');
  // First start: swallow input and never answer. Later starts: the real ctags.
  fs.writeFileSync(hanging, `#!/bin/sh\nif [ ! -e ${marker} ]; then touch ${marker}; exec cat > /dev/null; fi\nexec ctags "$@"\n`, { mode: 0o755 });
  const pool = new CtagsPool(hanging, 1, 500);
  t.teardown(() => pool.close());
  await t.rejects(pool.tags('a.c', Buffer.from('int a;\n'), 'C'), /did not finish a file within 500 ms/);
  t.match(await pool.tags('b.c', Buffer.from('int b(void) { return 0; }\n'), 'C'), [{ name: 'b', kind: 'function' }]);
});

t.test('a missing ctags fails each file with a clear error', async (t) => {
  const pool = new CtagsPool('/nonexistent/ctags', 1);
  t.teardown(() => pool.close());
  await t.rejects(pool.tags('a.c', Buffer.from('int a;\n'), 'C'), /ctags \(\/nonexistent\/ctags\) could not run/);
});
