import type { TSchema } from '@sinclair/typebox';
import type { Test } from 'tap';
import { validator } from '../../src/api/validate.js';

/** Asserts that `value` satisfies `schema` (the schemas the OpenAPI document is generated from), naming the first problem. */
export function assertSchema(t: Test, schema: TSchema, value: unknown, what: string): void {
  const check = validator(schema).check;
  const problem = check.Errors(value).First();
  t.notOk(problem, problem ? `${what}: ${problem.path} ${problem.message}` : `${what} matches its schema`);
}
