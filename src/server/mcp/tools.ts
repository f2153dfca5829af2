/**
 * The MCP tools (spec/api.md §8): each calls the HTTP route it maps to, in
 * process, with the caller of the current request — so validation, visibility and errors
 * are exactly the API's — and renders the result as text sized for a
 * language model, saying when and how it was truncated.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ApiError } from '../../api/errors.js';
import type { FileResult } from '../../api/types.js';
import type { TreeNode } from '../../git/tree.js';
import { escapeRegExp } from '../../search/matcher.js';
import type { Caller } from '../access.js';
import type { JsonReply, Request } from '../http.js';
import { asApiError } from '../known-errors.js';
import type { Route, ServerContext } from '../route.js';
import { commitsRoute, diffRoute, sourceRoute, treeRoute } from '../routes/git.js';
import { reposRoute } from '../routes/repos.js';
import { searchRoute } from '../routes/search.js';
import { findDefinitionsRoute, findReferencesRoute } from '../routes/symbols.js';

/** Tool output stops growing past this many characters (about 6,000 tokens). */
const MAX_TEXT = 24_000;

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

/** Runs a route in process for the session's caller; the JSON body on success, an ApiError otherwise. */
async function call(route: Route, caller: Caller, context: ServerContext, input: { query?: Record<string, string | undefined>; body?: unknown }): Promise<unknown> {
  const params = Object.entries(input.query ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined);
  const request: Request = {
    method: route.method,
    path: route.path,
    query: new URLSearchParams(params).toString(),
    headers: {},
    requestId: `mcp-${Date.now().toString(36)}`,
    remoteAddress: '',
    body: Buffer.from(input.body === undefined ? '' : JSON.stringify(input.body)),
    onAborted: () => {}, // a tool call runs to its end
  };
  try {
    const reply = await route.handle(request, caller, context);
    if (!('text' in reply)) return (reply as JsonReply).body;
    // The search route answers its JSON already serialized (built by a worker), maybe in memory it reuses.
    try {
      return JSON.parse(reply.text.toString());
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

const quote = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;

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

/** Registers every tool on `server`, acting as the session's caller of the request being answered. */
export function registerTools(server: McpServer, session: { readonly caller: Caller }, context: ServerContext): void {
  server.registerTool(
    'search_code',
    {
      description: 'Search code in the indexed repositories (trawl query language: terms ANDed, "or", file:, lang:, repo:, sym:). Returns matching lines with line numbers.',
      inputSchema: {
        query: z.string().describe('The query'),
        regex: z.boolean().optional().describe('Treat terms as RE2 regular expressions'),
        caseSensitive: z.boolean().optional(),
        repo: z.string().optional().describe('Only this repository (exact name)'),
        language: z.string().optional().describe('Only this language (e.g. TypeScript, C)'),
        path: z.string().optional().describe('Only paths containing this text'),
        limit: z.number().int().min(1).max(1000).optional().describe('Match ranges to return (default 50)'),
      },
    },
    async ({ query, regex, caseSensitive, repo, language, path, limit }) =>
      run(async () => {
        const filters = [repo === undefined ? '' : `repo:^${escapeRegExp(repo)}$`, language === undefined ? '' : `lang:${quote(language)}`, path === undefined ? '' : `file:${quote(escapeRegExp(path))}`];
        const matches = limit ?? 50;
        const body = { query: [query, ...filters].filter(Boolean).join(' '), matches, isRegexEnabled: regex ?? false, isCaseSensitivityEnabled: caseSensitive ?? false };
        const response = (await call(searchRoute, session.caller, context, { body })) as { files: FileResult[]; isSearchExhaustive: boolean; stats: { actualMatchCount: number } };
        if (response.files.length === 0) return 'No matches.';
        const header = `${response.stats.actualMatchCount} matches in ${response.files.length} files${response.isSearchExhaustive ? '' : ` (cut at ${matches}: raise limit or narrow the query for more)`}\n\n`;
        return header + bounded(renderFiles(response.files), () => 'Narrow the query (repo, language, path) or lower limit.');
      }),
  );

  server.registerTool(
    'list_repos',
    { description: 'The repositories you can search, with their index state.', inputSchema: { query: z.string().optional().describe('Substring of the name') } },
    async ({ query }) =>
      run(async () => {
        const repos = (await call(reposRoute, session.caller, context, { query: { query, perPage: '100' } })) as { repoName: string; indexState: string; branches: string[] }[];
        return repos.length === 0 ? 'No repositories.' : bounded(repos.map((repo) => `${repo.repoName} (${repo.indexState}; branches: ${repo.branches.join(', ')})\n`), () => 'Pass query to filter.');
      }),
  );

  server.registerTool(
    'read_file',
    {
      description: 'Read a file of a repository, with line numbers.',
      inputSchema: {
        repo: z.string(),
        path: z.string(),
        ref: z.string().optional().describe('Branch, tag or commit (default HEAD)'),
        offset: z.number().int().min(1).optional().describe('First line (default 1)'),
        limit: z.number().int().min(1).max(5000).optional().describe('Lines (default 400)'),
      },
    },
    async ({ repo, path, ref, offset, limit }) =>
      run(async () => {
        const source = (await call(sourceRoute, session.caller, context, { query: { repo, path, ref } })) as { source: string; encoding: string; language: string };
        if (source.encoding === 'base64') return `${path} is a binary file (${Buffer.from(source.source, 'base64').length} bytes).`;
        const lines = source.source.replace(/\n$/, '').split('\n');
        const first = offset ?? 1;
        const count = limit ?? 400;
        const shown = lines.slice(first - 1, first - 1 + count).map((line, i) => `${first + i}: ${line}\n`);
        const text = bounded(shown, (n) => `Call again with offset ${first + n}.`);
        const rest = first - 1 + count < lines.length && !text.includes('[truncated') ? `\n[${lines.length - (first - 1 + count)} more lines: call again with offset ${first + count}.]` : '';
        return `${path} (${source.language || 'text'}, ${lines.length} lines)\n${text}${rest}`;
      }),
  );

  server.registerTool(
    'list_tree',
    { description: 'List a directory of a repository.', inputSchema: { repo: z.string(), path: z.string().optional().describe('Directory (default the root)'), ref: z.string().optional() } },
    async ({ repo, path, ref }) =>
      run(async () => {
        const directory = (path ?? '').replace(/^\/+|\/+$/g, '');
        const { tree } = (await call(treeRoute, session.caller, context, { body: { repoName: repo, revisionName: ref ?? 'HEAD', paths: directory ? [directory] : [] } })) as { tree: TreeNode };
        let node: TreeNode | undefined = tree;
        for (const segment of directory ? directory.split('/') : []) node = node?.children.find((child) => child.name === segment);
        return bounded((node?.children ?? []).map((child) => `${child.type === 'tree' ? `${child.name}/` : child.name}\n`), () => 'List a subdirectory instead.');
      }),
  );

  server.registerTool(
    'list_commits',
    { description: 'Recent commits of a repository, newest first.', inputSchema: { repo: z.string(), ref: z.string().optional(), path: z.string().optional(), limit: z.number().int().min(1).max(100).optional() } },
    async ({ repo, ref, path, limit }) =>
      run(async () => {
        const commits = (await call(commitsRoute, session.caller, context, { query: { repo, ref, path, perPage: String(limit ?? 20) } })) as { hash: string; date: string; authorName: string; message: string }[];
        return commits.length === 0 ? 'No commits.' : commits.map((commit) => `${commit.hash.slice(0, 12)} ${commit.date.slice(0, 10)} ${commit.authorName}: ${commit.message}\n`).join('');
      }),
  );

  server.registerTool(
    'get_diff',
    { description: 'The diff between two revisions of a repository.', inputSchema: { repo: z.string(), base: z.string(), head: z.string(), path: z.string().optional() } },
    async ({ repo, base, head, path }) =>
      run(async () => {
        const { files } = (await call(diffRoute, session.caller, context, { query: { repo, base, head, path } })) as { files: { oldPath: string | null; newPath: string | null; hunks: { oldRange: { start: number; lines: number }; newRange: { start: number; lines: number }; body: string }[] }[] };
        if (files.length === 0) return 'No differences.';
        const parts = files.map((file) => `--- ${file.oldPath ?? '/dev/null'}\n+++ ${file.newPath ?? '/dev/null'}\n${file.hunks.map((hunk) => `@@ -${hunk.oldRange.start},${hunk.oldRange.lines} +${hunk.newRange.start},${hunk.newRange.lines} @@\n${hunk.body}`).join('')}\n`);
        return bounded(parts, () => 'Pass path to see one file.');
      }),
  );

  for (const [name, route, what] of [
    ['find_symbol_definitions', findDefinitionsRoute, 'Where a symbol is defined (ctags definitions).'],
    ['find_symbol_references', findReferencesRoute, 'Every whole-word occurrence of a symbol name.'],
  ] as const) {
    server.registerTool(
      name,
      { description: what, inputSchema: { symbol: z.string(), repo: z.string().optional(), language: z.string().optional() } },
      async ({ symbol, repo, language }) =>
        run(async () => {
          const body = { symbolName: symbol, ...(repo === undefined ? {} : { repoName: repo }), ...(language === undefined ? {} : { language }) };
          const found = (await call(route, session.caller, context, { body })) as { files: { repository: string; fileName: string; matches: { lineContent: string; range: { start: { lineNumber: number } } }[] }[] };
          const lines = found.files.flatMap((file) => file.matches.map((match) => `${file.repository} ${file.fileName}:${match.range.start.lineNumber}: ${match.lineContent.trim()}\n`));
          return lines.length === 0 ? 'Not found.' : bounded(lines, () => 'Pass repo or language to narrow it.');
        }),
    );
  }
}
