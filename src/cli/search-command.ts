import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config.js';
import { isGitRepository } from '../git/repository.js';
import { configOrProblem } from './config-option.js';
import { QueryParseError } from '../query/errors.js';
import { search, searchParts } from '../search/in-process.js';
import { openShardSet } from '../search/shard-set.js';
import { UnknownSearchContextError } from '../query/plan.js';
import type { SearchResponse } from '../api/types.js';
import { formatGrepLines, formatJsonLines, formatVimgrepLines, jsonSummaryLine, noJsonTotals, type FileLocator } from '../search/response/grep-format.js';
import type { Command } from './main.js';

const DEFAULT_MATCHES = 100;
const MAX_MATCHES = 100_000;
const MAX_CONTEXT_LINES = 100;
const TIME_BUDGET_MS = 10_000;

export const searchCommand: Command = {
  summary: 'search the index from the command line',
  usage: `Usage: trawl search [--config FILE] [--regex] [--case] [--context N] [--matches N]
                    [--exhaustive] [--vimgrep | --json | --api-json] [--color WHEN] QUERY

Searches the index that \`trawl index\` built, with the query language of
docs/query-syntax.md. Prints one line per matching line,
\`repo path:line:column: text\` (context lines as \`repo path-line- text\`),
matches highlighted on a terminal.

Options:
  --config FILE   configuration file (default: $TRAWL_CONFIG; without either,
                  the repository in the current directory)
  --regex         terms are RE2 regular expressions
  --case          case-sensitive (default: insensitive)
  --context N     lines of context around matches (0–${MAX_CONTEXT_LINES}, default 0)
  --matches N     stop after N match ranges (1–${MAX_MATCHES}, default ${DEFAULT_MATCHES})
  --exhaustive    every match (or the first --matches, any number), with no
                  time limit: files in index order, not ranked, printed as they
                  are found, a few MiB of results at a time; not with --api-json
  --vimgrep       one line per match, \`file:line:column:text\`, as ripgrep's
                  --vimgrep: the file as a path on disk (relative to the current
                  directory when under it), the column in bytes; what editors'
                  quickfix and link parsers read
  --json          ripgrep's JSON Lines (begin, match, context, end, summary), for
                  tools that read \`rg --json\`
  --api-json      the /api/search JSON response
  --color WHEN    highlight matches: auto (on a terminal, unless $NO_COLOR is
                  set), always or never (default auto)
  -h, --help      show this help

Exit status: 0 when something matched, 1 when nothing did, 2 for a usage,
configuration or query error, or when there is no index yet. A reader that
stops early (\`| head\`) ends the output quietly.`,

  async run(args) {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        options: {
          config: { type: 'string' },
          regex: { type: 'boolean', default: false },
          case: { type: 'boolean', default: false },
          context: { type: 'string', default: '0' },
          matches: { type: 'string' },
          exhaustive: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          'api-json': { type: 'boolean', default: false },
          vimgrep: { type: 'boolean', default: false },
          color: { type: 'string', default: 'auto' },
        },
        strict: true,
        allowPositionals: true,
      });
    } catch (error) {
      return usageError((error as Error).message);
    }
    const { values, positionals } = parsed;
    if (positionals.length !== 1) return usageError(`expected one QUERY argument (quote it), got ${positionals.length}`);
    const contextLines = integerOption('--context', values.context, 0, MAX_CONTEXT_LINES);
    const exhaustive = values.exhaustive;
    const matches = integerOption(
      '--matches',
      values.matches ?? String(exhaustive ? Number.MAX_SAFE_INTEGER : DEFAULT_MATCHES),
      1,
      exhaustive ? Number.MAX_SAFE_INTEGER : MAX_MATCHES,
    );
    if (typeof contextLines === 'string') return usageError(contextLines);
    if (typeof matches === 'string') return usageError(matches);
    if ([values.json, values['api-json'], values.vimgrep].filter(Boolean).length > 1) return usageError('--vimgrep, --json and --api-json exclude each other');
    if (exhaustive && values['api-json'])
      return usageError('--api-json prints one ranked response: with --exhaustive use the default output, --vimgrep or --json');
    if (!['auto', 'always', 'never'].includes(values.color)) return usageError(`--color must be auto, always or never, not ${JSON.stringify(values.color)}`);
    const config = configOrProblem(values.config);
    if (typeof config === 'string') return usageError(config);
    const { shards, failures } = openShardSet(config.dataDir);
    for (const failure of failures) console.error(`trawl search: skipping ${failure.file}: ${failure.error.message}`);
    if (shards.length === 0 && failures.length === 0) return usageError(`${config.dataDir} has no index yet; run \`trawl index\` first`);
    const started = process.hrtime.bigint();
    const request = { query: positionals[0]!, matches, contextLines, isRegexEnabled: values.regex, isCaseSensitivityEnabled: values.case };
    // A local search spends only its caller's time: an exhaustive one runs to the end, as grep does.
    const environment = { publicUrl: config.publicUrl, contexts: config.contexts, timeBudgetMs: exhaustive ? Infinity : TIME_BUDGET_MS };
    let responses: Iterable<SearchResponse>;
    try {
      // A search's parts, or its one ranked response; either way the query is planned (and refused) here.
      responses = exhaustive ? searchParts(request, shards, environment) : [search(request, shards, environment)];
    } catch (error) {
      if (error instanceof QueryParseError || error instanceof UnknownSearchContextError) return usageError(error.message);
      throw error;
    }
    const locate = fileLocator(config);
    const highlight = values.color === 'always' || (values.color === 'auto' && process.stdout.isTTY === true && !process.env.NO_COLOR);
    const totals = noJsonTotals();
    let filesFound = 0;
    let complete = true;
    let last: SearchResponse | undefined;
    for (const response of responses) {
      response.stats.crashes += failures.length;
      const lines = values['api-json']
        ? [JSON.stringify(response)]
        : values.json
          ? formatJsonLines(response, locate, totals)
          : values.vimgrep
            ? formatVimgrepLines(response, locate)
            : formatGrepLines(response, highlight);
      if (lines.length > 0) process.stdout.write(lines.join('\n') + '\n');
      filesFound += response.files.length;
      complete &&= response.isSearchExhaustive;
      last = response;
    }
    if (values.json) process.stdout.write(jsonSummaryLine(totals, Number(process.hrtime.bigint() - started)) + '\n');
    if (!complete && !values['api-json']) {
      console.error(`trawl search: results cut at ${matches} matches (${last!.stats.flushReason}); raise --matches to see more`);
    }
    return filesFound > 0 ? 0 : 1;
  },
};

/**
 * A file as a path on disk: under its repository's working tree or plain directory (a bare repository has
 * neither), relative to the current directory when under it.
 */
function fileLocator(config: Config): FileLocator {
  const bare = (root: string) => isGitRepository(root) && !fs.existsSync(path.join(root, '.git'));
  const roots = new Map(config.repos.filter((repo) => !bare(repo.path)).map((repo) => [repo.name, repo.path]));
  const cwd = process.cwd();
  return (repository, file) => {
    const root = roots.get(repository);
    if (root === undefined) return null;
    const absolute = path.join(root, file);
    const relative = path.relative(cwd, absolute);
    return relative.startsWith('..') || path.isAbsolute(relative) ? absolute : relative;
  };
}

function integerOption(name: string, value: string, min: number, max: number): number | string {
  const number = Number(value);
  return Number.isInteger(number) && number >= min && number <= max ? number : `${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`;
}

function usageError(message: string): number {
  console.error(`trawl search: ${message}`);
  return 2;
}
