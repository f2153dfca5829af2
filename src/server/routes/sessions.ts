/**
 * Signing in to the web app (docs/sessions.md): email and password give a
 * session cookie; the session's state and CSRF token, the caller's sessions
 * (list, end one, end the others), signing out, changing one's password.
 */
import { SessionList, SessionState, SetPasswordRequest, SignInRequest, Success } from '../../api/auth-schemas.js';
import { ApiError } from '../../api/errors.js';
import { parseBody, validator } from '../../api/validate.js';
import type { Session, User } from '../../auth/model.js';
import type { SessionClient, StartedSession } from '../../auth/store.js';
import { iso } from '../../auth/views.js';
import { anonymousCaller, audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import { RateLimiter } from '../rate-limit.js';
import type { Route, ServerContext } from '../route.js';
import { addressKey } from '../client-address.js';
import { deleteByIdRoute } from './delete-by-id.js';
import { secureCookies, SESSION_COOKIE, sessionSecretOf, setCookie } from '../session-cookie.js';

const TAG = 'Sessions';
const SESSIONS_PATH = '/api/auth/sessions';
const CREDENTIAL_ERRORS = ['NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS', 'INVALID_CSRF_TOKEN'] as const;
const signInBody = validator(SignInRequest);
const passwordBody = validator(SetPasswordRequest);

/** Password sign-in attempts per address, right or wrong: ten in a burst, then one every six seconds. */
const signInAttempts = new RateLimiter(1 / 6, 10, 'sign-in attempts per second from this address');
/**
 * Failed password checks (docs/sessions.md, "Bounds"): per email and address pair, and per email from every
 * address. Only failures spend them, and an email's budget stops only the addresses already failing for that
 * email, so strangers guessing can never keep its owner out.
 */
const passwordFailures = new RateLimiter(1 / 6, 10, 'failed sign-ins per second for this email');

/** Refuses a password check for `email` from `address` while that address has failed too often for it (429); the check's outcome is then told. */
function passwordCheckFor(email: string, address: string): { failed(): void; succeeded(): void } {
  const emailKey = `email:${email.toLowerCase()}`;
  const pairKey = `${emailKey} ${address}`;
  passwordFailures.checkFor(pairKey);
  if (passwordFailures.hasSpent(pairKey)) passwordFailures.checkFor(emailKey);
  return {
    failed() {
      passwordFailures.spend(pairKey);
      passwordFailures.spend(emailKey);
    },
    succeeded: () => passwordFailures.forget(pairKey),
  };
}

/** Password checks running at once (each holds 32 MiB for tens of milliseconds); more are answered 503. */
const MAX_CHECKS_IN_FLIGHT = 8;
let checksInFlight = 0;

/** Runs a password check within the bound on checks in flight. */
async function boundedCheck<T>(check: () => Promise<T>): Promise<T> {
  if (checksInFlight >= MAX_CHECKS_IN_FLIGHT)
    throw new ApiError('SERVICE_UNAVAILABLE', 'too many sign-ins at once; try again in a second', { 'Retry-After': '1' });
  checksInFlight++;
  try {
    return await check();
  } finally {
    checksInFlight--;
  }
}

function sessionState(context: ServerContext, user: User, session: Session, csrfToken: string) {
  return {
    user: { id: user.id, name: user.name, email: user.email, role: user.role },
    sessionId: session.id,
    csrfToken,
    expiresAt: iso(session.createdAt + context.auth.state.sessionLimits.maxAgeMs),
  };
}

/** The caller's session, or INSUFFICIENT_PERMISSIONS when it called with a key instead. */
function sessionOf(caller: Caller): Session {
  if (caller.credential?.kind !== 'session')
    throw new ApiError('INSUFFICIENT_PERMISSIONS', 'this endpoint is about a signed-in session: call it with the session cookie, not a key');
  return caller.credential.session;
}

/** Where a browser signs in from (shown in its sessions list). */
export function sessionClient(request: Request): SessionClient {
  return { userAgent: request.headers['user-agent'] ?? '', address: request.remoteAddress };
}

/**
 * Hands a just-started session to the browser: ends the session the request
 * already had (a cookie planted before sign-in, session fixation, is never
 * adopted), audits the sign-in, and returns the Set-Cookie value.
 */
export async function handOver(context: ServerContext, request: Request, started: StartedSession, method: 'password' | 'oidc'): Promise<string> {
  const secure = secureCookies(context.config.publicUrl);
  const earlier = sessionSecretOf(request.headers, secure);
  const previous = earlier === undefined ? null : context.auth.authenticateSession(earlier);
  if (previous?.kind === 'session') await context.auth.endSession(previous.user.id, previous.session.id);
  const { user, session, secret } = started;
  context.audit.record({
    action: 'auth.signed_in',
    actorId: user.id,
    actorType: 'user',
    targetId: session.id,
    targetType: 'session',
    metadata: { method, remoteAddress: request.remoteAddress },
  });
  return setCookie(SESSION_COOKIE, secret, context.auth.state.sessionLimits.maxAgeMs / 1000, secure);
}

function currentSessionId(caller: Caller): string | null {
  return caller.credential?.kind === 'session' ? caller.credential.session.id : null;
}

export const signInRoute: Route = {
  method: 'post',
  path: '/api/auth/sign_in',
  operationId: 'signIn',
  tag: TAG,
  summary: 'Sign in with an email and password: sets the session cookie (a session the request already had ends) and answers its CSRF token',
  access: 'public',
  body: SignInRequest,
  response: { status: 200, schema: SessionState, description: 'Signed in', headers: ['Set-Cookie'] },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  async handle(request: Request, _caller: Caller, context: ServerContext) {
    const { email, password } = parseBody(signInBody, request.body);
    const address = addressKey(request.remoteAddress);
    signInAttempts.takeFor(address);
    const outcome = passwordCheckFor(email, address);
    const client = sessionClient(request);
    const started = await boundedCheck(() => context.auth.signIn(email, password, client));
    if (started) outcome.succeeded();
    else {
      outcome.failed();
      audit(
        context,
        anonymousCaller,
        'auth.failed',
        { id: null, type: null },
        { path: request.path, email, remoteAddress: request.remoteAddress, requestId: request.requestId },
      );
      throw new ApiError('NOT_AUTHENTICATED', 'the email or the password is wrong');
    }
    return {
      status: 200,
      body: sessionState(context, started.user, started.session, started.csrfToken),
      headers: { 'Set-Cookie': await handOver(context, request, started, 'password'), 'Cache-Control': 'no-store' },
    };
  },
};

export const signOutRoute: Route = {
  method: 'post',
  path: '/api/auth/sign_out',
  operationId: 'signOut',
  tag: TAG,
  summary: 'End the session this cookie is (its open streams end too) and clear the cookie',
  access: 'user',
  response: { status: 200, schema: Success, description: 'Signed out', headers: ['Set-Cookie'] },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const session = sessionOf(caller);
    await context.auth.endSession(caller.user!.id, session.id);
    audit(context, caller, 'auth.signed_out', { id: session.id, type: 'session' });
    return {
      status: 200,
      body: { success: true, message: 'signed out' },
      headers: { 'Set-Cookie': setCookie(SESSION_COOKIE, '', 0, secureCookies(context.config.publicUrl)) },
    };
  },
};

