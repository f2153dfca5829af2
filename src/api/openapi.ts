/**
 * The OpenAPI 3.0.3 document of the API, generated from the route table and
 * the schemas that validate requests (so the two cannot drift apart).
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import { ERROR_CODES, type ErrorCode } from './errors.js';
import { SHARED_SCHEMAS } from './references.js';
import { ErrorResponse } from './schemas.js';

/** What the document says about one operation. */
export interface Operation {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /**
   * 'public' needs no credential; 'read' takes a bearer token, an API key
   * header, a session cookie, or nothing when anonymous access is on; 'user'
   * a user's API key or session; 'apiKey' a user's API key; 'owner' an
   * owner's API key or session.
   */
  access: 'public' | 'read' | 'user' | 'apiKey' | 'owner';
  /** An enterprise endpoint: it needs an active license. */
  ee?: boolean;
  body?: TSchema;
  query?: TObject;
  response: {
    status: number;
    schema?: TSchema;
    contentType?: string;
    description: string;
    headers?: string[];
    /** Other answers that are not the API's error object: a protocol's own (MCP's JSON-RPC errors, 202). */
    others?: readonly { status: number; description: string; schema?: TSchema }[];
  };
  errors: readonly ErrorCode[];
}

/** Errors any operation can answer with: every request's Host and Origin are checked first (server/origin.ts). */
const COMMON_ERRORS: ErrorCode[] = ['INVALID_REQUEST_HEADERS', 'INSUFFICIENT_PERMISSIONS', 'UNEXPECTED_ERROR', 'SERVICE_UNAVAILABLE'];
const REF_PREFIX = '#/components/schemas/';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A TypeBox (JSON Schema) schema in OpenAPI 3.0's dialect: component refs, enum for const, nullable for "or null",
 * additionalProperties for a record's patternProperties (3.0 has no property name patterns).
 */
export function toOpenApiSchema(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (typeof schema !== 'object' || schema === null) return schema as Json;
  const source = schema as Record<string, unknown>;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string') out.$ref = value.startsWith('#') ? value : REF_PREFIX + value;
    else if (key === 'const') out.enum = [value as Json];
    else if (key === 'patternProperties') {
      const values = Object.values(value as object);
      out.additionalProperties = toOpenApiSchema(values.length === 1 ? values[0] : { anyOf: values });
    } else out[key] = toOpenApiSchema(value);
  }
  const alternatives = source.anyOf as Record<string, unknown>[] | undefined;
  if (alternatives?.some((alternative) => alternative.type === 'null')) {
    const rest = alternatives.filter((alternative) => alternative.type !== 'null');
    delete out.anyOf;
    // 3.0.3's nullable takes effect only beside a type: each alternative is made nullable.
    if (rest.length === 1) Object.assign(out, toOpenApiSchema(rest[0]), { nullable: true });
    else out.anyOf = rest.map((alternative) => ({ ...(toOpenApiSchema(alternative) as object), nullable: true }));
  }
  return out;
}

function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...COMMON_ERRORS]) {
    const status = ERROR_CODES[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const responses: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: list.map((code) => `${code}: ${ERROR_CODES[code].when}`).join('; '),
      content: { 'application/json': { schema: { $ref: `${REF_PREFIX}PublicApiServiceError` } } },
    };
  }
  return responses;
}

function parameters(query: TObject | undefined): Json[] {
  if (!query) return [];
  const required = new Set(query.required ?? []);
  return Object.entries(query.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: toOpenApiSchema(schema),
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
  }));
}

/** `{name}` segments of a path template. */
function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((found) => ({ name: found[1]!, in: 'path', required: true, schema: { type: 'string' } }));
}

/** The route's own errors, and those of every operation like it. */
function operationErrors(operation: Operation): ErrorCode[] {
  const errors = [...operation.errors];
  // A credential read can be refused for the failed authentications of its address, or for its own rate.
  if (operation.access !== 'public') errors.push('RATE_LIMITED');
  // Every POST body is read within server.maxBodyBytes, whether or not the operation wants one.
  if (operation.method === 'post') errors.push('INVALID_REQUEST_BODY');
  return errors;
}

function operationObject(operation: Operation): Json {
  const { response } = operation;
  const success: Record<string, Json> = { description: response.description };
  // A stream's schema is that of each event's data.
  if (response.schema) success.content = { [response.contentType ?? 'application/json']: { schema: toOpenApiSchema(response.schema) } };
  // A JSON body without a schema of its own (a document, a protocol's metadata) is still an object.
  else if (response.contentType)
    success.content = { [response.contentType]: { schema: { type: response.contentType === 'application/json' ? 'object' : 'string' } } };
  if (response.headers) success.headers = Object.fromEntries(response.headers.map((header) => [header, { schema: { type: 'string' } }]));
  const credentials: Json[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }, { sourcebotApiKeyHeader: [] }];
  const session: Json[] = operation.access === 'apiKey' ? [] : [{ sessionCookie: [] }];
  const object: Record<string, Json> = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.ee ? `${operation.summary} (EE: needs an active license)` : operation.summary,
    security: operation.access === 'public' ? [] : operation.access === 'read' ? [...credentials, ...session, {}] : [...credentials, ...session],
    responses: { [String(response.status)]: success, ...errorResponses(operationErrors(operation)) },
  };
  const responses = object.responses as Record<string, { description: string; content?: { 'application/json': { schema: Json } } }>;
  for (const other of response.others ?? []) {
    const error = responses[other.status];
    // A status both a protocol and the API answer with (MCP's 400: a JSON-RPC error, or the body over its limit) has either body.
    const schemas = [other.schema && toOpenApiSchema(other.schema), error?.content?.['application/json'].schema].filter((schema) => schema !== undefined);
    responses[other.status] = {
      description: error ? `${other.description}; ${error.description}` : other.description,
      ...(schemas.length > 0 ? { content: { 'application/json': { schema: schemas.length === 1 ? schemas[0]! : { anyOf: schemas } } } } : {}),
    };
  }
  const params = [...pathParameters(operation.path), ...parameters(operation.query)];
  if (params.length > 0) object.parameters = params;
  if (operation.body) object.requestBody = { required: true, content: { 'application/json': { schema: toOpenApiSchema(operation.body) } } };
  return object;
}

export function openApiDocument(operations: readonly Operation[], info: { version: string; publicUrl: string }): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const operation of operations) (paths[operation.path] ??= {})[operation.method] = operationObject(operation);
  const schemas: Record<string, Json> = {};
  for (const schema of [...SHARED_SCHEMAS, ErrorResponse]) schemas[schema.$id!] = toOpenApiSchema(schema);
  return {
    openapi: '3.0.3',
    info: { title: 'trawl', description: 'Self-hosted code search and navigation', version: info.version },
    servers: [{ url: info.publicUrl }],
    tags: [...new Set(operations.map((operation) => operation.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (trawl_ak_…), a scoped access token (trawl_st_…) or an OAuth access token (trawl_oa_…, EE)',
        },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key' },
        sourcebotApiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Sourcebot-Api-Key',
          description: 'The same API key under the name Sourcebot clients send',
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'trawl_session',
          description: 'A signed-in browser session (POST /api/auth/sign_in); writes also need X-CSRF-Token (`__Host-trawl_session` when publicUrl is https)',
        },
      },
    },
  };
}
