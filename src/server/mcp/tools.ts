/**
 * The MCP tools (spec/api.md §8): trawl's own and those of Sourcebot's MCP
 * server (`grep`, `glob`, `list_branches`, with its argument names on the
 * tools both have). Each calls the HTTP route it maps to, in process, with
 * the caller of the current request — so validation, visibility and errors
 * are exactly the API's — and renders the result as text sized for a
 * language model, saying when and how it was truncated. An argument a tool
 * does not know is an error result naming it, never ignored.
 *
 * Over 300 lines: the table of 14 tools, each a schema, a route call and a
 * renderer of a few lines; split, the table would no longer read as one list.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ApiError } from '../../api/errors.js';
import { LIMITS } from '../../api/schemas.js';
import type { FileResult } from '../../api/types.js';
import { fileGlobSource } from '../../config/glob.js';
import type { Blame } from '../../git/blame.js';
import { localBranchesByDate } from '../../git/repository.js';
import type { TreeNode } from '../../api/types.js';
import { escapeRegExp } from '../../query/escape.js';
import type { Caller } from '../access.js';
import type { JsonReply, Request } from '../http.js';
import { asApiError } from '../known-errors.js';
import { gitRepository, visibleRepository } from '../repositories.js';
import type { Route, ServerContext } from '../route.js';
import { authorsRoute, blameRoute, commitsRoute, diffRoute, sourceRoute, treeRoute } from '../routes/git.js';
import { connectionsRoute, reposRoute } from '../routes/repos.js';
import { searchRoute } from '../routes/search.js';
import { findDefinitionsRoute, findReferencesRoute } from '../routes/symbols.js';

/** Tool output stops growing past this many characters (about 6,000 tokens). */
const MAX_TEXT = 24_000;

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

/** What a tool call runs as: the session's caller, from the address of the session's latest request. */
interface ToolCaller {
  readonly caller: Caller;
  readonly remoteAddress: string;
}

/** Runs a route in process for the session's caller; the JSON body on success, an ApiError otherwise. */
async function call(
  route: Route,
  { caller, remoteAddress }: ToolCaller,
  context: ServerContext,
  input: { query?: Record<string, string | undefined>; body?: unknown },
): Promise<unknown> {
  const params = Object.entries(input.query ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined);
  const request: Request = {
    method: route.method,
    path: route.path,
    query: new URLSearchParams(params).toString(),
    headers: {},
    requestId: `mcp-${Date.now().toString(36)}`,
    remoteAddress,
    body: Buffer.from(input.body === undefined ? '' : JSON.stringify(input.body)),
    onAborted: () => {}, // a tool call runs to its end
  };
  try {
    const reply = await route.handle(request, caller, context);
    if (!('text' in reply)) return (reply as JsonReply).body;
    // The search route answers its JSON already serialized (built by a worker), maybe in memory it reuses.
    try {
      return JSON.parse(typeof reply.text === 'string' || Buffer.isBuffer(reply.text) ? reply.text.toString() : Buffer.concat(reply.text).toString());
    } finally {
      reply.release?.();
    }
  } catch (error) {
    throw asApiError(error);
  }
}

/** Text within MAX_TEXT, with a closing line that says what was left out and how to get it. */
function bounded(parts: string[], more: (shown: number) => string): string {
  let text = '';
  let shown = 0;
  for (const part of parts) {
    if (text.length + part.length > MAX_TEXT) break;
    text += part;
    shown++;
  }
  return shown < parts.length ? `${text}\n[truncated: ${parts.length - shown} more. ${more(shown)}]` : text;
}