export const getSessionRoute: Route = {
  method: 'get',
  path: '/api/auth/session',
  operationId: 'getSession',
  tag: TAG,
  summary: 'Who is signed in with this cookie, and the CSRF token its writes carry',
  access: 'user',
  response: { status: 200, schema: SessionState, description: 'The session' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const session = sessionOf(caller);
    const secret = sessionSecretOf(request.headers, secureCookies(context.config.publicUrl))!;
    return { status: 200, body: sessionState(context, caller.user!, session, context.auth.csrfToken(secret)), headers: { 'Cache-Control': 'no-store' } };
  },
};

export const listSessionsRoute: Route = {
  method: 'get',
  path: SESSIONS_PATH,
  operationId: 'listSessions',
  tag: TAG,
  summary: 'Your live sessions, most recently used first',
  access: 'user',
  response: { status: 200, schema: SessionList, description: 'Your sessions' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const current = currentSessionId(caller);
    const sessions = context.auth.sessionsOf(caller.user!.id).map((session) => ({
      id: session.id,
      createdAt: iso(session.createdAt),
      lastSeenAt: iso(session.lastSeenAt),
      userAgent: session.userAgent,
      address: session.address,
      current: session.id === current,
    }));
    return { status: 200, body: sessions };
  },
};

export const endSessionRoute = deleteByIdRoute({
  base: SESSIONS_PATH,
  operationId: 'endSession',
  tag: TAG,
  summary: 'End one of your sessions: its very next request fails and its open streams end',
  access: 'user',
  errors: ['NOT_FOUND', ...CREDENTIAL_ERRORS],
  remove: (caller, context, id) => context.auth.endSession(caller.user!.id, id),
  notFound: (shown) => new ApiError('NOT_FOUND', `you have no session ${shown}`),
  audited: { action: 'auth.signed_out', targetType: 'session' },
});

export const endOtherSessionsRoute: Route = {
  method: 'delete',
  path: SESSIONS_PATH,
  operationId: 'endOtherSessions',
  tag: TAG,
  summary: 'End every session of yours but the one calling (with a key: every session)',
  access: 'user',
  response: { status: 200, schema: Success, description: 'Ended' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const others = await context.auth.endOtherSessions(caller.user!.id, currentSessionId(caller));
    for (const session of others) audit(context, caller, 'auth.signed_out', { id: session.id, type: 'session' });
    return { status: 200, body: { success: true, message: `${others.length} other session${others.length === 1 ? '' : 's'} ended` } };
  },
};

export const setPasswordRoute: Route = {
  method: 'post',
  path: '/api/auth/password',
  operationId: 'setPassword',
  tag: TAG,
  summary: 'Set your password (with `currentPassword` when you have one); your other sessions end',
  access: 'user',
  body: SetPasswordRequest,
  response: { status: 200, schema: Success, description: 'Changed' },
  errors: ['INVALID_REQUEST_BODY', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { password, currentPassword } = parseBody(passwordBody, request.body);
    const user = caller.user!;
    if (context.auth.state.passwords.has(user.id)) {
      // A session's wrong guesses count as the owner's address failing for that email: they never slow anyone else.
      const outcome = passwordCheckFor(user.email, addressKey(request.remoteAddress));
      const matches = await boundedCheck(() => context.auth.checkPassword(user.id, currentPassword ?? ''));
      if (!matches) {
        outcome.failed();
        throw new ApiError('INVALID_REQUEST_BODY', 'request body field `currentPassword`: it is not your current password');
      }
    }
    await boundedCheck(() => context.auth.setPassword(user.id, password));
    await context.auth.endOtherSessions(user.id, currentSessionId(caller));
    audit(context, caller, 'user.password', { id: user.id, type: 'user' });
    return { status: 200, body: { success: true, message: 'password changed; your other sessions ended' } };
  },
};
