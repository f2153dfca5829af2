/** Where the MCP server is, and where its protected-resource metadata (RFC 9728) tells OAuth clients how to get a token. */
export const MCP_RESOURCE_PATH = '/api/mcp';
export const PROTECTED_RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`;
