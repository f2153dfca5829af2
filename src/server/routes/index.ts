/** The route table: every endpoint the daemon serves, in the order the OpenAPI document lists them. */
import { openApiDocument } from '../../api/openapi.js';
import type { Route } from '../route.js';
import { authorsRoute, blameRoute, branchesRoute, commitRoute, commitsRoute, diffRoute, sourceRoute, treeRoute } from './git.js';
import {
  addGrantRoute,
  createApiKeyRoute,
  deleteApiKeyRoute,
  getLicenseRoute,
  getSettingsRoute,
  installLicenseRoute,
  listApiKeysRoute,
  removeGrantRoute,
  setSettingsRoute,
} from './admin.js';
import { mcpDeleteRoute, mcpPostRoute } from './mcp.js';
import { connectionSyncRoute, connectionsRoute, reposRoute } from './repos.js';
import {
  authorizationServerRoute,
  decideAuthorizationRoute,
  describeAuthorizationRoute,
  protectedResourceRootRoute,
  protectedResourceRoute,
  registerClientRoute,
  revokeRoute,
  tokenRoute,
} from './oauth.js';
import { oidcCallbackRoute, oidcStartRoute, providersRoute } from './oidc.js';
import { peerAppliedRoute, peerAuditRoute, peerSearchRoute, peerShardRoute, peerShardsRoute } from './cluster.js';
import { searchRoute, streamSearchRoute } from './search.js';
import { endOtherSessionsRoute, endSessionRoute, getSessionRoute, listSessionsRoute, setPasswordRoute, signInRoute, signOutRoute } from './sessions.js';
import { findDefinitionsRoute, findReferencesRoute } from './symbols.js';
import { healthRoute, metricsRoute, versionRoute } from './system.js';
import { createTokenRoute, listTokensRoute, revokeTokenRoute } from './tokens.js';
import { addUserRoute, auditRoute, getUserRoute, listUsersRoute, removeUserRoute, setRoleRoute } from './users.js';

const openApiRoute: Route = {
  method: 'get',
  path: '/api/openapi.json',
  operationId: 'openapi',
  tag: 'System',
  summary: 'This document',
  access: 'public',
  response: { status: 200, contentType: 'application/json', description: 'The OpenAPI 3.0.3 document' },
  errors: [],
  async handle(_request, _caller, context) {
    return { status: 200, body: openApiDocument(ROUTES, { version: context.version, publicUrl: context.config.publicUrl }) };
  },
};

export const ROUTES: readonly Route[] = [
  searchRoute,
  streamSearchRoute,
  findReferencesRoute,
  findDefinitionsRoute,
  treeRoute,
  sourceRoute,
  blameRoute,
  reposRoute,
  connectionsRoute,
  connectionSyncRoute,
  commitsRoute,
  authorsRoute,
  branchesRoute,
  commitRoute,
  diffRoute,
  healthRoute,
  versionRoute,
  openApiRoute,
  metricsRoute,
  mcpPostRoute,
  mcpDeleteRoute,
  createTokenRoute,
  revokeTokenRoute,
  listTokensRoute,
  listUsersRoute,
  getUserRoute,
  addUserRoute,
  removeUserRoute,
  setRoleRoute,
  auditRoute,
  createApiKeyRoute,
  listApiKeysRoute,
  deleteApiKeyRoute,
  addGrantRoute,
  removeGrantRoute,
  getSettingsRoute,
  setSettingsRoute,
  getLicenseRoute,
  installLicenseRoute,
  signInRoute,
  providersRoute,
  oidcStartRoute,
  oidcCallbackRoute,
  signOutRoute,
  getSessionRoute,
  listSessionsRoute,
  endSessionRoute,
  endOtherSessionsRoute,
  setPasswordRoute,
  protectedResourceRoute,
  protectedResourceRootRoute,
  authorizationServerRoute,
  registerClientRoute,
  describeAuthorizationRoute,
  decideAuthorizationRoute,
  tokenRoute,
  revokeRoute,
  peerSearchRoute,
  peerShardsRoute,
  peerShardRoute,
  peerAppliedRoute,
  peerAuditRoute,
];
