/** /api/mcp (spec/api.md §8): MCP Streamable HTTP — POST for JSON-RPC, DELETE to end a session, GET answered 405. */
import { Type } from '../../api/typebox.js';
import type { Route } from '../route.js';
import { MCP_RESOURCE_PATH } from '../mcp/resource.js';
import { handleMcp } from '../mcp/sessions.js';

/** The transport's own refusals, as JSON-RPC errors (the MCP SDK's), not the API's error object. */
const JsonRpcError = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  error: Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) }),
  id: Type.Union([Type.String(), Type.Number(), Type.Null()]),
});
const SESSION_NOT_FOUND = {
  status: 404,
  description: 'JSON-RPC error: the session named by mcp-session-id is not open (ended, expired or never opened)',
  schema: JsonRpcError,
};
const NOT_INITIALIZED = 'no mcp-session-id and not an initialize request';

const mcpRoute = (method: 'post' | 'delete', summary: string, response: Route['response']): Route => ({
  method,
  path: MCP_RESOURCE_PATH,
  operationId: method === 'post' ? 'mcp' : 'mcpEndSession',
  tag: 'MCP',
  summary,
  access: 'read',
  response,
  errors: ['NOT_AUTHENTICATED', 'RATE_LIMITED'],
  handle: handleMcp,
});

export const mcpPostRoute = mcpRoute(
  'post',
  'MCP JSON-RPC over Streamable HTTP. Tools: search_code, grep, glob, list_repos, list_branches, list_connections, read_file, list_tree, blame_file, list_commits, list_commit_authors, get_diff, find_symbol_definitions, find_symbol_references',
  {
    status: 200,
    contentType: 'application/json',
    description: 'JSON-RPC response',
    headers: ['mcp-session-id'],
    others: [
      { status: 202, description: 'A notification or response, accepted (no body)' },
      { status: 400, description: `JSON-RPC error: the body is not JSON or not a JSON-RPC message, or ${NOT_INITIALIZED}`, schema: JsonRpcError },
      SESSION_NOT_FOUND,
      { status: 406, description: 'JSON-RPC error: Accept must name both application/json and text/event-stream', schema: JsonRpcError },
      { status: 415, description: 'JSON-RPC error: Content-Type must be application/json', schema: JsonRpcError },
    ],
  },
);
export const mcpDeleteRoute = mcpRoute('delete', 'Ends the MCP session named by the mcp-session-id header', {
  status: 200,
  description: 'The session ended (no body)',
  others: [{ status: 400, description: `JSON-RPC error: ${NOT_INITIALIZED}`, schema: JsonRpcError }, SESSION_NOT_FOUND],
});
