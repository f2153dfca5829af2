/**
 * The trawl configuration: its shape, defaults and validation. Every problem
 * is reported with the option's path (e.g. `repos[2].codeHostType`) and what
 * was expected; unknown options are errors, so typos do not pass silently.
 */
import type { CodeHostType } from '../index/model.js';
import { readConnections, readSync, type ConnectionConfig, type SyncConfig } from './connections.js';
import { globToRegExp } from './glob.js';
import { secureOrLoopback } from './loopback.js';
import { keysOf, OPTIONS, type OptionPath, type OptionSpec } from './options.js';

export interface RepositoryConfig {
  /** Unique name, by convention host/owner/name. */
  name: string;
  /** A git repository (bare or with a working tree) or a plain directory. Relative to the config file. */
  path: string;
  /** Branch names or globs (`*` within a segment, `**` across). The default branch is always indexed, as HEAD. */
  branches: string[];
  codeHostType: CodeHostType;
  webUrl?: string;
  displayName?: string;
  public: boolean;
  archived: boolean;
  fork: boolean;
  /** Tag names or globs indexed as branches of their name (repositories of a connection). */
  tags?: string[];
  /** The connection that fetches this repository into its mirror (`path`); absent for a configured repository. */
  connection?: string;
  /** The name the host gave this repository before (same stable id): its trawl id moves to the new name. */
  renamedFrom?: string;
}

export interface SearchContextConfig {
  include: string[];
  exclude: string[];
  /** Set when no configured repository is in the context: a search with it says so instead of finding nothing. */
  empty?: true;
}

export interface IndexConfig {
  /** Files larger than this are not stored (still findable by path). */
  maxFileBytes: number;
  /** A repository's shard is split once its stored content passes this size. */
  maxShardContentBytes: number;
  /** The universal-ctags executable, or "" to index without symbols. */
  ctagsCommand: string;
  /** ctags processes run in parallel. */
  ctagsProcesses: number;
  /** Directories of one plain-directory repository watched at most. */
  maxWatchedDirectories: number;
}

export interface ServerConfig {
  /** Search worker threads (default: the number of cores). */
  workers: number;
  /** A search returns what it found after this long. */
  searchTimeBudgetMs: number;
  /** Larger request bodies are refused. */
  maxBodyBytes: number;
  /** Searches in flight at most; more are answered 503. */
  maxQueuedSearches: number;
  /** A full index pass this often, catching changes the watchers missed (0: never). */
  rescanIntervalSeconds: number;
  /** Requests per second per caller; 0: no limit. */
  rateLimitPerSecond: number;
  /** On SIGTERM, requests in flight get this long to finish. */
  shutdownDrainSeconds: number;
  /** A streaming client that takes nothing for this long is cut off. */
  streamStallSeconds: number;
  /** MCP sessions open at most, in all and per user (anonymous callers: per address), and how long an unused one lives. */
  mcpSessions: number;
  mcpSessionsPerCaller: number;
  mcpSessionIdleSeconds: number;
  /** Lower-case `Host` values besides publicUrl's and loopback's that requests may carry. */
  allowedHosts: string[];
}

export interface Config {
  /** Shards, the manifest and state live here. Relative to the config file. */
  dataDir: string;
  listen: { host: string; port: number };
  server: ServerConfig;
  publicUrl: string;
  repos: RepositoryConfig[];
  contexts: Record<string, SearchContextConfig>;
  auth: {
    anonymousAccess: boolean;
    sessionIdleHours: number;
    sessionMaxAgeDays: number;
    oidc: OidcConfig | null;
    auditRetentionDays: number;
    auditMaxMegabytes: number;
  };
  index: IndexConfig;
  connections: ConnectionConfig[];
  sync: SyncConfig;
  /** null: a single node. */
  cluster: ClusterConfig | null;
}

