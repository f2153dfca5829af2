/**
 * Request validation against the schemas of src/api/schemas.ts. Failures are
 * ApiErrors whose message names the field and what was expected.
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { TypeCompiler, Value, type TypeCheck } from './typebox.js';
import { ApiError, type ErrorCode } from './errors.js';
import { SHARED_SCHEMAS } from './references.js';

export interface Validator<T extends TSchema> {
  readonly schema: T;
  readonly check: TypeCheck<T>;
}

/** Compiles a schema on its first use: compiling every route's at load would lengthen each start (docs/design.md, "Start"). */
export function validator<T extends TSchema>(schema: T): Validator<T> {
  let compiled: TypeCheck<T> | undefined;
  return {
    schema,
    get check() {
      compiled ??= TypeCompiler.Compile(schema, SHARED_SCHEMAS);
      return compiled;
    },
  };
}

function firstProblem<T extends TSchema>(v: Validator<T>, value: unknown, what: string): string {
  const error = v.check.Errors(value).First();
  if (!error) return `${what} is invalid`;
  const field = error.path.slice(1).replace(/\//g, '.');
  // A secret is never echoed, not even to the caller who sent it (responses end up in logs and screenshots).
  const got = /password/i.test(field) ? 'a secret, not shown' : describe(error.value);
  return field ? `${what} field \`${field}\`: ${error.message.toLowerCase()} (got ${got})` : `${what}: ${error.message.toLowerCase()}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function invalid(code: ErrorCode, message: string): never {
  throw new ApiError(code, message);
}

/** Parses and checks a JSON request body. */
export function parseBody<T extends TSchema>(v: Validator<T>, body: Buffer): Static<T> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    invalid('INVALID_REQUEST_BODY', `the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid('INVALID_REQUEST_BODY', 'the request body must be a JSON object');
  if (!v.check.Check(value)) invalid('INVALID_REQUEST_BODY', firstProblem(v, value, 'request body'));
  return value as Static<T>;
}

/** MISSING_REQUIRED_QUERY_PARAMETER for the first parameter `schema` requires that `rawQuery` lacks. */
export function requireQueryParameters(schema: TObject, rawQuery: string): void {
  const params = new URLSearchParams(rawQuery);
  for (const key of schema.required ?? []) {
    if (!params.has(key)) invalid('MISSING_REQUIRED_QUERY_PARAMETER', `the query parameter \`${key}\` is required`);
  }
}

/**
 * Reads the parameters a query-string schema declares (others are ignored),
 * converting numbers and booleans from their text; absent ones take the schema's default.
 */
export function parseQuery<T extends TObject>(v: Validator<T>, rawQuery: string): Static<T> {
  const params = new URLSearchParams(rawQuery);
  const value: Record<string, string> = {};
  for (const key of Object.keys(v.schema.properties)) {
    const text = params.get(key);
    if (text !== null) value[key] = text;
  }
  requireQueryParameters(v.schema, rawQuery);
  const converted = Value.Default(v.schema, Value.Convert(v.schema, value));
  if (!v.check.Check(converted))
    invalid('INVALID_QUERY_PARAMS', firstProblem(v, converted, 'query parameter').replace('query parameter field', 'query parameter'));
  return converted as Static<T>;
}

/** An optional ISO 8601 date query parameter, or INVALID_QUERY_PARAMS naming it. */
export function dateParameter(value: string | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) invalid('INVALID_QUERY_PARAMS', `query parameter \`${field}\`: expected an ISO 8601 date (got ${JSON.stringify(value)})`);
  return date;
}
