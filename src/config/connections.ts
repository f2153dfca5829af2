/**
 * The `connections` and `sync` sections: code hosts trawl clones and keeps in sync (docs/connections.md).
 * Each type takes the options of its host; one it does not take is an error naming the option, and a token
 * is only ever named (an environment variable or a file), never written in the configuration.
 */
import type { ConnectionType } from '../index/code-host.js';
import type { Reader } from './config.js';
import { OPTIONS } from './options.js';

type Json = unknown;

/** Where a secret is read from when it is needed; the configuration never holds the secret itself. */
export type SecretSource = { env: string } | { file: string };

export interface ConnectionConfig {
  /** The key in `connections`: letters, digits, `_` and `-`. */
  name: string;
  type: ConnectionType;
  /** The host (API base derived from it), or for `git` the repository. */
  url: string;
  token?: SecretSource;
  user?: string;
  deploymentType: 'cloud' | 'server';
  all: boolean;
  orgs: string[];
  users: string[];
  groups: string[];
  workspaces: string[];
  projects: string[];
  repos: string[];
  topics: string[];
  exclude: {
    forks: boolean;
    archived: boolean;
    /** Globs of host-side names (`exclude.repos` and `exclude.projects` together). */
    repos: string[];
    topics: string[];
    readOnly: boolean;
    hidden: boolean;
    disabled: boolean;
    minSizeBytes: number;
    maxSizeBytes: number;
  };
  branches: string[];
  tags: string[];
  public: boolean;
  publicRepos: string[];
  syncIntervalMinutes: number;
}

export interface SyncConfig {
  processes: number;
  fetchTimeoutSeconds: number;
  maxRepositoryMegabytes: number;
  maxRepositories: number;
  apiTimeoutSeconds: number;
  removeAfterHours: number;
}

const COMMON = ['type', 'url', 'revisions', 'public', 'publicRepos', 'syncIntervalMinutes'];

/** The options each type takes besides COMMON, and the `exclude` options it takes. */
const TYPE_OPTIONS: Record<ConnectionType, { options: string[]; exclude: string[] }> = {
  github: { options: ['token', 'users', 'orgs', 'repos', 'topics', 'exclude'], exclude: ['forks', 'archived', 'repos', 'topics', 'size'] },
  gitlab: { options: ['token', 'all', 'users', 'groups', 'projects', 'topics', 'exclude'], exclude: ['forks', 'archived', 'projects', 'repos', 'topics'] },
  gitea: { options: ['token', 'users', 'orgs', 'repos', 'exclude'], exclude: ['forks', 'archived', 'repos'] },
  gerrit: { options: ['projects', 'exclude'], exclude: ['projects', 'repos', 'readOnly', 'hidden'] },
  bitbucket: { options: ['token', 'user', 'deploymentType', 'all', 'workspaces', 'projects', 'repos', 'exclude'], exclude: ['forks', 'archived', 'repos'] },
  azuredevops: { options: ['token', 'deploymentType', 'orgs', 'projects', 'repos', 'exclude'], exclude: ['disabled', 'repos', 'projects', 'size'] },
  git: { options: ['token', 'user'], exclude: [] },
};

/** The hosted service each type defaults to; gerrit and git have none. */
const DEFAULT_URLS: Partial<Record<ConnectionType, string>> = {
  github: 'https://github.com',
  gitlab: 'https://gitlab.com',
  gitea: 'https://gitea.com',
  bitbucket: 'https://api.bitbucket.org/2.0',
  azuredevops: 'https://dev.azure.com',
};

const CONNECTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const GIT_URL = /^(https?|ssh|git|file):\/\//;

export function readConnections(r: Reader, raw: Json): ConnectionConfig[] {
  if (raw === undefined) return [];
  const entries = r.object(raw, 'connections', Object.keys((raw ?? {}) as object));
  if (!entries) return [];
  return Object.entries(entries).map(([name, value]) => {
    const at = `connections.${name}`;
    if (!CONNECTION_NAME.test(name)) r.fail(at, 'a connection name is 1–64 letters, digits, `_` or `-`', null);
    return readConnection(r, name, value, at);
  });
}