/** One node of a cluster (options.ts says what each is; docs/cluster.md how they work together). */
export interface ClusterConfig {
  etcd: string[];
  node: string;
  /** Absent: where the daemon listens (its bound port). */
  advertiseUrl?: string;
  keyFile: string;
  partitions: number;
  replicas: number;
  strict: boolean;
  keyPrefix: string;
  snapshotAfterChanges: number;
  placementFloorBytes: number;
}

/** Single sign-on through an OpenID Connect provider (options.ts says what each is). */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecretFile: string;
  name: string;
  scopes: string[];
  allowedEmailDomains: string[];
  createMembers: boolean;
  /** '' when roles are managed in trawl. */
  roleClaim: string;
  ownerValues: string[];
}

export class ConfigError extends Error {
  constructor(
    readonly problems: string[],
    source: string,
  ) {
    super(`invalid configuration in ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Json = unknown;

/** A `Host` header's value: a name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST_VALUE = /^(?:[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/i;

/** Collects problems while reading one JSON value against the expected shape. */
export class Reader {
  readonly problems: string[] = [];

  object(value: Json, at: string, allowed: readonly string[]): Record<string, Json> | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.problems.push(`${at || 'the configuration'}: must be an object`);
      return undefined;
    }
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) this.problems.push(`${join(at, key)}: unknown option (expected one of ${allowed.join(', ')})`);
    }
    return value as Record<string, Json>;
  }

  string(value: Json, at: string, fallback?: string, check?: (s: string) => string | null): string {
    if (value === undefined && fallback !== undefined) return fallback;
    if (typeof value !== 'string' || value === '') return this.fail(at, 'must be a non-empty string', '');
    const problem = check?.(value);
    return problem ? this.fail(at, problem, value) : value;
  }

  optionalString(value: Json, at: string): string | undefined {
    return value === undefined ? undefined : this.string(value, at);
  }

  boolean(value: Json, at: string, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    return typeof value === 'boolean' ? value : this.fail(at, 'must be true or false', fallback);
  }

  integer(value: Json, at: string, fallback: number, min: number, max: number): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.fail(at, `must be an integer from ${min} to ${max}`, fallback);
    }
    return value;
  }

  strings(value: Json, at: string, fallback: string[]): string[] {
    if (value === undefined) return fallback;
    if (!Array.isArray(value)) return this.fail(at, 'must be an array of strings', fallback);
    return value.map((item, i) => this.string(item, `${at}[${i}]`));
  }

  oneOf<T extends string>(value: Json, at: string, allowed: readonly T[], fallback: T): T {
    if (value === undefined) return fallback;
    return allowed.includes(value as T) ? (value as T) : this.fail(at, `must be one of ${allowed.join(', ')}`, fallback);
  }

  /** An object option: its keys checked against the option table. */
  section(value: Json, path: string, at = path): Record<string, Json> {
    return value === undefined ? {} : (this.object(value, at, keysOf(path)) ?? {});
  }

  integerOption(path: OptionPath, value: Json, at: string = path): number {
    const spec = specOf(path, 'integer');
    return this.integer(value, at, typeof spec.default === 'function' ? spec.default() : spec.default, spec.min, spec.max);
  }

  booleanOption(path: OptionPath, value: Json, at: string = path): boolean {
    return this.boolean(value, at, specOf(path, 'boolean').default);
  }

  stringOption(path: OptionPath, value: Json, at: string = path, check?: (s: string) => string | null): string {
    return this.string(value, at, specOf(path, 'string').default, check);
  }

  stringsOption(path: OptionPath, value: Json, at: string = path): string[] {
    return this.strings(value, at, [...specOf(path, 'strings').default]);
  }

  fail<T>(at: string, problem: string, fallback: T): T {
    this.problems.push(`${at}: ${problem}`);
    return fallback;
  }
}

function specOf<K extends OptionSpec['kind']>(path: OptionPath, kind: K): Extract<OptionSpec, { kind: K }> {
  const spec = OPTIONS[path] as OptionSpec;
  if (spec.kind !== kind) throw new Error(`option ${path} is a ${spec.kind}, not a ${kind}`);
  return spec as Extract<OptionSpec, { kind: K }>;
}

function join(at: string, key: string): string {
  return at ? `${at}.${key}` : key;
}

const absoluteHttpUrl = (value: string) => (/^https?:\/\/[^\s/]+/.test(value) && URL.canParse(value) ? null : 'must be an absolute http(s) URL');

/** The http URL of a daemon listening on `host` (an IPv6 address bracketed) and `port`. */
export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Whether the repository `name` is in `context`: one of its include globs matches, none of its exclude globs. */
export function inContext(context: SearchContextConfig, name: string): boolean {
  const matches = (globs: string[]) => globs.some((glob) => globToRegExp(glob).test(name));
  return matches(context.include) && !matches(context.exclude);
}

/** `contexts` with each one that holds none of `repos` marked `empty`. */
export function contextsOver(contexts: Record<string, SearchContextConfig>, repos: readonly RepositoryConfig[]): Record<string, SearchContextConfig> {
  return Object.fromEntries(
    Object.entries(contexts).map(([name, { include, exclude }]) => {
      const context: SearchContextConfig = { include, exclude };
      if (!repos.some((repo) => inContext(context, repo.name))) context.empty = true;
      return [name, context];
    }),
  );
}

/**
 * Validates parsed JSON and fills in defaults. Throws ConfigError listing
 * every problem found, each naming its option. `source` names the file in messages.
 */
export function validateConfig(raw: Json, source: string): Config {
  const r = new Reader();
  const top = r.object(raw, '', keysOf('')) ?? {};
  const listenRaw = r.section(top.listen, 'listen');
  const listen = { host: r.stringOption('listen.host', listenRaw.host), port: r.integerOption('listen.port', listenRaw.port) };
  const publicUrl = r.string(top.publicUrl, 'publicUrl', listenUrl(listen.host, listen.port), absoluteHttpUrl).replace(/\/+$/, '');
  const connections = readConnections(r, top.connections);
  const repos = Array.isArray(top.repos)
    ? top.repos.map((repo, i) => readRepository(r, repo, `repos[${i}]`))
    : top.repos === undefined && connections.length > 0
      ? []
      : r.fail('repos', 'must be an array of repositories (it may be left out when `connections` is given)', []);
  const seen = new Set<string>();
  repos.forEach((repo, i) => {
    if (seen.has(repo.name)) r.fail(`repos[${i}].name`, `duplicate repository name ${JSON.stringify(repo.name)}`, null);
    seen.add(repo.name);
  });
  const contexts: Record<string, SearchContextConfig> = {};
  const contextsRaw = top.contexts === undefined ? {} : (r.object(top.contexts, 'contexts', Object.keys(top.contexts as object)) ?? {});
  for (const [name, value] of Object.entries(contextsRaw)) {
    const at = `contexts.${name}`;
    const context = r.section(value, 'contexts.NAME', at);
    contexts[name] = {
      include: r.stringsOption('contexts.NAME.include', context.include, `${at}.include`),
      exclude: r.stringsOption('contexts.NAME.exclude', context.exclude, `${at}.exclude`),
    };
  }
  const authRaw = r.section(top.auth, 'auth');
  const indexRaw = r.section(top.index, 'index');
  const serverRaw = r.section(top.server, 'server');
  const config: Config = {
    dataDir: r.stringOption('dataDir', top.dataDir),
    listen,
    server: {
      workers: r.integerOption('server.workers', serverRaw.workers),
      searchTimeBudgetMs: r.integerOption('server.searchTimeBudgetMs', serverRaw.searchTimeBudgetMs),
      maxBodyBytes: r.integerOption('server.maxBodyBytes', serverRaw.maxBodyBytes),
      maxQueuedSearches: r.integerOption('server.maxQueuedSearches', serverRaw.maxQueuedSearches),
      rescanIntervalSeconds: r.integerOption('server.rescanIntervalSeconds', serverRaw.rescanIntervalSeconds),
      rateLimitPerSecond: r.integerOption('server.rateLimitPerSecond', serverRaw.rateLimitPerSecond),
      shutdownDrainSeconds: r.integerOption('server.shutdownDrainSeconds', serverRaw.shutdownDrainSeconds),
      streamStallSeconds: r.integerOption('server.streamStallSeconds', serverRaw.streamStallSeconds),
      mcpSessions: r.integerOption('server.mcpSessions', serverRaw.mcpSessions),
      mcpSessionsPerCaller: r.integerOption('server.mcpSessionsPerCaller', serverRaw.mcpSessionsPerCaller),
      mcpSessionIdleSeconds: r.integerOption('server.mcpSessionIdleSeconds', serverRaw.mcpSessionIdleSeconds),
      allowedHosts: r
        .stringsOption('server.allowedHosts', serverRaw.allowedHosts)
        .map((host, i) =>
          HOST_VALUE.test(host)
            ? host.toLowerCase()
            : r.fail(
                `server.allowedHosts[${i}]`,
                `${JSON.stringify(host)} is not a host name or address with an optional port (e.g. code.example.com, 10.0.0.5:6070, [fd00::1])`,
                '',
              ),
        ),
    },
    publicUrl,
    repos,
    contexts: contextsOver(contexts, repos),
    auth: {
      anonymousAccess: r.booleanOption('auth.anonymousAccess', authRaw.anonymousAccess),
      sessionIdleHours: r.integerOption('auth.sessionIdleHours', authRaw.sessionIdleHours),
      sessionMaxAgeDays: r.integerOption('auth.sessionMaxAgeDays', authRaw.sessionMaxAgeDays),
      oidc: authRaw.oidc === undefined ? null : readOidc(r, r.section(authRaw.oidc, 'auth.oidc')),
      auditRetentionDays: r.integerOption('auth.auditRetentionDays', authRaw.auditRetentionDays),
      auditMaxMegabytes: r.integerOption('auth.auditMaxMegabytes', authRaw.auditMaxMegabytes),
    },
    index: {
      maxFileBytes: r.integerOption('index.maxFileBytes', indexRaw.maxFileBytes),
      maxShardContentBytes: r.integerOption('index.maxShardContentBytes', indexRaw.maxShardContentBytes),
      ctagsCommand: indexRaw.ctagsCommand === '' ? '' : r.stringOption('index.ctagsCommand', indexRaw.ctagsCommand),
      ctagsProcesses: r.integerOption('index.ctagsProcesses', indexRaw.ctagsProcesses),
      maxWatchedDirectories: r.integerOption('index.maxWatchedDirectories', indexRaw.maxWatchedDirectories),
    },
    connections,
    sync: readSync(r, r.section(top.sync, 'sync')),
    cluster: top.cluster === undefined ? null : readCluster(r, r.section(top.cluster, 'cluster')),
  };
  if (config.cluster) {
    const { advertiseUrl } = config.cluster;
    if (advertiseUrl === undefined && /^(0\.0\.0\.0|::)$/.test(listen.host)) {
      r.fail('cluster.advertiseUrl', `must be given when the daemon listens on every address (listen.host ${listen.host})`, null);
    }
    // The other nodes name this one as it advertises itself.
    const advertised = advertiseUrl ? new URL(advertiseUrl).host : listenUrl(listen.host, 0).replace(/^http:\/\/|:0$/g, '');
    if (!config.server.allowedHosts.includes(advertised)) config.server.allowedHosts.push(advertised);
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems, source);
  return config;
}

/** An issuer must be https, except on a loopback address (a provider on the same machine, or a test's). */
const issuerUrl = (value: string) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  return secureOrLoopback(url) ? null : 'must be an https URL (http only on a loopback address)';
};

function readOidc(r: Reader, raw: Record<string, Json>): OidcConfig {
  const scopes = r.stringsOption('auth.oidc.scopes', raw.scopes);
  return {
    issuer: r.stringOption('auth.oidc.issuer', raw.issuer, 'auth.oidc.issuer', issuerUrl),
    clientId: r.stringOption('auth.oidc.clientId', raw.clientId),
    clientSecretFile: r.stringOption('auth.oidc.clientSecretFile', raw.clientSecretFile),
    name: r.stringOption('auth.oidc.name', raw.name),
    scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
    allowedEmailDomains: r.stringsOption('auth.oidc.allowedEmailDomains', raw.allowedEmailDomains).map((domain) => domain.toLowerCase()),
    createMembers: r.booleanOption('auth.oidc.createMembers', raw.createMembers),
    roleClaim: raw.roleClaim === '' || raw.roleClaim === undefined ? '' : r.stringOption('auth.oidc.roleClaim', raw.roleClaim),
    ownerValues: r.stringsOption('auth.oidc.ownerValues', raw.ownerValues),
  };
}

function readCluster(r: Reader, raw: Record<string, Json>): ClusterConfig {
  const etcd = r.stringsOption('cluster.etcd', raw.etcd).map((url, i) => r.string(url, `cluster.etcd[${i}]`, undefined, absoluteHttpUrl).replace(/\/+$/, ''));
  if (etcd.length === 0) r.fail('cluster.etcd', 'must list at least one etcd client URL', null);
  return {
    etcd,
    node: r.stringOption('cluster.node', raw.node, 'cluster.node', (name) =>
      /^[A-Za-z0-9._-]{1,64}$/.test(name) ? null : 'must be 1 to 64 letters, digits, `.`, `_` or `-`',
    ),
    ...(raw.advertiseUrl === undefined
      ? {}
      : { advertiseUrl: r.stringOption('cluster.advertiseUrl', raw.advertiseUrl, 'cluster.advertiseUrl', absoluteHttpUrl).replace(/\/+$/, '') }),
    keyFile: r.stringOption('cluster.keyFile', raw.keyFile),
    partitions: r.integerOption('cluster.partitions', raw.partitions),
    replicas: r.integerOption('cluster.replicas', raw.replicas),
    strict: r.booleanOption('cluster.strict', raw.strict),
    keyPrefix: r.stringOption('cluster.keyPrefix', raw.keyPrefix, 'cluster.keyPrefix', (prefix) =>
      /^[\x21-\x7e]{0,128}$/.test(prefix) ? null : 'must be at most 128 printable ASCII characters, no spaces',
    ),
    snapshotAfterChanges: r.integerOption('cluster.snapshotAfterChanges', raw.snapshotAfterChanges),
    placementFloorBytes: r.integerOption('cluster.placementFloorBytes', raw.placementFloorBytes),
  };
}

function readRepository(r: Reader, raw: Json, at: string): RepositoryConfig {
  const repo = r.section(raw, 'repos[]', at);
  const webUrl = repo.webUrl === undefined ? undefined : r.stringOption('repos[].webUrl', repo.webUrl, `${at}.webUrl`, absoluteHttpUrl);
  const config: RepositoryConfig = {
    name: r.stringOption('repos[].name', repo.name, `${at}.name`, (name) =>
      /[\x00-\x1f\s]/.test(name) ? 'must not contain spaces or control characters' : null,
    ),
    path: r.stringOption('repos[].path', repo.path, `${at}.path`),
    branches: r.stringsOption('repos[].branches', repo.branches, `${at}.branches`),
    codeHostType: r.oneOf(repo.codeHostType, `${at}.codeHostType`, OPTIONS['repos[].codeHostType'].values, OPTIONS['repos[].codeHostType'].default),
    public: r.booleanOption('repos[].public', repo.public, `${at}.public`),
    archived: r.booleanOption('repos[].archived', repo.archived, `${at}.archived`),
    fork: r.booleanOption('repos[].fork', repo.fork, `${at}.fork`),
  };
  if (webUrl !== undefined) config.webUrl = webUrl.replace(/\/+$/, '');
  const displayName = r.optionalString(repo.displayName, `${at}.displayName`);
  if (displayName !== undefined) config.displayName = displayName;
  return config;
}
