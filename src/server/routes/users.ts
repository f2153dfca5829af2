/** Users (spec/api.md §6): list, show, add, remove; and the audit trail. Owners only; EE. */
import { AddUserRequest, AuditList, AuditQuery, SetRoleRequest, Success, UserList, UserQuery, UserSchema } from '../../api/auth-schemas.js';
import { dateParameter, parseBody, parseQuery, validator } from '../../api/validate.js';
import type { Role, User } from '../../auth/model.js';
import { auditRecordView, memberView } from '../../auth/views.js';
import { audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import { pageHeaders, requestedPage } from '../pagination.js';
import type { Route, ServerContext } from '../route.js';
import { clusterAuditPage } from '../cluster-audit.js';

const TAG = 'Enterprise Management';
const OWNER_ERRORS = ['NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS'] as const;
const userQuery = validator(UserQuery);
const addUserBody = validator(AddUserRequest);
const auditQuery = validator(AuditQuery);
const setRoleBody = validator(SetRoleRequest);

const describeUser = (user: User, context: ServerContext) => memberView(user, context.auth.lastActivityAt(user.id));

export const listUsersRoute: Route = {
  method: 'get',
  path: '/api/ee/users',
  operationId: 'listUsers',
  tag: TAG,
  summary: 'The members of the organization',
  access: 'owner',
  ee: true,
  response: { status: 200, schema: UserList, description: 'Every member, oldest first' },
  errors: [...OWNER_ERRORS],
  async handle(_request: Request, _caller: Caller, context: ServerContext) {
    return { status: 200, body: [...context.auth.state.users.values()].map((user) => describeUser(user, context)) };
  },
};

export const getUserRoute: Route = {
  method: 'get',
  path: '/api/ee/user',
  operationId: 'getUser',
  tag: TAG,
  summary: 'One member',
  access: 'owner',
  ee: true,
  query: UserQuery,
  response: { status: 200, schema: UserSchema, description: 'The member' },
  errors: ['MISSING_REQUIRED_QUERY_PARAMETER', 'INVALID_QUERY_PARAMS', 'NOT_FOUND', ...OWNER_ERRORS],
  async handle(request: Request, _caller: Caller, context: ServerContext) {
    const { userId } = parseQuery(userQuery, request.query);
    return { status: 200, body: describeUser(context.auth.member(userId), context) };
  },
};

export const addUserRoute: Route = {
  method: 'post',
  path: '/api/ee/users',
  operationId: 'addUser',
  tag: TAG,
  summary: 'Add a member (one seat of the license each); with a password they sign in to the web app, or give them an API key with POST /api/admin/api_keys',
  access: 'owner',
  ee: true,
  body: AddUserRequest,
  response: { status: 201, schema: UserSchema, description: 'The new member' },
  errors: ['INVALID_REQUEST_BODY', ...OWNER_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { password, ...fields } = parseBody(addUserBody, request.body);
    const user = await context.auth.addUser({ ...fields, role: fields.role.toLowerCase() as Role });
    if (password !== undefined) await context.auth.setPassword(user.id, password);
    audit(context, caller, 'user.added', { id: user.id, type: 'user' }, { email: user.email, role: user.role, password: password !== undefined });
    return { status: 201, body: describeUser(user, context) };
  },
};

export const removeUserRoute: Route = {
  method: 'delete',
  path: '/api/ee/user',
  operationId: 'deleteUser',
  tag: TAG,
  summary: 'Remove a member: their API keys and scoped tokens are revoked, their MCP sessions closed and their open streams ended',
  access: 'owner',
  ee: true,
  query: UserQuery,
  response: { status: 200, schema: Success, description: 'Removed' },
  errors: ['MISSING_REQUIRED_QUERY_PARAMETER', 'INVALID_QUERY_PARAMS', 'NOT_FOUND', 'LAST_OWNER_CANNOT_BE_REMOVED', ...OWNER_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { userId } = parseQuery(userQuery, request.query);
    const { email } = context.auth.member(userId);
    await context.auth.removeUser(userId);
    audit(context, caller, 'user.removed', { id: userId, type: 'user' }, { email });
    return { status: 200, body: { success: true, message: `${email} was removed; their keys and tokens are revoked` } };
  },
};

export const setRoleRoute: Route = {
  method: 'post',
  path: '/api/ee/user/role',
  operationId: 'setUserRole',
  tag: TAG,
  summary: 'Make a member an owner, or an owner a member (never the last owner)',
  access: 'owner',
  ee: true,
  body: SetRoleRequest,
  response: { status: 200, schema: UserSchema, description: 'The member with their new role' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_FOUND', 'LAST_OWNER_CANNOT_BE_REMOVED', ...OWNER_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { userId, role } = parseBody(setRoleBody, request.body);
    const user = await context.auth.setRole(userId, role.toLowerCase() as Role);
    audit(context, caller, 'user.role', { id: user.id, type: 'user' }, { email: user.email, role: user.role });
    return { status: 200, body: describeUser(user, context) };
  },
};

export const auditRoute: Route = {
  method: 'get',
  path: '/api/ee/audit',
  operationId: 'listAuditRecords',
  tag: TAG,
  summary: 'The audit trail (searches, reads, token, key and user changes, failed authentications), newest first, paged',
  access: 'owner',
  ee: true,
  query: AuditQuery,
  response: { status: 200, schema: AuditList, description: 'One page of audit records', headers: ['X-Total-Count', 'Link', 'X-Trawl-Missing-Nodes'] },
  errors: ['INVALID_QUERY_PARAMS', ...OWNER_ERRORS],
  async handle(request: Request, _caller: Caller, context: ServerContext) {
    const params = parseQuery(auditQuery, request.query);
    const page = requestedPage(params);
    const since = dateParameter(params.since, 'since')?.getTime();
    const until = dateParameter(params.until, 'until')?.getTime();
    const offset = (page.number - 1) * page.size;
    // In a cluster every node's trail, merged (cluster-audit.ts).
    const { total, entries, missing } = context.cluster
      ? await clusterAuditPage(context, { since, until }, offset, page.size)
      : { ...(await context.audit.page(since, until, offset, page.size)), missing: [] };
    return {
      status: 200,
      body: entries.map((entry) => auditRecordView(entry, context.version)),
      headers: {
        ...pageHeaders(total, page, context.config.publicUrl, '/api/ee/audit', request.query),
        ...(missing.length > 0 ? { 'X-Trawl-Missing-Nodes': missing.join(', ') } : {}),
      },
    };
  },
};
