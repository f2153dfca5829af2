/**
 * Single sign-on through an OpenID Connect provider (docs/sessions.md): which
 * ways of signing in there are, the start (a redirect to the provider, its
 * state bound to the browser by a cookie) and the callback (the code
 * exchanged, the member found or made, a session handed over, back to where
 * the person was going). Failures send the browser to the sign-in page with
 * a reason code, never a provider's text.
 */
import { Type } from '../../api/typebox.js';
import { ApiError } from '../../api/errors.js';
import { parseQuery, validator } from '../../api/validate.js';
import { memberFor, OidcError, PENDING_SECONDS, type OidcSignIn } from '../../auth/oidc.js';
import { anonymousCaller, audit, type Caller } from '../access.js';
import type { Request, TextReply } from '../http.js';
import type { Route, ServerContext } from '../route.js';
import { cookieValue, secureCookies, setCookie, SIGN_IN_STATE_COOKIE } from '../session-cookie.js';
import { handOver, sessionClient } from './sessions.js';

const TAG = 'Sessions';
const START_PATH = '/api/auth/oidc/start';
const CALLBACK_PATH = '/api/auth/oidc/callback';
const StartQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2048, description: 'A local path to return to (anything else: /)' })) });
const startQuery = validator(StartQuery);

/** A local path of this server, else '/': never another site (an open redirect). */
export function localPath(next: string | undefined): string {
  if (next === undefined || !next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(next)) return '/';
  return next;
}

function redirect(location: string, headers: Record<string, string> = {}): TextReply {
  return { status: 302, text: '', contentType: 'text/plain; charset=utf-8', headers: { Location: location, 'Cache-Control': 'no-store', ...headers } };
}

function configured(context: ServerContext): OidcSignIn {
  const signIn = context.oidc();
  if (!signIn) throw new ApiError('NOT_FOUND', 'single sign-on is not configured (auth.oidc)');
  return signIn;
}

export const providersRoute: Route = {
  method: 'get',
  path: '/api/auth/providers',
  operationId: 'signInProviders',
  tag: TAG,
  summary: 'The ways to sign in: a password (when some member has one), and single sign-on when configured',
  access: 'public',
  response: {
    status: 200,
    schema: Type.Object({ password: Type.Boolean(), oidc: Type.Union([Type.Object({ name: Type.String(), start: Type.String() }), Type.Null()]) }),
    description: 'The ways',
  },
  errors: [],
  async handle(_request: Request, _caller: Caller, context: ServerContext) {
    const signIn = context.oidc();
    return { status: 200, body: { password: context.auth.state.passwords.size > 0, oidc: signIn && { name: signIn.config.name, start: START_PATH } } };
  },
};

export const oidcStartRoute: Route = {
  method: 'get',
  path: START_PATH,
  operationId: 'startSingleSignOn',
  tag: TAG,
  summary: 'Start a single sign-on: redirects to the identity provider (authorization code, PKCE S256, state, nonce)',
  access: 'public',
  query: StartQuery,
  response: { status: 302, description: 'To the identity provider', headers: ['Location', 'Set-Cookie'] },
  errors: ['INVALID_QUERY_PARAMS', 'NOT_FOUND'],
  async handle(request: Request, _caller: Caller, context: ServerContext) {
    const signIn = configured(context);
    const { next } = parseQuery(startQuery, request.query);
    try {
      // Nothing is kept here: the sign-in's state is sealed into the cookie, so no number of starts can refuse anyone.
      const { url, cookie } = await signIn.begin(localPath(next));
      return redirect(url, { 'Set-Cookie': setCookie(SIGN_IN_STATE_COOKIE, cookie, PENDING_SECONDS, secureCookies(context.config.publicUrl)) });
    } catch (error) {
      if (!(error instanceof OidcError)) throw error;
      context.logger.warn({ reason: error.reason, err: error }, 'single sign-on could not start');
      return redirect(`/sign-in?error=${error.reason}`);
    }
  },
};

export const oidcCallbackRoute: Route = {
  method: 'get',
  path: CALLBACK_PATH,
  operationId: 'finishSingleSignOn',
  tag: TAG,
  summary:
    "The identity provider's redirect back (`code`, `state`, or `error`): signs the browser in and redirects where it was going, or to /sign-in?error=<reason>",
  access: 'public',
  response: { status: 302, description: 'Signed in, or to the sign-in page with the reason', headers: ['Location', 'Set-Cookie'] },
  errors: ['NOT_FOUND'],
  async handle(request: Request, _caller: Caller, context: ServerContext) {
    // Not rate limited: without the state of a sign-in this browser started, nothing reaches the provider.
    const signIn = configured(context);
    const secure = secureCookies(context.config.publicUrl);
    // The URL the provider redirected to, as registered: its query is what the provider sent.
    const callbackUrl = new URL(`${context.config.publicUrl}${CALLBACK_PATH}?${request.query}`);
    try {
      const { claims, next } = await signIn.finish(callbackUrl, cookieValue(request.headers, SIGN_IN_STATE_COOKIE, secure));
      const user = await memberFor(context.auth, signIn.config, claims);
      const started = await context.auth.startSession(user.id, sessionClient(request));
      return redirect(next, { 'Set-Cookie': await handOver(context, request, started, 'oidc') });
    } catch (error) {
      if (!(error instanceof OidcError)) throw error;
      audit(
        context,
        anonymousCaller,
        'auth.failed',
        { id: null, type: null },
        { path: request.path, method: 'oidc', reason: error.reason, detail: error.message, remoteAddress: request.remoteAddress, requestId: request.requestId },
      );
      // A failed sign-in's state is of no further use: the browser starts again.
      return redirect(`/sign-in?error=${error.reason}`, { 'Set-Cookie': setCookie(SIGN_IN_STATE_COOKIE, '', 0, secure) });
    }
  },
};
