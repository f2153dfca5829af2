import t from 'tap';
import { ApiError, ERROR_CODES } from '../../src/api/errors.js';
import { AuthError, type AuthErrorCode } from '../../src/auth/errors.js';
import { LicenseError } from '../../src/auth/license.js';
import { AUTH_ERRORS, asApiError } from '../../src/server/known-errors.js';
import { BlameError } from '../../src/git/blame.js';
import { GitReadStoppedError, InvalidRefError, PathNotFoundError } from '../../src/git/errors.js';
import { GitProcessesBusyError } from '../../src/git/process-slots.js';
import { QueryParseError } from '../../src/query/errors.js';
import { SearchQueueFullError } from '../../src/search/pool.js';
import { SearchPoolClosingError } from '../../src/search/workers.js';
import { UnknownSearchContextError } from '../../src/query/plan.js';

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
    ...(Object.keys(AUTH_ERRORS) as AuthErrorCode[]).map((code) => new AuthError(code, code)),
  ];
  for (const error of domainErrors) {
    const mapped = asApiError(error);
    t.ok(mapped instanceof ApiError, `${error.name}${'code' in error ? ` ${String(error.code)}` : ''} is mapped`);
    t.ok((mapped as ApiError).errorCode in ERROR_CODES);
  }
  const plain = new Error('unforeseen');
  t.equal(asApiError(plain), plain, 'anything else stays unexpected');
});
