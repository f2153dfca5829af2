import t from 'tap';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { languageDataSource } from '../../src/language/language-data-source.js';
import { detectLanguage, resolveLanguage } from '../../src/language/languages.js';

t.test('language-data.ts is what linguist-languages makes (run `npm run gen:languages` after updating it)', async (t) => {
  const file = fileURLToPath(new URL('../../src/language/language-data.ts', import.meta.url));
  t.equal(fs.readFileSync(file, 'utf8'), await languageDataSource());
});

const cases: [path: string, head: string | undefined, expected: string][] = [
  ['src/main.c', undefined, 'C'],
  ['include/linux/list.h', '#ifndef _LIST_H\nstruct list_head;\n', 'C'],
  ['include/widget.h', 'namespace ui {\nclass Widget {};\n}\n', 'C++'],
  ['include/View.h', '#import <Foundation/Foundation.h>\n@interface View : NSObject\n@end\n', 'Objective-C'],
  ['a/b/Widget.cpp', undefined, 'C++'],
  ['lib/index.ts', undefined, 'TypeScript'],
  ['lib/types.d.ts', undefined, 'TypeScript'],
  ['ui/App.tsx', undefined, 'TSX'],
  ['server.js', undefined, 'JavaScript'],
  ['tool.py', undefined, 'Python'],
  ['go.mod', undefined, 'Go Module'],
  ['cmd/main.go', undefined, 'Go'],
  ['src/lib.rs', undefined, 'Rust'],
  ['README.md', undefined, 'Markdown'],
  ['Makefile', undefined, 'Makefile'],
  ['Dockerfile', undefined, 'Dockerfile'],
  ['arch/x86/entry.S', undefined, 'Unix Assembly'],
  ['scripts/build', '#!/bin/bash\necho hi\n', 'Shell'],
  ['scripts/tool', '#!/usr/bin/env python3\nprint(1)\n', 'Python'],
  ['scripts/tool2', '#!/usr/bin/env -S node --no-warnings\n', 'JavaScript'],
  ['bin/run.sh', undefined, 'Shell'],
  ['config.yaml', undefined, 'YAML'],
  ['data.json', undefined, 'JSON'],
  ['UPPER.C', undefined, 'C'],
  ['no_extension', 'plain text', ''],
  ['archive.unknownext', undefined, ''],
];

for (const [path, head, expected] of cases) {
  t.equal(detectLanguage(path, head === undefined ? undefined : Buffer.from(head)), expected, `${path} → ${expected || '(unknown)'}`);
}

const names: [query: string, expected: string | undefined][] = [
  ['ts', 'TypeScript'],
  ['TypeScript', 'TypeScript'],
  ['typescript', 'TypeScript'],
  ['c++', 'C++'],
  ['cpp', 'C++'],
  ['C', 'C'],
  ['golang', 'Go'],
  ['py', 'Python'],
  ['sh', 'Shell'],
  ['no-such-language', undefined],
];
for (const [query, expected] of names) t.equal(resolveLanguage(query), expected, `lang:${query} → ${expected ?? 'unknown'}`);
