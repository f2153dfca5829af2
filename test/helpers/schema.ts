import type { TSchema } from '@sinclair/typebox';
import type { Test } from 'tap';
import { ErrorResponse } from '../../src/api/schemas.js';
import { validator } from '../../src/api/validate.js';

/** Asserts that `value` satisfies `schema` (the schemas the OpenAPI document is generated from), naming the first problem. */
export function assertSchema(t: Test, schema: TSchema, value: unknown, what: string): void {
  const check = validator(schema).check;
  const problem = check.Errors(value).First();
  t.notOk(problem, problem ? `${what}: ${problem.path} ${problem.message}` : `${what} matches its schema`);
}

/** Asserts that `response` is the error object of spec/api.md §1 with this status and code (and message, if given); returns its body. `what` names the case. */
export async function expectError(
  t: Test,
  response: Response,
  status: number,
  errorCode: string,
  message?: RegExp,
  what?: string,
): Promise<{ message: string }> {
  t.equal(response.status, status, what ? `${what}: status ${status}` : `status ${status}`);
  t.match(response.headers.get('content-type'), /application\/json/);
  const body = await response.json();
  assertSchema(t, ErrorResponse, body, 'error body');
  t.equal(body.statusCode, status);
  t.equal(body.errorCode, errorCode, errorCode);
  if (message) t.match(body.message, message);
  return body;
}
