/**
 * A regex as users write it (JavaScript's syntax, as node-re2 takes it) in RE2's own syntax, for the
 * addon's RE2: `\cX`, `\uXXXX` and `\u{…}` become `\x` escapes, `(?<name>` becomes `(?P<name>`, the
 * long names of general categories in `\p{…}` become RE2's short ones, `Script=` and `sc=` are dropped,
 * and `multiline` is carried as a leading `(?m)`. Everything else is RE2's to accept or refuse.
 * node-re2's `internalSource` is the same text (test/query/re2-syntax.test.ts holds them to it).
 */

/** General categories by long name (Unicode's PropertyValueAliases.txt); RE2 knows the short names only. */
const GENERAL_CATEGORIES: Record<string, string> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
};

const HEX_DIGIT = /^[0-9A-Fa-f]$/;

export function re2Syntax(pattern: string, multiline: boolean): string {
  if (pattern === '') return '(?:)';
  let out = multiline ? '(?m)' : '';
  let i = 0;
  while (i < pattern.length) {
    const char = String.fromCodePoint(pattern.codePointAt(i)!);
    if (char === '\\' && i + 1 < pattern.length) {
      const [text, length] = escape(pattern, i);
      out += text;
      i += length;
    } else if (char === '/') {
      out += '\\/';
      i += 1;
    } else if (pattern.startsWith('(?<', i) && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') {
      out += '(?P<';
      i += 3;
    } else {
      out += char;
      i += char.length;
    }
  }
  return out;
}

/** The escape starting at pattern[at] (a backslash with something after it) in RE2's syntax, and how many code units it took. */
function escape(pattern: string, at: number): [string, number] {
  const letter = String.fromCodePoint(pattern.codePointAt(at + 1)!);
  const next = pattern[at + 2];
  if (letter === 'c' && next !== undefined && next >= 'A' && next <= 'Z') {
    return [`\\x${(next.charCodeAt(0) - 0x40).toString(16).toUpperCase().padStart(2, '0')}`, 3];
  }
  if (letter === 'u' && next === '{') return ['\\x', 2];
  if (letter === 'u' && next !== undefined && HEX_DIGIT.test(next)) {
    let end = at + 3;
    while (end < at + 6 && end < pattern.length && HEX_DIGIT.test(pattern[end]!)) end++;
    return [`\\x{${pattern.slice(at + 2, end)}}`, end - at];
  }
  if ((letter === 'p' || letter === 'P') && next === '{') {
    const close = pattern.indexOf('}', at + 3);
    if (close >= 0) {
      const name = unicodeClassName(pattern.slice(at + 3, close));
      return [`\\${letter}${Buffer.byteLength(name) === 1 ? name : `{${name}}`}`, close + 1 - at];
    }
  }
  return [`\\${letter}`, 1 + letter.length];
}

function unicodeClassName(name: string): string {
  if (Object.hasOwn(GENERAL_CATEGORIES, name)) return GENERAL_CATEGORIES[name]!;
  if (name.length > 'Script='.length && name.startsWith('Script=')) return name.slice('Script='.length);
  if (name.length > 'sc='.length && name.startsWith('sc=')) return name.slice('sc='.length);
  return name;
}