function readConnection(r: Reader, name: string, value: Json, at: string): ConnectionConfig {
  const probe = typeof value === 'object' && value !== null ? (value as Record<string, Json>) : {};
  const type = r.oneOf(probe.type, `${at}.type`, OPTIONS['connections.NAME.type'].values, 'git');
  if (probe.type === undefined) r.fail(`${at}.type`, `required (one of ${OPTIONS['connections.NAME.type'].values.join(', ')})`, null);
  const { options, exclude: excludeKeys } = TYPE_OPTIONS[type];
  const raw = r.object(value, at, [...COMMON, ...options]) ?? {};
  const strings = (key: string) => r.strings(raw[key], `${at}.${key}`, []);
  const excludeRaw = raw.exclude === undefined ? {} : (r.object(raw.exclude, `${at}.exclude`, excludeKeys) ?? {});
  const sizeRaw = excludeRaw.size === undefined ? {} : (r.object(excludeRaw.size, `${at}.exclude.size`, ['min', 'max']) ?? {});
  const revisionsRaw = raw.revisions === undefined ? {} : (r.object(raw.revisions, `${at}.revisions`, ['branches', 'tags']) ?? {});
  const defaultUrl = DEFAULT_URLS[type];
  const url =
    raw.url === undefined && defaultUrl === undefined
      ? r.fail(`${at}.url`, `required for a ${type} connection`, '')
      : r.string(raw.url, `${at}.url`, defaultUrl, type === 'git' ? gitUrl : hostUrl);
  const config: ConnectionConfig = {
    name,
    type,
    url: type === 'git' ? url : url.replace(/\/+$/, ''),
    deploymentType: r.oneOf(raw.deploymentType, `${at}.deploymentType`, ['cloud', 'server'] as const, 'cloud'),
    all: r.boolean(raw.all, `${at}.all`, false),
    orgs: strings('orgs'),
    users: strings('users'),
    groups: strings('groups'),
    workspaces: strings('workspaces'),
    projects: strings('projects'),
    repos: strings('repos'),
    topics: strings('topics'),
    exclude: {
      forks: r.boolean(excludeRaw.forks, `${at}.exclude.forks`, false),
      archived: r.boolean(excludeRaw.archived, `${at}.exclude.archived`, false),
      repos: [...r.strings(excludeRaw.repos, `${at}.exclude.repos`, []), ...r.strings(excludeRaw.projects, `${at}.exclude.projects`, [])],
      topics: r.strings(excludeRaw.topics, `${at}.exclude.topics`, []),
      readOnly: r.boolean(excludeRaw.readOnly, `${at}.exclude.readOnly`, false),
      hidden: r.boolean(excludeRaw.hidden, `${at}.exclude.hidden`, false),
      disabled: r.boolean(excludeRaw.disabled, `${at}.exclude.disabled`, false),
      minSizeBytes: r.integerOption('connections.NAME.exclude.size.min', sizeRaw.min, `${at}.exclude.size.min`),
      maxSizeBytes: r.integerOption('connections.NAME.exclude.size.max', sizeRaw.max, `${at}.exclude.size.max`),
    },
    branches: r.strings(revisionsRaw.branches, `${at}.revisions.branches`, []),
    tags: r.strings(revisionsRaw.tags, `${at}.revisions.tags`, []),
    public: r.boolean(raw.public, `${at}.public`, false),
    publicRepos: strings('publicRepos'),
    syncIntervalMinutes: r.integerOption('connections.NAME.syncIntervalMinutes', raw.syncIntervalMinutes, `${at}.syncIntervalMinutes`),
  };
  if (raw.token !== undefined) config.token = readSecretSource(r, raw.token, `${at}.token`);
  if (raw.user !== undefined)
    config.user = r.string(raw.user, `${at}.user`, undefined, (user) => (/[\x00-\x1f\x7f]/.test(user) ? 'must not contain control characters' : null));
  if (type === 'gerrit' && config.token) r.fail(`${at}.token`, 'gerrit connections read anonymously', null);
  return config;
}

function readSecretSource(r: Reader, raw: Json, at: string): SecretSource | undefined {
  if (typeof raw === 'string')
    return r.fail(at, 'a token is never written in the configuration: name it as {"env": "VARIABLE"} or {"file": "path"}', undefined);
  const source = r.object(raw, at, ['env', 'file']);
  if (!source) return undefined;
  if ((source.env === undefined) === (source.file === undefined)) return r.fail(at, 'give exactly one of "env" and "file"', undefined);
  if (source.env !== undefined)
    return { env: r.string(source.env, `${at}.env`, undefined, (name) => (ENV_NAME.test(name) ? null : 'must be an environment variable name')) };
  return { file: r.string(source.file, `${at}.file`) };
}

function hostUrl(value: string): string | null {
  return /^https?:\/\/[^\s/]+/.test(value) && URL.canParse(value) && !new URL(value).username && !new URL(value).password
    ? null
    : 'must be an absolute http(s) URL without a user or password';
}

function gitUrl(value: string): string | null {
  if (!GIT_URL.test(value) || !URL.canParse(value)) return 'must be an https://, http://, ssh://, git:// or file:// URL';
  const url = new URL(value);
  if (url.password) return 'must not hold a password (use `token`)';
  return /[\x00-\x20\x7f]/.test(value) ? 'must not contain spaces or control characters' : null;
}

export function readSync(r: Reader, raw: Record<string, Json>): SyncConfig {
  return {
    processes: r.integerOption('sync.processes', raw.processes),
    fetchTimeoutSeconds: r.integerOption('sync.fetchTimeoutSeconds', raw.fetchTimeoutSeconds),
    maxRepositoryMegabytes: r.integerOption('sync.maxRepositoryMegabytes', raw.maxRepositoryMegabytes),
    maxRepositories: r.integerOption('sync.maxRepositories', raw.maxRepositories),
    apiTimeoutSeconds: r.integerOption('sync.apiTimeoutSeconds', raw.apiTimeoutSeconds),
    removeAfterHours: r.integerOption('sync.removeAfterHours', raw.removeAfterHours),
  };
}
