/**
 * Language detection from GitHub linguist's data (the linguist-languages
 * package, as `language-data.ts` holds it): file name, then shebang
 * interpreter, then extension, the order linguist itself uses. Where an
 * extension is shared, a small preference table and a few content heuristics
 * stand in for linguist's classifier.
 */
import { LANGUAGE_ROWS } from './language-data.js';

export interface LanguageData {
  name: string;
  type: string;
  aliases?: readonly string[];
  extensions?: readonly string[];
  filenames?: readonly string[];
  interpreters?: readonly string[];
}

/** The usual meaning of extensions that several linguist languages claim. */
const PREFERRED_BY_EXTENSION: Record<string, string> = {
  '.h': 'C',
  '.m': 'Objective-C',
  '.pl': 'Perl',
  '.pm': 'Perl',
  '.t': 'Perl',
  '.md': 'Markdown',
  '.ts': 'TypeScript',
  '.tsx': 'TSX',
  '.cs': 'C#',
  '.rs': 'Rust',
  '.sql': 'SQL',
  '.json': 'JSON',
  '.yml': 'YAML',
  '.yaml': 'YAML',
  '.v': 'Verilog',
  '.fs': 'F#',
  '.s': 'Unix Assembly',
  '.asm': 'Assembly',
  '.txt': 'Text',
  '.php': 'PHP',
  '.html': 'HTML',
  '.d': 'D',
  '.cfg': 'INI',
  '.r': 'R',
  '.ex': 'Elixir',
  '.ml': 'OCaml',
  '.spec': 'RPM Spec',
  '.pro': 'QMake',
  '.1': 'Roff Manpage',
  '.l': 'Lex',
};

const TYPE_ORDER = ['programming', 'markup', 'prose', 'data'];

const byFilename = new Map<string, string>();
const byInterpreter = new Map<string, string>();
const byExtension = new Map<string, string>();
const primaryExtensions = new Map<string, string>();
/** Lower-cased names and aliases → linguist name. */
const byNameOrAlias = new Map<string, string>();

(function buildTables() {
  const rows = LANGUAGE_ROWS.map(([name, type, aliases, extensions, filenames, interpreters]): LanguageData => ({
    name,
    type,
    aliases,
    extensions,
    filenames,
    interpreters,
  }));
  const languages = rows.sort((a, b) => TYPE_ORDER.indexOf(a.type) - TYPE_ORDER.indexOf(b.type) || (a.name < b.name ? -1 : 1));
  const claim = (table: Map<string, string>, key: string, name: string) => table.has(key) || table.set(key, name);
  // A language's primary (first) extension outranks an extension another language merely lists.
  for (const language of languages) {
    const primary = language.extensions?.[0];
    if (!primary) continue;
    claim(byExtension, primary.toLowerCase(), language.name);
    primaryExtensions.set(language.name, primary);
  }
  for (const language of languages) {
    for (const extension of language.extensions ?? []) claim(byExtension, extension.toLowerCase(), language.name);
    for (const filename of language.filenames ?? []) claim(byFilename, filename, language.name);
    for (const interpreter of language.interpreters ?? []) claim(byInterpreter, interpreter, language.name);
  }
  for (const language of languages) byNameOrAlias.set(language.name.toLowerCase(), language.name);
  for (const language of languages) for (const alias of language.aliases ?? []) claim(byNameOrAlias, alias.toLowerCase(), language.name);
  for (const [extension, name] of Object.entries(PREFERRED_BY_EXTENSION)) byExtension.set(extension, name);
})();

/**
 * The linguist name of a file's language, or '' when unknown.
 * `head` is the start of the content (for the shebang and heuristics), if any.
 */
export function detectLanguage(path: string, head?: Uint8Array): string {
  const basename = path.slice(path.lastIndexOf('/') + 1);
  const byName = byFilename.get(basename);
  if (byName) return byName;
  const interpreter = head ? shebangInterpreter(head) : null;
  if (interpreter) {
    const byShebang = byInterpreter.get(interpreter) ?? byInterpreter.get(interpreter.replace(/[\d.]+$/, ''));
    if (byShebang) return byShebang;
  }
  const lower = basename.toLowerCase();
  // Longest extension first: "x.d.ts" tries ".d.ts" before ".ts".
  for (let dot = lower.indexOf('.', 1); dot !== -1; dot = lower.indexOf('.', dot + 1)) {
    const language = byExtension.get(lower.slice(dot));
    if (language) return language === 'C' && lower.endsWith('.h') && head ? headerLanguage(head) : language;
  }
  return '';
}

/** The linguist name for a name or alias in any case ("ts" → "TypeScript", "c++" → "C++"), or undefined. */
export function resolveLanguage(nameOrAlias: string): string | undefined {
  return byNameOrAlias.get(nameOrAlias.toLowerCase());
}

/** The main extension of a linguist language (".py" for Python), if it has one. */
export function primaryExtension(language: string): string | undefined {
  return primaryExtensions.get(language);
}

/** `#!/usr/bin/env -S python3 -u` → "python3". */
function shebangInterpreter(head: Uint8Array): string | null {
  if (head[0] !== 0x23 || head[1] !== 0x21) return null;
  let end = 2;
  while (end < head.length && end < 256 && head[end] !== 0x0a) end++;
  const words = Buffer.from(head.subarray(2, end)).toString('latin1').trim().split(/\s+/);
  let program = words.shift()?.split('/').pop() ?? '';
  if (program === 'env') program = words.find((word) => !word.startsWith('-') && !word.includes('=')) ?? '';
  return program || null;
}

const CPP_HEADER = /^\s*(class\s+\w+\s*[:{]|namespace\s+\w*\s*\{|template\s*<)|\bstd::/m;
const OBJC_HEADER = /^\s*(@interface|@protocol|@end|#import\s)/m;

/** linguist's .h heuristic, reduced: Objective-C and C++ markers, else C. */
function headerLanguage(head: Uint8Array): string {
  const text = Buffer.from(head.subarray(0, 64 * 1024)).toString('latin1');
  if (OBJC_HEADER.test(text)) return 'Objective-C';
  if (CPP_HEADER.test(text)) return 'C++';
  return 'C';
}
