/**
 * Texts tested against a case-insensitive regex (/api/commits' `query` and `author`), in a search worker:
 * RE2 can take 100 ms and more to compile some 1 KiB patterns, or to refuse them, time the front end's
 * thread must not spend. The pattern stays compiled among the thread's regexes (compiled-regex.ts).
 */
import { native } from '../../native/index.js';
import { compiledRegex } from './compiled-regex.js';

/** 1 per text that matches, 0 per text that does not; or why RE2 refuses the pattern. */
export type TextsMatched = { matched: Uint8Array } | { invalid: string };

/** Which of `texts` match `pattern` anywhere (`^` and `$` at the text's ends), ignoring case. */
export function textsMatching(pattern: string, texts: readonly string[]): TextsMatched {
  const compiled = compiledRegex(pattern, { caseSensitive: false, multiline: false });
  if ('refused' in compiled) return { invalid: compiled.refused };
  const matched = new Uint8Array(texts.length);
  for (const [i, text] of texts.entries()) matched[i] = native.testRegex(compiled.regex, Buffer.from(text)) ? 1 : 0;
  return { matched };
}
