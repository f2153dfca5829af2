/** /api/mcp (spec/api.md §8): MCP Streamable HTTP — POST for JSON-RPC, DELETE to end a session, GET answered 405. */
import type { Route } from '../route.js';
import { MCP_RESOURCE_PATH } from '../mcp/resource.js';
import { handleMcp } from '../mcp/sessions.js';

const mcpRoute = (method: 'post' | 'delete', summary: string): Route => ({
  method,
  path: MCP_RESOURCE_PATH,
  operationId: method === 'post' ? 'mcp' : 'mcpEndSession',
  tag: 'MCP',
  summary,
  access: 'read',
  response: { status: 200, contentType: 'application/json', description: 'JSON-RPC response (or 202 for notifications)', headers: ['mcp-session-id'] },
  errors: ['NOT_AUTHENTICATED'],
  handle: handleMcp,
});

export const mcpPostRoute = mcpRoute(
  'post',
  'MCP JSON-RPC over Streamable HTTP. Tools: search_code, grep, glob, list_repos, list_branches, list_connections, read_file, list_tree, blame_file, list_commits, list_commit_authors, get_diff, find_symbol_definitions, find_symbol_references',
);
export const mcpDeleteRoute = mcpRoute('delete', 'Ends the MCP session named by the mcp-session-id header');
