/**
 * MCP over Streamable HTTP at /api/mcp: the SDK's web-standard transport
 * (a fetch `Request` in, a `Response` out), one MCP server and transport per
 * session, adapted to the handler template. A session is bound to the user
 * (or anonymity) that opened it: each request is authenticated afresh and its
 * tools run with that request's caller, and the session dies with its
 * credential (revoked, expired, or its user removed).
 */
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Caller } from '../access.js';
import type { Reply, Request } from '../http.js';
import type { ServerContext } from '../route.js';
import { registerTools } from './tools.js';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  caller: Caller;
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

/** Handles one MCP request (POST: JSON-RPC; DELETE: end the session). */
export async function handleMcp(request: Request, caller: Caller, context: ServerContext): Promise<Reply> {
  const sessionId = request.headers[SESSION_HEADER];
  let session = sessionId ? sessions.get(sessionId) : undefined;
  if (sessionId && !session) return jsonRpcError(404, 'Session not found: start a new one with initialize');
  if (!session) session = await newSession(caller, context);
  else if (session.caller.user?.id !== caller.user?.id) return jsonRpcError(403, 'This session belongs to another user');
  else session.caller = caller;
  return fromResponse(await session.transport.handleRequest(toWebRequest(request, context)));
}

async function newSession(caller: Caller, context: ServerContext): Promise<Session> {
  const server = new McpServer({ name: 'trawl', version: context.version });
  const session: Session = {
    caller,
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
  return new globalThis.Request(`${context.config.publicUrl}${request.path}`, { method: request.method.toUpperCase(), headers, ...(hasBody ? { body: request.body.toString('utf8') } : {}) });
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
