import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError, ERROR_CODES } from '../../src/api/errors.js';
import { AuthError, type AuthErrorCode } from '../../src/auth/errors.js';
import { LicenseError } from '../../src/auth/license.js';
import { AUTH_ERRORS, asApiError, HANDLED_ELSEWHERE } from '../../src/server/known-errors.js';
import { BlameError } from '../../src/git/blame.js';
import { GitReadStoppedError, InvalidRefError, PathNotFoundError } from '../../src/git/errors.js';
import { GitProcessesBusyError } from '../../src/git/process-slots.js';
import { QueryParseError } from '../../src/query/errors.js';
import { SearchQueueFullError } from '../../src/search/search-errors.js';
import { SearchPoolClosingError } from '../../src/search/workers.js';
import { UnknownSearchContextError } from '../../src/query/plan.js';
import { GitObjectMissingError } from '../../src/git/errors.js';
import { StateLogWriteError } from '../../src/auth/state-log.js';
import { ClusterStateCorruptError, ClusterStateUnavailableError } from '../../src/auth/cluster-errors.js';

/** Every `class X extends …Error` under src/, found in the source rather than listed by hand. */
function errorClassesOfSource(): string[] {
  const root = fileURLToPath(new URL('../../src', import.meta.url));
  const files = fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  return files.flatMap((file) => [...fs.readFileSync(path.join(root, file), 'utf8').matchAll(/\bclass (\w+) extends \w*Error\b/g)].map((found) => found[1]!));
}

// Every error a lower layer throws at a request is one API error, from the one table (server/known-errors.ts).
t.test('each domain error a request can meet maps to an API error code of the registry', async (t) => {
  const domainErrors: Error[] = [
    new QueryParseError('bad', 'q', 0),
    new UnknownSearchContextError('nope'),
    new SearchQueueFullError(1),
    new SearchPoolClosingError(),
    new InvalidRefError('x', 'bad'),
    new GitReadStoppedError('the diff', 'size', 1, 'narrow it'),
    new GitReadStoppedError('the walk', 'time', 1, 'narrow it'),
    new BlameError('failed'),
    new GitProcessesBusyError(1),
    new PathNotFoundError('a', 'is absent'),
    new LicenseError('the signature does not verify'),
    new GitObjectMissingError('0123abcd'),
    new StateLogWriteError(Object.assign(new Error('no space'), { code: 'ENOSPC' })),
    new ClusterStateUnavailableError('etcd did not answer'),
    new ClusterStateCorruptError('trawl/state/records/x', 'a checksum mismatch at byte 0'),
    ...(Object.keys(AUTH_ERRORS) as AuthErrorCode[]).map((code) => new AuthError(code, code)),
  ];
  for (const error of domainErrors) {
    const mapped = asApiError(error);
    t.ok(mapped instanceof ApiError, `${error.name}${'code' in error ? ` ${String(error.code)}` : ''} is mapped`);
    t.ok((mapped as ApiError).errorCode in ERROR_CODES);
  }
  const mapped = new Set(domainErrors.map((error) => error.constructor.name));
  const unaccounted = errorClassesOfSource().filter((name) => !mapped.has(name) && !(name in HANDLED_ELSEWHERE));
  t.same(unaccounted, [], 'every error class of src/ is mapped here or said to be handled elsewhere (server/known-errors.ts)');
  const stale = Object.keys(HANDLED_ELSEWHERE).filter((name) => !errorClassesOfSource().includes(name));
  t.same(stale, [], 'HANDLED_ELSEWHERE names only classes that exist');
  const plain = new Error('unforeseen');
  t.equal(asApiError(plain), plain, 'anything else stays unexpected');
});