async function run(produce: () => Promise<string>): Promise<ToolResult> {
  try {
    return { content: [{ type: 'text', text: await produce() }] };
  } catch (error) {
    const message = error instanceof ApiError ? `${error.errorCode}: ${error.message}` : 'unexpected error';
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}

/** A query-language quoted value: `\` and `"` escaped, the rest as is (a regex inside stays that regex). */
const quote = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;

/** Text lines of a search's files: `N: line` under a `## repo path` heading per file. */
function renderFiles(files: FileResult[]): string[] {
  return files.map((file) => {
    const lines = file.chunks.flatMap((chunk) =>
      chunk.content
        .replace(/\n$/, '')
        .split('\n')
        .map((line, i) => `${chunk.contentStart.lineNumber + i}: ${line}`),
    );
    return `## ${file.repository} ${file.fileName.text}\n${lines.join('\n')}\n\n`;
  });
}

interface SearchResult {
  files: FileResult[];
  isSearchExhaustive: boolean;
  stats: { actualMatchCount: number };
}

/** Query filters for a repository (exact name), a directory (path prefix) and a branch, tag or commit. */
function queryFilters(scope: { repo?: string; path?: string; ref?: string }): string[] {
  const directory = scope.path?.replace(/^\/+|\/+$/g, '');
  return [
    scope.repo === undefined ? '' : `repo:${quote(`^${escapeRegExp(scope.repo)}$`)}`,
    directory ? `file:${quote(`^${escapeRegExp(directory)}/`)}` : '',
    scope.ref === undefined ? '' : `rev:${quote(`^${escapeRegExp(scope.ref)}$`)}`,
  ].filter(Boolean);
}

const page = z.number().int().min(1).optional().describe('Page number, from 1 (default 1)');
const perPage = (fallback: number) => z.number().int().min(1).max(100).optional().describe(`Results per page, 1 to 100 (default ${fallback})`);
const MAX_TREE_DEPTH = 10;
const MAX_TREE_ENTRIES = 10_000;

/** Registers every tool on `server`, acting as the session's caller of the request being answered. */
export function registerTools(server: McpServer, session: ToolCaller, context: ServerContext): void {
  const route = (target: Route, input: { query?: Record<string, string | undefined>; body?: unknown }) => call(target, session, context, input);
  /** The filters of a scope; NOT_FOUND (as Sourcebot's tools) for a repository the caller cannot see, so a misspelt name is no empty result. */
  const scopeFilters = (scope: { repo?: string; path?: string; ref?: string }) => {
    if (scope.repo !== undefined) visibleRepository(context, session.caller, scope.repo);
    return queryFilters(scope);
  };
  /** A read-only tool whose arguments are exactly `shape` (an unknown one is an error result naming it). */
  const tool = <Shape extends z.ZodRawShape>(
    name: string,
    description: string,
    shape: Shape,
    produce: (args: z.infer<z.ZodObject<Shape>>) => Promise<string>,
  ) =>
    server.registerTool(name, { description, inputSchema: z.object(shape).strict(), annotations: { readOnlyHint: true } }, (args: unknown) =>
      run(() => produce(args as z.infer<z.ZodObject<Shape>>)),
    );

  tool(
    'search_code',
    'Search code in the indexed repositories (trawl query language: terms ANDed, "or", file:, lang:, repo:, sym:). Returns matching lines with line numbers.',
    {
      query: z.string().describe('The query'),
      regex: z.boolean().optional().describe('Treat terms as RE2 regular expressions'),
      caseSensitive: z.boolean().optional(),
      repo: z.string().optional().describe('Only this repository (exact name)'),
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
      path: z.string().optional().describe('Only files under this directory'),
      include: z.string().optional().describe('Only files whose path matches this glob ("*.ts", "src/**/*.{ts,tsx}"; without "/" it matches the file name)'),
      repo: z.string().optional().describe('Only this repository (exact name)'),
      ref: z.string().optional().describe('Branch to search (an indexed one; default the default branch)'),
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
      path: z.string().optional().describe('Only files under this directory'),
      repo: z.string().optional().describe('Only this repository (exact name)'),
      ref: z.string().optional().describe('Branch to search (an indexed one; default the default branch)'),
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

  tool(
    'list_repos',
    'The repositories you can search, with their index state and default branch.',
    {
      query: z.string().optional().describe('Substring of the name (case-insensitive)'),
      page,
      perPage: perPage(30),
      sort: z.enum(['name', 'pushed']).optional().describe("By name, or by the default branch's last commit (default name)"),
      direction: z.enum(['asc', 'desc']).optional().describe('Default asc'),
    },
    async ({ query, page: number, perPage: size, sort, direction }) => {
      const params = { query, page: number?.toString(), perPage: (size ?? 30).toString(), sort, direction };
      const repos = (await route(reposRoute, { query: params })) as {
        repoName: string;
        indexState: string;
        defaultBranch: string;
        branches: string[];
        pushedAt?: string;
      }[];
      if (repos.length === 0) return 'No repositories.';
      const line = (repo: (typeof repos)[number]) =>
        `${repo.repoName} (${repo.indexState}; default branch ${repo.defaultBranch}${repo.pushedAt ? `, last commit ${repo.pushedAt}` : ''}; indexed: ${repo.branches.join(', ') || 'nothing yet'})\n`;
      return bounded(repos.map(line), () => 'Pass query to filter, or page through.');
    },
  );

  tool(
    'list_branches',
    'The branches of a repository (all of them, indexed or not), newest commit first, each with its last commit date and whether it is the default branch and whether it is indexed (searchable).',
    { repo: z.string(), query: z.string().optional().describe('Substring of the branch name (case-insensitive)'), page, perPage: perPage(50) },
    async ({ repo, query, page: number, perPage: size }) => {
      const config = visibleRepository(context, session.caller, repo);
      const repository = await gitRepository(config);
      const entry = context.catalog().repositories.find((candidate) => candidate.config.name === config.name)?.entry;
      const indexed = new Set((entry?.branches ?? []).map((branch) => branch.name));
      const needle = query?.toLowerCase();
      const branches = (await localBranchesByDate(repository)).filter(({ name }) => needle === undefined || name.toLowerCase().includes(needle));
      const first = ((number ?? 1) - 1) * (size ?? 50);
      const shown = branches.slice(first, first + (size ?? 50));
      if (shown.length === 0) return branches.length === 0 ? 'No branches.' : `No branches on this page (${branches.length} in all).`;
      const more = first + shown.length < branches.length ? `\n[${branches.length - first - shown.length} more: ask for page ${(number ?? 1) + 1}.]` : '';
      const line = ({ name, committedAt }: { name: string; committedAt: Date }) => {
        const marks = [name === entry?.defaultBranch ? 'isDefault' : '', indexed.has(name) ? 'isIndexed' : ''].filter(Boolean);
        return `${name}  ${committedAt.toISOString()}${marks.length > 0 ? `  [${marks.join(', ')}]` : ''}\n`;
      };
      return `${branches.length} branches, newest first\n${shown.map(line).join('')}${more}`;
    },
  );

  tool(
    'read_file',
    'Read a file of a repository, with line numbers.',
    {
      repo: z.string(),
      path: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      offset: z.number().int().min(1).optional().describe('First line (default 1)'),
      limit: z.number().int().min(1).max(5000).optional().describe('Lines (default 400)'),
    },
    async ({ repo, path, ref, offset, limit }) => {
      const source = (await route(sourceRoute, { query: { repo, path, ref } })) as { source: string; encoding: string; language: string };
      if (source.encoding === 'base64') return `${path} is a binary file (${Buffer.from(source.source, 'base64').length} bytes).`;
      const lines = source.source.replace(/\n$/, '').split('\n');
      const first = offset ?? 1;
      const count = limit ?? 400;
      const shown = lines.slice(first - 1, first - 1 + count).map((line, i) => `${first + i}: ${line}\n`);
      const text = bounded(shown, (n) => `Call again with offset ${first + n}.`);
      const rest =
        first - 1 + count < lines.length && !text.includes('[truncated')
          ? `\n[${lines.length - (first - 1 + count)} more lines: call again with offset ${first + count}.]`
          : '';
      return `${path} (${source.language || 'text'}, ${lines.length} lines)\n${text}${rest}`;
    },
  );

  tool(
    'list_tree',
    'List a directory of a repository, to a depth: one entry a line, directories ending in "/", paths relative to the directory.',
    {
      repo: z.string(),
      path: z.string().optional().describe('Directory (default the root)'),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      depth: z.number().int().min(1).max(MAX_TREE_DEPTH).optional().describe(`Levels below path, 1 to ${MAX_TREE_DEPTH} (default 1)`),
      includeFiles: z.boolean().optional().describe('List files (default true)'),
      includeDirectories: z.boolean().optional().describe('List directories (default true)'),
      maxEntries: z.number().int().min(1).max(MAX_TREE_ENTRIES).optional().describe(`Entries at most, up to ${MAX_TREE_ENTRIES} (default 1000)`),
    },
    async ({ repo, path, ref, depth, includeFiles, includeDirectories, maxEntries }) => {
      const root = (path ?? '').replace(/^\/+|\/+$/g, '');
      const limit = maxEntries ?? 1000;
      const entries: string[] = [];
      // One tree request per level, expanding every directory of the level before.
      let level = [root];
      let cutLevel = false;
      for (let d = 1; d <= (depth ?? 1) && level.length > 0 && entries.length <= limit; d++) {
        const { tree } = (await route(treeRoute, { body: { repoName: repo, revisionName: ref ?? 'HEAD', paths: level.filter(Boolean) } })) as {
          tree: TreeNode;
        };
        const next: string[] = [];
        for (const directory of level) {
          for (const child of nodeAt(tree, directory)?.children ?? []) {
            const childPath = directory ? `${directory}/${child.name}` : child.name;
            const shown = root ? childPath.slice(root.length + 1) : childPath;
            if (child.type === 'tree') next.push(childPath);
            if (child.type === 'tree' ? includeDirectories !== false : includeFiles !== false) entries.push(child.type === 'tree' ? `${shown}/` : shown);
          }
        }
        // A tree request expands at most LIMITS.treePaths directories.
        cutLevel ||= next.length > LIMITS.treePaths;
        level = next.slice(0, LIMITS.treePaths);
      }
      if (entries.length === 0) return 'No entries.';
      const more =
        entries.length > limit || cutLevel ? `\n[cut at ${Math.min(limit, entries.length)} entries: raise maxEntries, lower depth or list a subdirectory]` : '';
      return (
        bounded(
          entries.slice(0, limit).map((entry) => `${entry}\n`),
          () => 'List a subdirectory, or lower depth.',
        ) + more
      );
    },
  );

  tool(
    'list_commits',
    'Commits of a repository, newest first, optionally touching a path and filtered by message, author and date.',
    {
      repo: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit to list from (default HEAD)'),
      path: z.string().optional().describe('Only commits changing this file or directory'),
      query: z.string().optional().describe('RE2 regular expression over the message (case-insensitive)'),
      author: z.string().optional().describe("RE2 regular expression over the author's name and email (case-insensitive)"),
      since: z.string().optional().describe("ISO 8601 or relative: '30 days ago', 'last week'"),
      until: z.string().optional().describe("ISO 8601 or relative: 'yesterday'"),
      page,
      perPage: perPage(50),
      limit: z.number().int().min(1).max(100).optional().describe('The same as perPage'),
    },
    async ({ repo, ref, path, query, author, since, until, page: number, perPage: size, limit }) => {
      const params = { repo, ref, path, query, author, since, until, page: number?.toString(), perPage: String(size ?? limit ?? 20) };
      const commits = (await route(commitsRoute, { query: params })) as { hash: string; date: string; authorName: string; message: string }[];
      return commits.length === 0
        ? 'No commits.'
        : commits.map((commit) => `${commit.hash.slice(0, 12)} ${commit.date.slice(0, 10)} ${commit.authorName}: ${commit.message}\n`).join('');
    },
  );

  tool(
    'blame_file',
    'Who last changed each line of a file: line ranges with their commit (hash, author, date, subject).',
    { repo: z.string(), path: z.string(), ref: z.string().optional().describe('Branch, tag or commit (default HEAD)') },
    async ({ repo, path, ref }) => {
      const { ranges, commits } = (await route(blameRoute, { query: { repo, path, ref } })) as Blame;
      if (ranges.length === 0) return `${path} is empty.`;
      const lines = ranges.map((range) => {
        const commit = commits[range.hash]!;
        const last = range.startLine + range.lineCount - 1;
        return `${range.startLine === last ? range.startLine : `${range.startLine}-${last}`}: ${range.hash.slice(0, 12)} ${commit.date.slice(0, 10)} ${commit.authorName}: ${commit.message}\n`;
      });
      return bounded(lines, () => 'Read the file with read_file for the lines themselves.');
    },
  );

  tool(
    'list_commit_authors',
    'The authors of a repository (or of one path in it), most commits first.',
    {
      repo: z.string(),
      ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
      path: z.string().optional().describe('Only authors of commits changing this file or directory'),
      page,
      perPage: perPage(50),
    },
    async ({ repo, ref, path, page: number, perPage: size }) => {
      const authors = (await route(authorsRoute, { query: { repo, ref, path, page: number?.toString(), perPage: size?.toString() } })) as {
        name: string;
        email: string;
        commitCount: number;
      }[];
      return authors.length === 0 ? 'No authors.' : authors.map((author) => `${author.commitCount} ${author.name} <${author.email}>\n`).join('');
    },
  );

  tool('list_connections', 'The code hosts of the repositories you can see (one connection per code host type).', {}, async () => {
    const connections = (await route(connectionsRoute, {})) as { id: number; name: string; connectionType: string }[];
    return connections.length === 0
      ? 'No connections.'
      : connections.map((connection) => `${connection.id} ${connection.name} (${connection.connectionType})\n`).join('');
  });

  tool(
    'get_diff',
    'The diff between two revisions of a repository.',
    { repo: z.string(), base: z.string(), head: z.string(), path: z.string().optional() },
    async ({ repo, base, head, path }) => {
      const { files } = (await route(diffRoute, { query: { repo, base, head, path } })) as {
        files: {
          oldPath: string | null;
          newPath: string | null;
          hunks: { oldRange: { start: number; lines: number }; newRange: { start: number; lines: number }; body: string }[];
        }[];
      };
      if (files.length === 0) return 'No differences.';
      const parts = files.map(
        (file) =>
          `--- ${file.oldPath ?? '/dev/null'}\n+++ ${file.newPath ?? '/dev/null'}\n${file.hunks.map((hunk) => `@@ -${hunk.oldRange.start},${hunk.oldRange.lines} +${hunk.newRange.start},${hunk.newRange.lines} @@\n${hunk.body}`).join('')}\n`,
      );
      return bounded(parts, () => 'Pass path to see one file.');
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

/** The node at `directory` ('' the root) of a tree response, if it was expanded. */
function nodeAt(tree: TreeNode, directory: string): TreeNode | undefined {
  let node: TreeNode | undefined = tree;
  for (const segment of directory ? directory.split('/') : []) node = node?.children.find((child) => child.name === segment);
  return node;
}
