/**
 * What every MCP tool is made with (tools.ts, search-tools.ts): a route called in process as the session's
 * caller, the filters of a scope, text bounded for a language model, and `tool`, which registers a read-only
 * tool whose arguments are exactly its schema.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ApiError, type ErrorBody } from '../../api/errors.js';
import type { FileResult } from '../../api/types.js';
import { escapeRegExp } from '../../query/escape.js';
import type { Caller } from '../access.js';
import type { JsonReply, Request } from '../http.js';
import { asApiError } from '../known-errors.js';
import { forwardToPeer, RepositoryElsewhere } from '../peer-forward.js';
import { visibleRepository } from '../repositories.js';
import type { Route, ServerContext } from '../route.js';

/** Tool output stops growing past this many characters (about 6,000 tokens). */
const MAX_TEXT = 24_000;

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };

/** What a tool call runs as: the session's caller, from the address of the session's latest request. */
export interface ToolCaller {
  readonly caller: Caller;
  readonly remoteAddress: string;
}

/** Runs a route in process for the session's caller; the JSON body and the headers on success, an ApiError otherwise. */
async function call(
  route: Route,
  { caller, remoteAddress }: ToolCaller,
  context: ServerContext,
  input: { query?: Record<string, string | undefined>; body?: unknown },
): Promise<{ body: unknown; headers: Record<string, string> }> {
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
    const reply = await route.handle(request, caller, context).catch((error: unknown) => {
      // In a cluster, a read of a repository this node has no copy of goes to a node that has one, as over HTTP.
      if (error instanceof RepositoryElsewhere) return forwardToPeer(context, request, caller, error);
      throw error;
    });
    if (!('text' in reply)) return { body: (reply as JsonReply).body, headers: reply.headers ?? {} };
    // The search route answers its JSON already serialized (built by a worker), maybe in memory it reuses.
    try {
      const parsed = JSON.parse(typeof reply.text === 'string' || Buffer.isBuffer(reply.text) ? reply.text.toString() : Buffer.concat(reply.text).toString());
      // A forwarded read's refusal comes as the other node's error object.
      if (reply.status >= 400) throw new ApiError((parsed as ErrorBody).errorCode, (parsed as ErrorBody).message);
      return { body: parsed, headers: reply.headers ?? {} };
    } finally {
      reply.release?.();
    }
  } catch (error) {
    throw asApiError(error);
  }
}

/** Text within MAX_TEXT, with a closing line that says what was left out and how to get it. */
export function bounded(parts: string[], more: (shown: number) => string): string {
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
export const quote = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;

/** Text lines of a search's files: `N: line` under a `## repo path` heading per file. */
export function renderFiles(files: FileResult[]): string[] {
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

export interface SearchResult {
  files: FileResult[];
  isSearchExhaustive: boolean;
  stats: { actualMatchCount: number };
}

/** Query filters for a repository (exact name), a directory (path prefix) and a branch, tag or commit. */
export function queryFilters(scope: { repo?: string; path?: string; ref?: string }): string[] {
  const directory = scope.path?.replace(/^\/+|\/+$/g, '');
  return [
    scope.repo === undefined ? '' : `repo:${quote(`^${escapeRegExp(scope.repo)}$`)}`,
    directory ? `file:${quote(`^${escapeRegExp(directory)}/`)}` : '',
    scope.ref === undefined ? '' : `rev:${quote(`^${escapeRegExp(scope.ref)}$`)}`,
  ].filter(Boolean);
}

export const page = z.number().int().min(1).optional().describe('Page number, from 1 (default 1)');
export const perPage = (fallback: number) => z.number().int().min(1).max(100).optional().describe(`Results per page, 1 to 100 (default ${fallback})`);

type RouteInput = { query?: Record<string, string | undefined>; body?: unknown };

/** The session's tools' means: see the module's comment. */
export interface ToolKit {
  session: ToolCaller;
  context: ServerContext;
  route(target: Route, input: RouteInput): Promise<unknown>;
  /** A paged listing's page (`route`'s body) and how many items it has in all (its X-Total-Count). */
  listing(target: Route, input: RouteInput): Promise<{ items: unknown[]; total: number }>;
  /** The filters of a scope; NOT_FOUND (as Sourcebot's tools) for a repository the caller cannot see, so a misspelt name is no empty result. */
  scopeFilters(scope: { repo?: string; path?: string; ref?: string }): string[];
  /** Registers a read-only tool whose arguments are exactly `shape` (an unknown one is an error result naming it). */
  tool<Shape extends z.ZodRawShape>(name: string, description: string, shape: Shape, produce: (args: z.infer<z.ZodObject<Shape>>) => Promise<string>): void;
}

/** The kit of `session`'s tools on `server`, acting as the session's caller of the request being answered. */
export function toolKit(server: McpServer, session: ToolCaller, context: ServerContext): ToolKit {
  return {
    session,
    context,
    route: async (target, input) => (await call(target, session, context, input)).body,
    listing: async (target, input) => {
      const { body, headers } = await call(target, session, context, input);
      const total = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-total-count')?.[1];
      return { items: body as unknown[], total: Number(total) };
    },
    scopeFilters: (scope) => {
      if (scope.repo !== undefined) visibleRepository(context, session.caller, scope.repo);
      return queryFilters(scope);
    },
    tool: (name, description, shape, produce) => {
      server.registerTool(name, { description, inputSchema: z.object(shape).strict(), annotations: { readOnlyHint: true } }, (args: unknown) =>
        run(() => produce(args as Parameters<typeof produce>[0])),
      );
    },
  };
}
