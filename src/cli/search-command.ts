import { parseArgs } from 'node:util';
import { configOrProblem } from './config-option.js';
import { QueryParseError } from '../query/errors.js';
import { search } from '../search/in-process.js';
import { openShardSet } from '../search/shard-set.js';
import { UnknownSearchContextError } from '../query/plan.js';
import { formatGrepLines } from '../search/response/grep-format.js';
import type { Command } from './main.js';

const DEFAULT_MATCHES = 100;
const MAX_MATCHES = 100_000;
const MAX_CONTEXT_LINES = 100;
const TIME_BUDGET_MS = 10_000;

export const searchCommand: Command = {
  summary: 'search the index from the command line',
  usage: `Usage: trawl search [--config FILE] [--regex] [--case] [--context N] [--matches N] [--json] QUERY

Searches the index that \`trawl index\` built, with the query language of
docs/query-syntax.md. Prints one line per matching line,
\`repo path:line:column: text\` (context lines as \`repo path-line- text\`),
matches highlighted on a terminal; or, with --json, the exact /api/search
response.

Options:
  --config FILE   configuration file (default: $TRAWL_CONFIG; without either,
                  the repository in the current directory)
  --regex         terms are RE2 regular expressions
  --case          case-sensitive (default: insensitive)
  --context N     lines of context around matches (0–${MAX_CONTEXT_LINES}, default 0)
  --matches N     stop after N match ranges (1–${MAX_MATCHES}, default ${DEFAULT_MATCHES})
  --json          print the /api/search JSON response
  -h, --help      show this help

Exit status: 0 when something matched, 1 when nothing did, 2 for a usage,
configuration or query error.`,

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
          matches: { type: 'string', default: String(DEFAULT_MATCHES) },
          json: { type: 'boolean', default: false },
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
    const matches = integerOption('--matches', values.matches, 1, MAX_MATCHES);
    if (typeof contextLines === 'string') return usageError(contextLines);
    if (typeof matches === 'string') return usageError(matches);
    const config = configOrProblem(values.config);
    if (typeof config === 'string') return usageError(config);
    const { shards, failures } = openShardSet(config.dataDir);
    for (const failure of failures) console.error(`trawl search: skipping ${failure.file}: ${failure.error.message}`);
    if (shards.length === 0 && failures.length === 0) console.error(`trawl search: ${config.dataDir} has no index yet; run \`trawl index\` first`);
    let response;
    try {
      response = search(
        { query: positionals[0]!, matches, contextLines, isRegexEnabled: values.regex, isCaseSensitivityEnabled: values.case },
        shards,
        { publicUrl: config.publicUrl, contexts: config.contexts, timeBudgetMs: TIME_BUDGET_MS },
      );
    } catch (error) {
      if (error instanceof QueryParseError || error instanceof UnknownSearchContextError) return usageError(error.message);
      throw error;
    }
    response.stats.crashes += failures.length;
    if (values.json) {
      process.stdout.write(JSON.stringify(response) + '\n');
    } else {
      for (const line of formatGrepLines(response, process.stdout.isTTY === true)) process.stdout.write(line + '\n');
      if (!response.isSearchExhaustive) {
        console.error(`trawl search: results cut at ${matches} matches (${response.stats.flushReason}); raise --matches to see more`);
      }
    }
    return response.files.length > 0 ? 0 : 1;
  },
};

function integerOption(name: string, value: string, min: number, max: number): number | string {
  const number = Number(value);
  return Number.isInteger(number) && number >= min && number <= max ? number : `${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`;
}

function usageError(message: string): number {
  console.error(`trawl search: ${message}`);
  return 2;
}
