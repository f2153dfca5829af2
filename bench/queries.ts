/** The benchmark query set, in classes: shared by the in-process search benchmark and the HTTP load benchmark. */
import type { SearchRequest } from '../src/api/types.js';

export interface BenchQuery {
  /** The trawl query (API request fields). */
  query: string;
  regex?: boolean;
  caseSensitive?: boolean;
  /** ripgrep arguments for the same search (flags and pattern); null when ripgrep has no equivalent. */
  rg: string[] | null;
  /** What ripgrep searches (default: the whole tree). */
  rgPaths?: string[];
  /** ripgrep runs `--files` and filters paths with this regex instead of searching content. */
  rgPathRegex?: RegExp;
  /** The same search in Zoekt's query language, when `zoektQuery`'s translation does not give it. */
  zoekt?: string;
}

/**
 * `q` in Zoekt's query language: its bare terms are regular expressions (a literal one a substring search, as trawl's
 * are), and its default case is "auto", so the case is stated as trawl's request states it.
 */
export function zoektQuery(q: BenchQuery): string {
  return q.zoekt ?? `case:${q.caseSensitive ? 'yes' : 'no'} ${q.query}`;
}

export const QUERY_CLASSES: { name: string; queries: BenchQuery[] }[] = [
  {
    name: 'selective literal',
    queries: [
      { query: 'PM_RESUME', caseSensitive: true, rg: ['-s', '-F', 'PM_RESUME'] },
      { query: 'ioremap_wc', caseSensitive: true, rg: ['-s', '-F', 'ioremap_wc'] },
      { query: 'CONFIG_HAVE_EBPF_JIT', caseSensitive: true, rg: ['-s', '-F', 'CONFIG_HAVE_EBPF_JIT'] },
    ],
  },
  {
    name: 'common word',
    queries: [
      { query: 'return', caseSensitive: true, rg: ['-s', '-F', 'return'] },
      { query: 'static', caseSensitive: true, rg: ['-s', '-F', 'static'] },
    ],
  },
  {
    name: 'case-insensitive',
    queries: [
      { query: 'pm_resume', rg: ['-i', '-F', 'pm_resume'] },
      { query: 'mutex_lock_interruptible', rg: ['-i', '-F', 'mutex_lock_interruptible'] },
    ],
  },
  {
    name: 'regex with a literal',
    queries: [
      { query: '[A-Z]+_RESUME', regex: true, caseSensitive: true, rg: ['-s', '[A-Z]+_RESUME'] },
      { query: 'kmalloc\\(sizeof\\(\\*\\w+\\)', regex: true, caseSensitive: true, rg: ['-s', 'kmalloc\\(sizeof\\(\\*\\w+\\)'] },
      // \s may match a newline in trawl, never in ripgrep (line by line): the same text, nearly the same matches.
      { query: '\\w+\\s*=\\s*kzalloc\\(', regex: true, caseSensitive: true, rg: ['-s', '\\w+\\s*=\\s*kzalloc\\('] },
    ],
  },
  {
    name: 'regex without a literal',
    queries: [{ query: '\\w{5}\\s+\\w{5}', regex: true, caseSensitive: true, rg: ['-s', '\\w{5}\\s+\\w{5}'] }],
  },
  {
    name: 'symbol (sym:)',
    queries: [
      // Zoekt's `sym:` takes a substring, never a regex: its nearest search is every symbol holding the name.
      { query: 'sym:^PM_RESUME$', caseSensitive: true, rg: ['-s', '-w', 'PM_RESUME'], zoekt: 'case:yes sym:PM_RESUME' },
      { query: 'sym:^kmem_cache_alloc$', caseSensitive: true, rg: ['-s', '-w', 'kmem_cache_alloc'], zoekt: 'case:yes sym:kmem_cache_alloc' },
    ],
  },
  {
    name: 'path (file:)',
    queries: [
      { query: 'file:Kconfig\\.debug$', rg: null, rgPathRegex: /Kconfig\.debug$/i },
      { query: 'file:drivers/net/.*\\.h$', rg: null, rgPathRegex: /drivers\/net\/.*\.h$/i },
    ],
  },
  {
    name: 'filtered (lang:/file: + term)',
    queries: [
      { query: 'lang:c mutex_lock', caseSensitive: true, rg: ['-s', '-F', '-t', 'c', 'mutex_lock'] },
      { query: 'file:^drivers/net/ ndo_open', caseSensitive: true, rg: ['-s', '-F', 'ndo_open'], rgPaths: ['drivers/net'] },
    ],
  },
];

/** The API request of `q`, asking for at most `matches` match ranges. */
export function searchRequest(q: BenchQuery, matches: number): SearchRequest {
  return { query: q.query, matches, isRegexEnabled: q.regex ?? false, isCaseSensitivityEnabled: q.caseSensitive ?? false };
}
