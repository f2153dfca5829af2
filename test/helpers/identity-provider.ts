/**
 * A real OpenID Connect provider for tests (`oidc-provider`, its development
 * login and consent pages: any login names an account, any password passes),
 * on a free loopback port; and a cookie-keeping client that walks its pages
 * as a browser would, for the tests that do not need one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { teamDaemon } from './auth.js';

export interface IdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Lets the provider send the browser back to `redirectUri` (known once the daemon listens). */
  register(redirectUri: string): void;
  /** When set, rewrites the ID token of every token response (an attacker between provider and client, or a broken provider). */
  tamperIdToken: ((idToken: string) => string) | null;
}

/** Starts a provider whose accounts (by login) carry these claims; stopped when the test ends. */
export async function startIdentityProvider(t: Test, accounts: Record<string, Record<string, unknown>>): Promise<IdentityProvider> {
  let provider: Provider | null = null;
  const server = http.createServer((request, response) => {
    if (!provider) {
      response.writeHead(503).end();
      return;
    }
    const tamper = identityProvider.tamperIdToken;
    if (tamper && request.url?.startsWith('/token')) {
      const end = response.end.bind(response) as (chunk?: unknown) => http.ServerResponse;
      response.end = ((chunk?: unknown) => {
        const body = chunk === undefined ? null : (JSON.parse(String(chunk)) as { id_token?: string });
        if (!body?.id_token) return end(chunk);
        const text = JSON.stringify({ ...body, id_token: tamper(body.id_token) });
        response.setHeader('Content-Length', Buffer.byteLength(text));
        return end(text);
      }) as typeof response.end;
    }
    provider.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'trawl-test';
  const clientSecret = 'a client secret of the test provider';
  const identityProvider: IdentityProvider = {
    issuer,
    clientId,
    clientSecret,
    tamperIdToken: null,
    register(redirectUri) {
      provider = new Provider(issuer, {
        clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic' }],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
        async findAccount(_context, id) {
          const claims = accounts[id];
          return claims && { accountId: id, claims: async () => ({ sub: id, ...claims }) };
        },
        pkce: { required: () => true },
        cookies: { keys: ['test cookie signing key'] },
      });
    },
  };
  return identityProvider;
}

/** A client with a cookie jar per origin, following nothing on its own. */
export class CookieClient {
  private readonly jars = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Response> {
    return this.send(url, { method: 'GET' });
  }

  /** Submits the (first) form of an HTML page with its hidden fields and `fields`. */
  async submitForm(pageUrl: string, html: string, fields: Record<string, string> = {}): Promise<Response> {
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form on ${pageUrl}:\n${html.slice(0, 500)}`);
    const hidden = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((found) => [found[1]!, found[2]!]));
    return this.send(new URL(action, pageUrl).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...hidden, ...fields }).toString(),
    });
  }

  /** Follows redirects from `response` (at `url`) through `until` (a URL prefix it stops at, unfollowed). */
  async follow(response: Response, until: string): Promise<Response> {
    let current = response;
    for (let hops = 0; hops < 20; hops++) {
      const location = current.headers.get('location');
      if (current.status < 300 || current.status >= 400 || !location) return current;
      const next = new URL(location, current.url || until).href;
      if (next.startsWith(until)) return current;
      current = await this.get(next);
    }
    throw new Error('too many redirects');
  }

  cookieHeader(origin: string): string {
    return [...(this.jars.get(origin) ?? new Map()).entries()].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  setCookie(origin: string, name: string, value: string): void {
    (this.jars.get(origin) ?? this.jars.set(origin, new Map()).get(origin)!).set(name, value);
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    const { origin } = new URL(url);
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), Cookie: this.cookieHeader(origin) },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      const name = pair!.slice(0, equals);
      const value = pair!.slice(equals + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.jars.get(origin)?.delete(name);
      else this.setCookie(origin, name, value);
    }
    Object.defineProperty(response, 'url', { value: url });
    return response;
  }
}

/**
 * The daemon with single sign-on through a provider of `accounts` (`auth.oidc` plus `oidc`), an
 * owner and a member (dev@example.com) with API keys, under a test license.
 */
export async function singleSignOnDaemon(t: Test, accounts: Record<string, Record<string, unknown>>, oidc: Record<string, unknown> = {}) {
  const provider = await startIdentityProvider(t, accounts);
  const team = await teamDaemon(t, {
    configure(configFile) {
      fs.writeFileSync(path.join(path.dirname(configFile), 'oidc-secret'), `${provider.clientSecret}\n`, { mode: 0o600 });
      const config = JSON.parse(fs.readFileSync(configFile, 'utf8'));
      config.auth = { oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecretFile: 'oidc-secret', name: 'Test IdP', ...oidc } };
      fs.writeFileSync(configFile, JSON.stringify(config));
    },
  });
  provider.register(`${team.daemon.url}/api/auth/oidc/callback`);
  return { ...team, provider };
}
