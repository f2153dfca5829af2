/** A route of the HTTP API: what the router dispatches and what the OpenAPI document describes. */
import type { Operation } from '../api/openapi.js';
import type { AuditTrail } from '../auth/audit.js';
import type { OAuthServer } from '../auth/oauth.js';
import type { OidcSignIn } from '../auth/oidc.js';
import type { AuthStore } from '../auth/store.js';
import type { ClusterSearch } from '../cluster/fan-out.js';
import type { ClusterNode } from '../cluster/node.js';
import type { Config } from '../config/config.js';
import type { ConnectionSyncer } from '../connections/syncer.js';
import type { ProcessSlots } from '../git/process-slots.js';
import type { IndexState } from '../index/manifest.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { Catalog } from '../search/catalog.js';
import type { SearchPool } from '../search/pool.js';
import type { Caller } from './access.js';
import type { Reply, Request } from './http.js';
import type { Backlogs } from './stream-backlog.js';

/** What routes use of the running daemon. */
export interface ServerContext {
  config: Config;
  pool: SearchPool;
  /** The repositories and shards published last (manifest ids, index states). */
  catalog(): Catalog;
  metrics: Metrics;
  logger: Logger;
  version: string;
  /** 'starting' until the first index pass is published, 'stopping' once shutdown began. */
  status(): 'starting' | 'ok' | 'stopping';
  /** The indexer's view of each configured repository. */
  indexState(name: string): IndexState;
  /** Users, credentials, grants, settings, the license (the state log). */
  auth: AuthStore;
  audit: AuditTrail;
  /** Git child processes (blame): at most one per core at once, callers served in turn. */
  gitProcesses: ProcessSlots;
  /** What streamed searches hold for their clients (stream-backlog.ts). */
  streamBacklogs: Backlogs;
  /** OAuth 2.1 for MCP clients (EE). */
  oauth: OAuthServer;
  /** Single sign-on through the configured OpenID Connect provider; null when `auth.oidc` is not set. */
  oidc(): OidcSignIn | null;
  /** The code host connections: their sync state, and syncs on demand. */
  connections: ConnectionSyncer;
  /** This node of a cluster, its searches across it, and the ids it gave every configured repository; null for a single node. */
  cluster: { node: ClusterNode; search: ClusterSearch; repositoryIds: ReadonlyMap<string, number> } | null;
}

export interface Route extends Operation {
  handle(request: Request, caller: Caller, context: ServerContext): Promise<Reply>;
}
