/**
 * An MCP client's side of OAuth for tests: the SDK's OAuthClientProvider
 * kept in memory, and a loopback redirect URI that catches the code the
 * authorization server sends the browser back with.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Test } from 'tap';

export interface Callback {
  url: string;
  /** The next request's query (code and state, or error). */
  next(): Promise<URLSearchParams>;
}

/** A loopback HTTP server standing for the client's redirect URI; stopped when the test ends. */
export async function startCallback(t: Test): Promise<Callback> {
  const waiting: ((query: URLSearchParams) => void)[] = [];
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' }).end('you may close this window');
    waiting.shift()?.(new URL(request.url!, 'http://127.0.0.1').searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

/** The SDK's client-side OAuth state, in memory; `open` is what "open the browser at this URL" does. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  private verifier = '';

  constructor(
    private readonly redirect: string,
    private readonly open: (url: URL) => Promise<void>,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'trawl test agent',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  async redirectToAuthorization(url: URL) {
    await this.open(url);
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}
