/**
 * The HTTP front end: a uWebSockets.js app serving the route table, with 404
 * for unknown paths, 405 (and Allow) for a known path with the wrong method,
 * 503 once shutdown began, and a count of requests in flight for draining.
 */
import uWS from 'uWebSockets.js';
import { ApiError } from '../api/errors.js';
import { requireQueryParameters } from '../api/validate.js';
import { authorize, type Caller } from './access.js';
import { forwardToPeer, RepositoryElsewhere } from './peer-forward.js';
import { RateLimiter } from './rate-limit.js';
import { serve, type HandlerHooks, type Reply, type Request } from './http.js';
import { asApiError } from './known-errors.js';
import type { Route, ServerContext } from './route.js';
import { checkHostAndOrigin, type OriginPolicy } from './origin.js';
import type { WebApp } from './web-app.js';

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  maxBodyBytes: number;
  /** A streaming client that takes nothing for this long is cut off. */
  streamStallMs: number;
  /** Requests per second per caller (0: unlimited). */
  rateLimitPerSecond: number;
  routes: readonly Route[];
  context: ServerContext;
  /** The browser app, when built. */
  web: WebApp | null;
}

export class HttpServer {
  private inFlight = 0;
  private idle: (() => void)[] = [];

  private constructor(
    private readonly listenSocket: uWS.us_listen_socket,
    readonly port: number,
  ) {}

  /** Starts listening; rejects when the address cannot be bound. */
  static listen(options: HttpServerOptions): Promise<HttpServer> {
    const app = uWS.App();
    let server: HttpServer | undefined;
    const track = { started: () => server && server.inFlight++, finished: () => server?.requestFinished() };
    const origins: OriginPolicy = {
      port: () => server?.port ?? options.port,
      publicUrl: () => options.context.config.publicUrl,
      allowedHosts: () => options.context.config.server.allowedHosts,
    };
    register(app, options, track, origins);
    return new Promise((resolve, reject) => {
      app.listen(options.host, options.port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${options.host}:${options.port} (address in use or not available)`));
          return;
        }
        server = new HttpServer(socket, uWS.us_socket_local_port(socket));
        resolve(server);
      });
    });
  }

  /** Stops accepting connections; requests in flight continue. */
  stopAccepting(): void {
    uWS.us_listen_socket_close(this.listenSocket);
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private requestFinished(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const notify of this.idle.splice(0)) notify();
  }
}

function register(app: uWS.TemplatedApp, options: HttpServerOptions, track: { started(): void; finished(): void }, origins: OriginPolicy): void {
  const { context } = options;
  const limiter = options.rateLimitPerSecond > 0 ? new RateLimiter(options.rateLimitPerSecond) : null;
  const hooksFor = (label: string): HandlerHooks => ({
    maxBodyBytes: options.maxBodyBytes,
    streamStallMs: options.streamStallMs,
    finished(request, status, aborted) {
      track.finished();
      context.metrics.requests.inc({ route: label, status: aborted ? 'aborted' : String(status) });
      context.logger.debug({ requestId: request.requestId, method: request.method, route: label, status, aborted }, 'request');
    },
    unexpected(request, error) {
      context.logger.error({ requestId: request.requestId, route: label, err: error }, 'unexpected error');
    },
  });
  const handle = (res: uWS.HttpResponse, req: uWS.HttpRequest, label: string, run: (request: Request) => Promise<Reply>) => {
    track.started();
    const stopTimer = context.metrics.requestSeconds.startTimer({ route: label });
    serve(res, req, hooksFor(label), async (request) => {
      try {
        checkHostAndOrigin(request.headers, origins);
        return await run(request);
      } catch (error) {
        throw asApiError(error);
      } finally {
        stopTimer();
      }
    });
  };

  const byPath = new Map<string, Route[]>();
  for (const route of options.routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  for (const [path, routes] of byPath) {
    const allow = routes.map((route) => route.method.toUpperCase()).join(', ');
    app.any(path.replace(/\{(\w+)\}/g, ':$1'), (res, req) => {
      const route = routes.find((candidate) => candidate.method === req.getMethod());
      handle(res, req, path, async (request) => {
        if (!route) throw new ApiError('METHOD_NOT_ALLOWED', `${request.method.toUpperCase()} is not allowed on ${path}; use ${allow}`, { Allow: allow });
        if (context.status() === 'stopping' && route.operationId !== 'health') {
          throw new ApiError('SERVICE_UNAVAILABLE', 'the server is shutting down', { 'Retry-After': '5' });
        }
        // A request missing a required parameter is malformed whoever sends it: answered before authentication (spec/api.md §6).
        if (route.query) requireQueryParameters(route.query, request.query);
        let caller: Caller | null = null;
        try {
          const authorized = authorize(context, route, request);
          caller = authorized instanceof Promise ? await authorized : authorized;
        } finally {
          // A failed authentication counts too (against the address): guessing keys is limited like anything else.
          // A read another node forwards was counted against its caller there, not again here against that node.
          if (route.access !== 'public' && !caller?.onBehalfOf) limiter?.take(caller, request);
        }
        try {
          return await route.handle(request, caller, context);
        } catch (error) {
          if (error instanceof RepositoryElsewhere) return forwardToPeer(context, request, caller, error);
          throw error;
        }
      });
    });
  }
  const { web } = options;
  if (web) {
    const page = async () => web.page;
    for (const pattern of ['/', '/search', '/browse/*', '/sign-in', '/settings', '/settings/*', '/oauth/authorize'])
      app.get(pattern, (res, req) => handle(res, req, 'web', page));
    app.get('/assets/*', (res, req) =>
      handle(res, req, 'web', async (request) => {
        const asset = web.assets.get(request.path.slice('/assets/'.length));
        if (!asset) throw new ApiError('NOT_FOUND', `Not found: ${request.path}`);
        return asset;
      }),
    );
  }
  app.any('/*', (res, req) => {
    handle(res, req, 'unknown', async (request) => {
      // A browser asking for a page the app does not have gets the app, which says so in words.
      if (web && request.method === 'get' && !request.path.startsWith('/api/') && /\btext\/html\b/.test(request.headers.accept ?? ''))
        return { ...web.page, status: 404 };
      const what = request.path.startsWith('/api/') ? 'This API endpoint does not exist' : 'Not found';
      throw new ApiError('NOT_FOUND', `${what}: ${request.path}`);
    });
  });
}
