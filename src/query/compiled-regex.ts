/**
 * The regexes this thread has compiled with the addon's RE2, and the ones RE2 refused: a few kept across
 * tasks, the least recently used dropped first. Every compiled regex is native memory V8 does not see, so
 * each is freed explicitly, never left to the collector (docs/design.md, "Regexes in native memory").
 */
import { native, type NativeRegex } from '../../native/index.js';
import { re2Syntax } from './re2-syntax.js';

export interface RegexOptions {
  caseSensitive: boolean;
  /** `^` and `$` match at line boundaries. */
  multiline: boolean;
}

/** A compiled regex, or RE2's reason to refuse the pattern (node-re2's message for it). */
export type CompiledRegex = { regex: NativeRegex } | { refused: string };

/**
 * How many patterns a thread keeps. RE2 bounds each one's program and DFA cache at its max_mem (8 MiB), so a
 * thread holds at most 8 × 8 MiB however many costly patterns callers send.
 */
export const KEPT_REGEXES = 8;
const kept = new Map<string, CompiledRegex>();
/** Regexes dropped from `kept` that a task in progress may still use: freed when the next task starts. */
const retired: NativeRegex[] = [];

/** `pattern` compiled with `options`, kept for the next use. */
export function compiledRegex(pattern: string, options: RegexOptions): CompiledRegex {
  const key = `${options.caseSensitive ? 's' : 'i'}${options.multiline ? 'm' : '-'}${pattern}`;
  let compiled = kept.get(key);
  if (compiled === undefined) {
    compiled = compile(pattern, options);
    if (kept.size >= KEPT_REGEXES) {
      const [oldest, dropped] = kept.entries().next().value!;
      kept.delete(oldest);
      if ('regex' in dropped) retired.push(dropped.regex);
    }
  } else {
    kept.delete(key); // set again below: the most recently used last
  }
  kept.set(key, compiled);
  return compiled;
}

function compile(pattern: string, options: RegexOptions): CompiledRegex {
  try {
    return { regex: native.compileRegex(re2Syntax(pattern, options.multiline), options.caseSensitive) };
  } catch (error) {
    if (error instanceof SyntaxError) return { refused: error.message };
    throw error;
  }
}

/** `pattern` compiled with `options`, for a caller whose patterns were checked (checkedPattern): a refusal is a fault. */
export function checkedRegex(pattern: string, options: RegexOptions): NativeRegex {
  const compiled = compiledRegex(pattern, options);
  if ('refused' in compiled) throw new Error(`a regex that was checked does not compile: ${compiled.refused}`);
  return compiled.regex;
}

/** Why RE2 refuses a pattern, or how many instructions its program has: the same for a pattern in every thread. */
export type PatternCheck = { refused: string } | { instructions: number };

/**
 * Why RE2 refuses `pattern`, or how many instructions its program has. Compiled as a case-sensitive search
 * runs it (so that search finds it kept); a refusal quotes the pattern without the `(?m)` it was compiled with.
 */
export function checkedPattern(pattern: string): PatternCheck {
  const compiled = compiledRegex(pattern, { caseSensitive: true, multiline: true });
  if ('regex' in compiled) return { instructions: native.regexProgramSize(compiled.regex) };
  const plain = compiledRegex(pattern, { caseSensitive: true, multiline: false });
  return 'refused' in plain ? plain : compiled;
}

/** Frees the regexes dropped since the last call: call it as a task starts, when no earlier task's regex is used again. */
export function freeRetiredRegexes(): void {
  for (const regex of retired.splice(0)) native.freeRegex(regex);
}
