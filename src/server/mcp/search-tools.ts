/** The MCP tools that search: `search_code` (trawl's query language), Sourcebot's `grep` and `glob`, and the symbol finders. */
import { z } from 'zod';
import { fileGlobSource } from '../../config/glob.js';
import type { FileResult } from '../../api/types.js';
import { escapeRegExp } from '../../query/escape.js';
import { searchRoute } from '../routes/search.js';
import { findDefinitionsRoute, findReferencesRoute } from '../routes/symbols.js';
import { bounded, quote, renderFiles, type SearchResult, type ToolKit } from './tool-kit.js';

/** The arguments that scope a search to a repository, a directory and a branch. */
const scopeArguments = {
  path: z.string().optional().describe('Only files under this directory'),
  repo: z.string().optional().describe('Only this repository (exact name)'),
  ref: z.string().optional().describe('Branch to search (an indexed one; default the default branch)'),
};

export function registerSearchTools({ route, scopeFilters, tool }: ToolKit): void {
  tool(
    'search_code',
    'Search code in the indexed repositories (trawl query language: terms ANDed, "or", file:, lang:, repo:, sym:). Returns matching lines with line numbers.',
    {
      query: z.string().describe('The query'),
      regex: z.boolean().optional().describe('Treat terms as RE2 regular expressions'),
      caseSensitive: z.boolean().optional(),
      repo: scopeArguments.repo,
      language: z.string().optional().describe('Only this language (e.g. TypeScript, C)'),
      path: z.string().optional().describe('Only paths containing this text'),
      limit: z.number().int().min(1).max(1000).optional().describe('Match ranges to return (default 50)'),
    },
    async ({ query, regex, caseSensitive, repo, language, path, limit }) => {
      const filters = [
        ...scopeFilters({ repo }),
        language === undefined ? '' : `lang:${quote(language)}`,
        path === undefined ? '' : `file:${quote(escapeRegExp(path))}`,
      ];
      const matches = limit ?? 50;
      const body = {
        query: [query, ...filters].filter(Boolean).join(' '),
        matches,
        isRegexEnabled: regex ?? false,
        isCaseSensitivityEnabled: caseSensitive ?? false,
      };
      const response = (await route(searchRoute, { body })) as SearchResult;
      if (response.files.length === 0) return 'No matches.';
      const header = `${response.stats.actualMatchCount} matches in ${response.files.length} files${response.isSearchExhaustive ? '' : ` (cut at ${matches}: raise limit or narrow the query for more)`}\n\n`;
      return header + bounded(renderFiles(response.files), () => 'Narrow the query (repo, language, path) or lower limit.');
    },
  );

  tool(
    'grep',
    'Search file contents with an RE2 regular expression (case-sensitive), optionally in one repository, directory, file pattern and branch. Returns matching lines with line numbers, or match counts per repository.',
    {
      pattern: z.string().min(1).describe('RE2 regular expression matched against file contents'),
      path: scopeArguments.path,
      include: z.string().optional().describe('Only files whose path matches this glob ("*.ts", "src/**/*.{ts,tsx}"; without "/" it matches the file name)'),
      repo: scopeArguments.repo,
      ref: scopeArguments.ref,
      limit: z.number().int().min(1).max(10_000).optional().describe('Matches to return or, with groupByRepo, to count (default 100; with groupByRepo 10,000)'),
      groupByRepo: z.boolean().optional().describe('Count matches per repository instead of listing them'),
    },
    async ({ pattern, path, include, repo, ref, limit, groupByRepo }) => {
      const includeFilter =
        include === undefined ? '' : `file:${quote(include.includes('/') ? fileGlobSource(include) : `(^|/)${fileGlobSource(include).slice(1)}`)}`;
      const matches = limit ?? (groupByRepo ? 10_000 : 100);
      const query = [`content:${quote(pattern)}`, ...scopeFilters({ repo, path, ref }), includeFilter].filter(Boolean).join(' ');
      const response = (await route(searchRoute, { body: { query, matches, isRegexEnabled: true, isCaseSensitivityEnabled: true } })) as SearchResult;
      if (response.files.length === 0) return 'No matches.';
      const cut = response.isSearchExhaustive ? '' : ` (cut at ${matches}: raise limit or narrow the search for more)`;
      // Content matches only: the path filters' ranges on file names are not grep's.
      const contentMatches = (file: FileResult) => file.chunks.reduce((sum, chunk) => sum + chunk.matchRanges.length, 0);
      if (groupByRepo) {
        const counts = new Map<string, { matches: number; files: number }>();
        for (const file of response.files) {
          const count = counts.get(file.repository) ?? { matches: 0, files: 0 };
          count.files++;
          count.matches += contentMatches(file);
          counts.set(file.repository, count);
        }
        return `Matches by repository${cut}:\n` + [...counts].map(([name, count]) => `${name}: ${count.matches} matches in ${count.files} files\n`).join('');
      }
      const total = response.files.reduce((sum, file) => sum + contentMatches(file), 0);
      return (
        `${total} matches in ${response.files.length} files${cut}\n\n` +
        bounded(renderFiles(response.files), () => 'Narrow the search (repo, path, include) or lower limit.')
      );
    },
  );

  tool(
    'glob',
    'Find files whose path matches a glob ("**/*.ts", "src/**/*.test.{ts,tsx}"), optionally in one repository, directory and branch.',
    {
      pattern: z.string().min(1).describe('Glob matched against whole repository paths: * within a directory, ** across, ?, {a,b}'),
      ...scopeArguments,
      limit: z.number().int().min(1).max(10_000).optional().describe('Files to return (default 100)'),
    },
    async ({ pattern, path, repo, ref, limit }) => {
      const matches = limit ?? 100;
      const query = [`file:${quote(fileGlobSource(pattern))}`, 'type:file', ...scopeFilters({ repo, path, ref })].join(' ');
      const response = (await route(searchRoute, { body: { query, matches, isRegexEnabled: true, isCaseSensitivityEnabled: true } })) as SearchResult;
      if (response.files.length === 0) return 'No files match.';
      const cut = response.isSearchExhaustive ? '' : `\n[cut at ${matches} files: raise limit or narrow the pattern for more]`;
      return (
        bounded(
          response.files.map((file) => `${file.repository} ${file.fileName.text}\n`),
          () => 'Narrow the pattern, repo or path.',
        ) + cut
      );
    },
  );

  for (const [name, symbolRoute, what] of [
    ['find_symbol_definitions', findDefinitionsRoute, 'Where a symbol is defined (ctags definitions).'],
    ['find_symbol_references', findReferencesRoute, 'Every whole-word occurrence of a symbol name.'],
  ] as const) {
    tool(name, what, { symbol: z.string(), repo: z.string().optional(), language: z.string().optional() }, async ({ symbol, repo, language }) => {
      const body = { symbolName: symbol, ...(repo === undefined ? {} : { repoName: repo }), ...(language === undefined ? {} : { language }) };
      const found = (await route(symbolRoute, { body })) as {
        files: { repository: string; fileName: string; matches: { lineContent: string; range: { start: { lineNumber: number } } }[] }[];
      };
      const lines = found.files.flatMap((file) =>
        file.matches.map((match) => `${file.repository} ${file.fileName}:${match.range.start.lineNumber}: ${match.lineContent.trim()}\n`),
      );
      return lines.length === 0 ? 'Not found.' : bounded(lines, () => 'Pass repo or language to narrow it.');
    });
  }
}
