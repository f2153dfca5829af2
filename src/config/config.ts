/**
 * The trawl configuration: its shape, defaults and validation. Every problem
 * is reported with the option's path (e.g. `repos[2].codeHostType`) and what
 * was expected; unknown options are errors, so typos do not pass silently.
 */
import os from 'node:os';
import type { CodeHostType } from '../index/model.js';

export const CODE_HOST_TYPES: readonly CodeHostType[] = [
  'github',
  'gitlab',
  'gitea',
  'gerrit',
  'bitbucketServer',
  'bitbucketCloud',
  'genericGitHost',
  'azuredevops',
];

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
}

export interface SearchContextConfig {
  include: string[];
  exclude: string[];
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
  /** On SIGTERM, requests in flight get this long to finish. */
  shutdownDrainSeconds: number;
}

export interface Config {
  /** Shards, the manifest and state live here. Relative to the config file. */
  dataDir: string;
  listen: { host: string; port: number };
  server: ServerConfig;
  publicUrl: string;
  repos: RepositoryConfig[];
  contexts: Record<string, SearchContextConfig>;
  auth: { anonymousAccess: boolean };
  index: IndexConfig;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[], source: string) {
    super(`invalid configuration in ${source}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Json = unknown;

/** Collects problems while reading one JSON value against the expected shape. */
class Reader {
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

  fail<T>(at: string, problem: string, fallback: T): T {
    this.problems.push(`${at}: ${problem}`);
    return fallback;
  }
}

function join(at: string, key: string): string {
  return at ? `${at}.${key}` : key;
}

const absoluteHttpUrl = (value: string) => (/^https?:\/\/[^\s/]+/.test(value) ? null : 'must be an absolute http(s) URL');

/**
 * Validates parsed JSON and fills in defaults. Throws ConfigError listing
 * every problem found, each naming its option. `source` names the file in messages.
 */
export function validateConfig(raw: Json, source: string): Config {
  const r = new Reader();
  const top = r.object(raw, '', ['dataDir', 'listen', 'server', 'publicUrl', 'repos', 'contexts', 'auth', 'index']) ?? {};
  const listenRaw = top.listen === undefined ? {} : r.object(top.listen, 'listen', ['host', 'port']) ?? {};
  const listen = {
    host: r.string(listenRaw.host, 'listen.host', '127.0.0.1'),
    port: r.integer(listenRaw.port, 'listen.port', 6070, 0, 65535),
  };
  const publicUrl = r.string(top.publicUrl, 'publicUrl', `http://${listen.host}:${listen.port}`, absoluteHttpUrl).replace(/\/+$/, '');
  const repos = Array.isArray(top.repos) ? top.repos.map((repo, i) => readRepository(r, repo, `repos[${i}]`)) : r.fail('repos', 'must be an array of repositories', []);
  const seen = new Set<string>();
  repos.forEach((repo, i) => {
    if (seen.has(repo.name)) r.fail(`repos[${i}].name`, `duplicate repository name ${JSON.stringify(repo.name)}`, null);
    seen.add(repo.name);
  });
  const contexts: Record<string, SearchContextConfig> = {};
  const contextsRaw = top.contexts === undefined ? {} : r.object(top.contexts, 'contexts', Object.keys(top.contexts as object)) ?? {};
  for (const [name, value] of Object.entries(contextsRaw)) {
    const at = `contexts.${name}`;
    const context = r.object(value, at, ['include', 'exclude']) ?? {};
    contexts[name] = { include: r.strings(context.include, `${at}.include`, []), exclude: r.strings(context.exclude, `${at}.exclude`, []) };
  }
  const authRaw = top.auth === undefined ? {} : r.object(top.auth, 'auth', ['anonymousAccess']) ?? {};
  const indexRaw = top.index === undefined ? {} : r.object(top.index, 'index', ['maxFileBytes', 'maxShardContentBytes', 'ctagsCommand', 'ctagsProcesses']) ?? {};
  const serverRaw =
    top.server === undefined
      ? {}
      : r.object(top.server, 'server', ['workers', 'searchTimeBudgetMs', 'maxBodyBytes', 'maxQueuedSearches', 'rescanIntervalSeconds', 'shutdownDrainSeconds']) ?? {};
  const config: Config = {
    dataDir: r.string(top.dataDir, 'dataDir', './data'),
    listen,
    server: {
      workers: r.integer(serverRaw.workers, 'server.workers', os.availableParallelism(), 1, 256),
      searchTimeBudgetMs: r.integer(serverRaw.searchTimeBudgetMs, 'server.searchTimeBudgetMs', 10_000, 1, 600_000),
      maxBodyBytes: r.integer(serverRaw.maxBodyBytes, 'server.maxBodyBytes', 1 << 20, 1024, 64 << 20),
      maxQueuedSearches: r.integer(serverRaw.maxQueuedSearches, 'server.maxQueuedSearches', 256, 1, 100_000),
      rescanIntervalSeconds: r.integer(serverRaw.rescanIntervalSeconds, 'server.rescanIntervalSeconds', 300, 0, 86_400),
      shutdownDrainSeconds: r.integer(serverRaw.shutdownDrainSeconds, 'server.shutdownDrainSeconds', 10, 0, 600),
    },
    publicUrl,
    repos,
    contexts,
    auth: { anonymousAccess: r.boolean(authRaw.anonymousAccess, 'auth.anonymousAccess', false) },
    index: {
      maxFileBytes: r.integer(indexRaw.maxFileBytes, 'index.maxFileBytes', 1 << 20, 1, 256 << 20),
      maxShardContentBytes: r.integer(indexRaw.maxShardContentBytes, 'index.maxShardContentBytes', 100 << 20, 1 << 20, 2 ** 31),
      ctagsCommand: indexRaw.ctagsCommand === '' ? '' : r.string(indexRaw.ctagsCommand, 'index.ctagsCommand', 'ctags'),
      ctagsProcesses: r.integer(indexRaw.ctagsProcesses, 'index.ctagsProcesses', 2, 1, 64),
    },
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems, source);
  return config;
}

function readRepository(r: Reader, raw: Json, at: string): RepositoryConfig {
  const repo =
    r.object(raw, at, ['name', 'path', 'branches', 'codeHostType', 'webUrl', 'displayName', 'public', 'archived', 'fork']) ?? {};
  const webUrl = repo.webUrl === undefined ? undefined : r.string(repo.webUrl, `${at}.webUrl`, undefined, absoluteHttpUrl);
  const config: RepositoryConfig = {
    name: r.string(repo.name, `${at}.name`, undefined, (name) => (/[\x00-\x1f\s]/.test(name) ? 'must not contain spaces or control characters' : null)),
    path: r.string(repo.path, `${at}.path`),
    branches: r.strings(repo.branches, `${at}.branches`, []),
    codeHostType: r.oneOf(repo.codeHostType, `${at}.codeHostType`, CODE_HOST_TYPES, 'genericGitHost'),
    public: r.boolean(repo.public, `${at}.public`, false),
    archived: r.boolean(repo.archived, `${at}.archived`, false),
    fork: r.boolean(repo.fork, `${at}.fork`, false),
  };
  if (webUrl !== undefined) config.webUrl = webUrl.replace(/\/+$/, '');
  const displayName = r.optionalString(repo.displayName, `${at}.displayName`);
  if (displayName !== undefined) config.displayName = displayName;
  return config;
}
