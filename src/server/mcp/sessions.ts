/**
 * MCP over Streamable HTTP at /api/mcp: the SDK's web-standard transport
 * (a fetch `Request` in, a `Response` out), one MCP server and transport per
 * session, adapted to the handler template. A session is bound to the user
 * (or anonymity) that opened it: each request is authenticated afresh and its
 * tools run with that request's caller, and the session dies with its
 * credential (revoked, expired, or its user removed). Sessions are bounded:
 * one unused for `server.mcpSessionIdleSeconds` is closed, and a new one past
 * `server.mcpSessionsPerCaller` (per user; per address for anonymous
 * callers) or `server.mcpSessions` in all is refused with 429 or 503.
 */
import { randomUUID } from 'node:crypto';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ApiError } from '../../api/errors.js';
import type { Caller } from '../access.js';
import { addressKey } from '../client-address.js';
import type { Reply, Request } from '../http.js';
import type { ServerContext } from '../route.js';

/** The SDK, zod and the tool table, loaded at the first MCP session, not at start (they cost it ~180 ms). */
let library: Promise<
  [
    typeof import('@modelcontextprotocol/sdk/server/mcp.js'),
    typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    typeof import('./tools.js'),
  ]
> | null = null;
const mcpLibrary = () =>
  (library ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('./tools.js'),
  ]));

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  caller: Caller;
  /** The address of its latest request: its tool calls' own, for the callers' turns and places in the search pool. */
  remoteAddress: string;
  /** Who holds it, for the per-caller bound: the user's id, or the anonymous caller's address. */
  holder: string;
  lastUsed: number;
}

const SESSION_HEADER = 'mcp-session-id';
const sessions = new Map<string, Session>();

/** Sessions open now (for tests and metrics). */
export function openSessions(): number {
  return sessions.size;
}

/** Closes every session whose credential died (called after each change of the auth state). */
export function endSessionsOfDeadCredentials(): void {
  for (const [id, session] of sessions) {
    if (session.caller.stillValid()) continue;
    sessions.delete(id);
    void session.transport.close();
  }
}

/** Closes the sessions unused for longer than the idle time. */
function closeIdleSessions(idleMs: number, now: number): void {
  for (const [id, session] of sessions) {
    if (now - session.lastUsed <= idleMs) continue;
    sessions.delete(id);
    void session.transport.close();
  }
}

/** Handles one MCP request (POST: JSON-RPC; DELETE: end the session). */
export async function handleMcp(request: Request, caller: Caller, context: ServerContext): Promise<Reply> {
  const now = Date.now();
  closeIdleSessions(context.config.server.mcpSessionIdleSeconds * 1000, now);
  const sessionId = request.headers[SESSION_HEADER];
  const session = sessionId ? sessions.get(sessionId) : undefined;
  if (sessionId && !session) return jsonRpcError(404, 'Session not found (ended, expired or never opened): start a new one with initialize');
  if (!session) {
    const holder = caller.user?.id ?? addressKey(request.remoteAddress);
    return whileOpening(holder, context, async () => {
      const opened = await newSession(caller, holder, request.remoteAddress, context);
      return fromResponse(await opened.transport.handleRequest(toWebRequest(request, context)));
    });
  }
  if (session.caller.user?.id !== caller.user?.id) return jsonRpcError(403, 'This session belongs to another user');
  session.caller = caller;
  session.remoteAddress = request.remoteAddress;
  session.lastUsed = now;
  return fromResponse(await session.transport.handleRequest(toWebRequest(request, context)));
}

/** Sessions being opened now (not yet registered), per holder: they count against the bounds too. */
const opening = new Map<string, number>();

/**
 * Runs `open` for a new session of `holder` within the bounds: RATE_LIMITED
 * past the per-caller one, SERVICE_UNAVAILABLE past the total.
 */
async function whileOpening(holder: string, context: ServerContext, open: () => Promise<Reply>): Promise<Reply> {
  const { mcpSessions, mcpSessionsPerCaller } = context.config.server;
  let held = opening.get(holder) ?? 0;
  for (const session of sessions.values()) if (session.holder === holder) held++;
  if (held >= mcpSessionsPerCaller) {
    throw new ApiError(
      'RATE_LIMITED',
      `you hold ${held} MCP sessions, the most one caller may (server.mcpSessionsPerCaller): end one with DELETE /api/mcp, or let one expire`,
      { 'Retry-After': '60' },
    );
  }
  let total = sessions.size;
  for (const count of opening.values()) total += count;
  if (total >= mcpSessions)
    throw new ApiError('SERVICE_UNAVAILABLE', `the server holds ${total} MCP sessions, the most it may (server.mcpSessions)`, { 'Retry-After': '60' });
  opening.set(holder, (opening.get(holder) ?? 0) + 1);
  try {
    return await open();
  } finally {
    const left = opening.get(holder)! - 1;
    if (left > 0) opening.set(holder, left);
    else opening.delete(holder);
  }
}

async function newSession(caller: Caller, holder: string, remoteAddress: string, context: ServerContext): Promise<Session> {
  const [{ McpServer }, { WebStandardStreamableHTTPServerTransport }, { registerTools }] = await mcpLibrary();
  const server = new McpServer({ name: 'trawl', version: context.version });
  const session: Session = {
    caller,
    remoteAddress,
    holder,
    lastUsed: Date.now(),
    transport: new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    }),
  };
  registerTools(server, session, context);
  await server.connect(session.transport);
  return session;
}

function toWebRequest(request: Request, context: ServerContext): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, value);
  const hasBody = request.method === 'post';
  return new globalThis.Request(`${context.config.publicUrl}${request.path}`, {
    method: request.method.toUpperCase(),
    headers,
    ...(hasBody ? { body: request.body.toString('utf8') } : {}),
  });
}

/** The transport's Response as a reply: the same status, the headers MCP clients read, the body. */
async function fromResponse(response: Response): Promise<Reply> {
  const headers: Record<string, string> = {};
  for (const name of [SESSION_HEADER, 'mcp-protocol-version', 'cache-control']) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const contentType = response.headers.get('content-type') ?? 'application/json';
  if (contentType.startsWith('text/event-stream') && response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    return {
      status: response.status,
      contentType,
      headers,
      async stream(sink) {
        for (let chunk = await reader.read(); !chunk.done && !sink.isClosed(); chunk = await reader.read()) await sink.write(chunk.value);
        await reader.cancel().catch(() => undefined);
      },
    };
  }
  return { status: response.status, text: await response.text(), contentType, headers };
}

function jsonRpcError(status: number, message: string): Reply {
  return { status, contentType: 'application/json', text: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }) };
}
