/**
 * Every option of the configuration file: its type, bounds, default and
 * meaning. The validator (config.ts) reads options through this table (and
 * knows which keys an object may have from it), and README's configuration
 * reference is generated from it (reference.ts), so the two cannot drift.
 * Paths use `[]` for "each element" and `NAME` for "any key".
 */
import os from 'node:os';
import { CODE_HOST_TYPES, CONNECTION_TYPES } from '../index/code-host.js';

interface Documented {
  meaning: string;
  /** How the default reads in the reference, when it is not a literal. */
  defaultText?: string;
}

export type OptionSpec = Documented &
  (
    | { kind: 'string'; default?: string }
    | { kind: 'integer'; default: number | (() => number); min: number; max: number }
    | { kind: 'boolean'; default: boolean }
    | { kind: 'strings'; default: string[] }
    | { kind: 'oneOf'; values: readonly string[]; default: string }
    | { kind: 'object'; default?: undefined }
  );

export const OPTIONS = {
  dataDir: {
    kind: 'string',
    default: './data',
    meaning: 'shards, `manifest.json`, and `state/` (the state and audit logs, the instance key); relative to the config file',
  },
  'listen.host': { kind: 'string', default: '127.0.0.1', meaning: 'the address the daemon listens on' },
  'listen.port': { kind: 'integer', default: 6070, min: 0, max: 65535, meaning: 'its port (0: any free port)' },
  'server.workers': {
    kind: 'integer',
    default: () => os.availableParallelism(),
    defaultText: 'number of cores',
    min: 1,
    max: 256,
    meaning: 'search worker threads',
  },
  'server.searchTimeBudgetMs': { kind: 'integer', default: 10_000, min: 1, max: 600_000, meaning: 'a search returns what it found after this long' },
  'server.maxBodyBytes': { kind: 'integer', default: 1 << 20, min: 1024, max: 64 << 20, meaning: 'larger request bodies are refused (400)' },
  'server.maxQueuedSearches': {
    kind: 'integer',
    default: 256,
    min: 1,
    max: 100_000,
    meaning:
      'searches in flight at most; more get 503 with `Retry-After`, except that a caller holding less takes the youngest waiting place of the caller holding most',
  },
  'server.rescanIntervalSeconds': {
    kind: 'integer',
    default: 300,
    min: 0,
    max: 86_400,
    meaning: 'a full index pass this often, for changes the watchers missed (0: never)',
  },
  'server.rateLimitPerSecond': {
    kind: 'integer',
    default: 0,
    min: 0,
    max: 1_000_000,
    meaning:
      'requests per second per credential (anonymous callers and failed authentications: per address), in bursts of up to twice that; more get 429 with `Retry-After` (0: no limit)',
  },
  'server.mcpSessions': {
    kind: 'integer',
    default: 1000,
    min: 1,
    max: 1_000_000,
    meaning: 'MCP sessions open at most; past it a new one gets 503 with `Retry-After`',
  },
  'server.mcpSessionsPerCaller': {
    kind: 'integer',
    default: 32,
    min: 1,
    max: 1_000_000,
    meaning: 'MCP sessions one user (anonymous callers: one address) may hold; past it a new one gets 429',
  },
  'server.mcpSessionIdleSeconds': { kind: 'integer', default: 1800, min: 1, max: 604_800, meaning: 'an MCP session unused this long is closed' },
  'server.streamStallSeconds': {
    kind: 'integer',
    default: 30,
    min: 1,
    max: 3600,
    meaning: 'a client of a streamed response (stream_search, MCP) that takes nothing for this long is cut off, and its search stopped',
  },
  'server.allowedHosts': {
    kind: 'strings',
    default: [],
    meaning:
      "names (or addresses) besides `publicUrl`'s host that a request's `Host` may carry, each `name` or `name:port`; loopback names with the bound port are always allowed, any other `Host` gets 403 (DNS rebinding)",
  },
  'server.shutdownDrainSeconds': { kind: 'integer', default: 10, min: 0, max: 600, meaning: 'how long requests in flight get to finish on SIGTERM' },
  publicUrl: {
    kind: 'string',
    defaultText: '`http://{listen.host}:{listen.port}`',
    meaning: 'base of result links (an absolute http(s) URL; an IPv6 `listen.host` bracketed by default)',
  },
  'repos[].name': { kind: 'string', defaultText: 'required', meaning: 'unique name, by convention `host/owner/name`' },
  'repos[].path': {
    kind: 'string',
    defaultText: 'required',
    meaning: 'git repository (bare or with a working tree) or plain directory; relative to the config file',
  },
  'repos[].branches': { kind: 'strings', default: [], meaning: 'branch names or globs (`*` within a segment, `**` across) indexed besides the default branch' },
  'repos[].codeHostType': { kind: 'oneOf', values: CODE_HOST_TYPES, default: 'genericGitHost', meaning: 'the code host, for links' },
  'repos[].webUrl': { kind: 'string', defaultText: 'none', meaning: 'the repository on its code host (an absolute http(s) URL)' },
  'repos[].displayName': { kind: 'string', defaultText: 'none', meaning: 'the name shown instead of `name`' },
  'repos[].public': { kind: 'boolean', default: false, meaning: 'visible to anonymous callers and every member' },
  'repos[].archived': { kind: 'boolean', default: false, meaning: 'flag shown in listings' },
  'repos[].fork': { kind: 'boolean', default: false, meaning: 'flag shown in listings' },
  connections: {
    kind: 'object',
    meaning: 'code hosts whose repositories trawl clones, keeps fetched and indexes, by connection name (letters, digits, `_`, `-`); docs/connections.md',
  },
  'connections.NAME.type': {
    kind: 'oneOf',
    values: CONNECTION_TYPES,
    default: 'git',
    defaultText: 'required',
    meaning: 'the code host: `git` is one repository at `url` (`https://`, `http://`, `ssh://`, `git://`, `file://`)',
  },
  'connections.NAME.url': {
    kind: 'string',
    defaultText: "the public host's (github.com, gitlab.com, gitea.com, api.bitbucket.org, dev.azure.com); required for gerrit and git",
    meaning: 'the host (for GitHub Enterprise Server its web address; the API is found under it), or the repository for `git`',
  },
  'connections.NAME.token': {
    kind: 'object',
    defaultText: 'none',
    meaning:
      'the access token, as `{"env": "VARIABLE"}` or `{"file": "path"}` (a file only its owner can read; relative to the config file), never written in the config',
  },
  'connections.NAME.token.env': { kind: 'string', meaning: 'an environment variable of the daemon holding the token' },
  'connections.NAME.token.file': { kind: 'string', meaning: 'a file holding the token' },
  'connections.NAME.user': { kind: 'string', defaultText: "the host's token user", meaning: 'the user name sent with the token (bitbucket, git over http(s))' },
  'connections.NAME.deploymentType': {
    kind: 'oneOf',
    values: ['cloud', 'server'],
    default: 'cloud',
    meaning: 'bitbucket and azuredevops: the hosted service or a self-hosted server',
  },
  'connections.NAME.all': { kind: 'boolean', default: false, meaning: 'gitlab, bitbucket (server): every repository the token can see' },
  'connections.NAME.orgs': { kind: 'strings', default: [], meaning: 'github, gitea, azuredevops: organisations whose repositories are synced' },
  'connections.NAME.users': { kind: 'strings', default: [], meaning: 'github, gitlab, gitea: users whose repositories are synced' },
  'connections.NAME.groups': { kind: 'strings', default: [], meaning: 'gitlab: groups (with their subgroups) whose projects are synced' },
  'connections.NAME.workspaces': { kind: 'strings', default: [], meaning: 'bitbucket (cloud): workspaces whose repositories are synced' },
  'connections.NAME.projects': {
    kind: 'strings',
    default: [],
    meaning: 'gitlab: projects `group/name`; gerrit: project globs (none: all); bitbucket: project keys; azuredevops: `org/project`',
  },
  'connections.NAME.repos': {
    kind: 'strings',
    default: [],
    meaning: 'single repositories: `owner/name` (github, gitea), `workspace/name` or `PROJECT/name` (bitbucket), `org/project/name` (azuredevops)',
  },
  'connections.NAME.topics': { kind: 'strings', default: [], meaning: 'github, gitlab: only repositories with one of these topics (globs)' },
  'connections.NAME.exclude': { kind: 'object', meaning: 'repositories left out' },
  'connections.NAME.exclude.forks': { kind: 'boolean', default: false, meaning: 'leave out forks' },
  'connections.NAME.exclude.archived': { kind: 'boolean', default: false, meaning: 'leave out archived repositories' },
  'connections.NAME.exclude.repos': { kind: 'strings', default: [], meaning: 'globs of host-side names (`owner/name`) left out' },
  'connections.NAME.exclude.projects': { kind: 'strings', default: [], meaning: 'gitlab, gerrit, azuredevops: the same, for projects' },
  'connections.NAME.exclude.topics': { kind: 'strings', default: [], meaning: 'github, gitlab: leave out repositories with one of these topics (globs)' },
  'connections.NAME.exclude.readOnly': { kind: 'boolean', default: false, meaning: 'gerrit: leave out read-only projects' },
  'connections.NAME.exclude.hidden': { kind: 'boolean', default: false, meaning: 'gerrit: leave out hidden projects' },
  'connections.NAME.exclude.disabled': { kind: 'boolean', default: false, meaning: 'azuredevops: leave out disabled repositories' },
  'connections.NAME.exclude.size': { kind: 'object', meaning: 'leave out repositories by the size the host reports' },
  'connections.NAME.exclude.size.min': { kind: 'integer', default: 0, min: 0, max: Number.MAX_SAFE_INTEGER, meaning: 'bytes: smaller ones are left out' },
  'connections.NAME.exclude.size.max': {
    kind: 'integer',
    default: Number.MAX_SAFE_INTEGER,
    defaultText: 'no bound',
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    meaning: 'bytes: larger ones are left out',
  },
  'connections.NAME.revisions': { kind: 'object', meaning: 'what is fetched and indexed besides the default branch' },
  'connections.NAME.revisions.branches': { kind: 'strings', default: [], meaning: 'branch globs' },
  'connections.NAME.revisions.tags': { kind: 'strings', default: [], meaning: 'tag globs (a tag is indexed as a branch of its name)' },
  'connections.NAME.public': {
    kind: 'boolean',
    default: false,
    meaning: "every repository of the connection is public (visible to anonymous callers and every member); the host's own visibility is not used",
  },
  'connections.NAME.publicRepos': { kind: 'strings', default: [], meaning: 'globs of trawl names (`host/owner/name`) that are public when `public` is false' },
  'connections.NAME.syncIntervalMinutes': {
    kind: 'integer',
    default: 60,
    min: 1,
    max: 525_600,
    meaning: "the connection's repositories are listed and fetched this often (also on `SIGHUP` and `POST /api/connections/{id}/sync`)",
  },
  'sync.processes': { kind: 'integer', default: 2, min: 1, max: 64, meaning: 'git fetches running at once, all connections together' },
  'sync.fetchTimeoutSeconds': {
    kind: 'integer',
    default: 900,
    min: 1,
    max: 86_400,
    meaning: "one repository's fetch is ended (and retried at the next sync) after this long",
  },
  'sync.maxRepositoryMegabytes': {
    kind: 'integer',
    default: 4096,
    min: 1,
    max: 1 << 24,
    meaning: 'a fetch that grows a mirror past this many MiB is ended, and the repository reported',
  },
  'sync.maxRepositories': {
    kind: 'integer',
    default: 10_000,
    min: 1,
    max: 1_000_000,
    meaning: 'repositories one connection may list; past it the sync fails and keeps what it had',
  },
  'sync.apiTimeoutSeconds': { kind: 'integer', default: 30, min: 1, max: 3600, meaning: 'a code host API request is ended after this long' },
  'sync.removeAfterHours': {
    kind: 'integer',
    default: 24,
    min: 0,
    max: 8_760,
    meaning:
      'a repository gone from its host (deleted, excluded, no longer visible to the token) stays searchable this long, then is dropped with its mirror; in a cluster, a node removes its mirror of a repository it has not held this long',
  },
  'contexts.NAME': { kind: 'object', meaning: 'a named search context (`context:NAME` in queries)' },
  'contexts.NAME.include': { kind: 'strings', default: [], meaning: 'repository name globs the context includes' },
  'contexts.NAME.exclude': { kind: 'strings', default: [], meaning: 'repository name globs it leaves out' },
  'auth.anonymousAccess': {
    kind: 'boolean',
    default: false,
    meaning: 'allow reads without a credential, of public repositories (until `trawl admin anonymous on/off` decides)',
  },
  'auth.sessionIdleHours': { kind: 'integer', default: 168, min: 1, max: 8_760, meaning: 'a sign-in session unused this long ends (docs/sessions.md)' },
  'auth.sessionMaxAgeDays': { kind: 'integer', default: 30, min: 1, max: 365, meaning: 'a sign-in session ends this long after sign-in, however used' },
  'auth.oidc': { kind: 'object', meaning: 'single sign-on through an OpenID Connect identity provider (docs/sessions.md); absent: off' },
  'auth.oidc.issuer': {
    kind: 'string',
    meaning: "the provider's issuer URL (https; http only on a loopback address); its discovery document is read at the first sign-in",
  },
  'auth.oidc.clientId': { kind: 'string', meaning: "trawl's client id at the provider (redirect URI: `publicUrl` + `/api/auth/oidc/callback`)" },
  'auth.oidc.clientSecretFile': { kind: 'string', meaning: 'a file holding the client secret (readable by its owner only); relative to the config file' },
  'auth.oidc.name': { kind: 'string', default: 'single sign-on', meaning: 'the provider as the sign-in button names it' },
  'auth.oidc.scopes': { kind: 'strings', default: ['openid', 'email', 'profile'], meaning: 'scopes asked for (`openid` always)' },
  'auth.oidc.allowedEmailDomains': {
    kind: 'strings',
    default: [],
    meaning: 'only people whose verified email is in one of these domains may sign in (`[]`: any)',
  },
  'auth.oidc.createMembers': {
    kind: 'boolean',
    default: false,
    meaning: 'a first sign-in of someone who is not a member makes them one (a seat each); otherwise an owner adds them first',
  },
  'auth.oidc.roleClaim': {
    kind: 'string',
    default: '',
    defaultText: 'none',
    meaning:
      "a claim (e.g. `groups`) whose values decide the role at every sign-in: owner when it holds one of `ownerValues`, member otherwise; `''`: roles are managed in trawl",
  },
  'auth.oidc.ownerValues': { kind: 'strings', default: [], meaning: 'values of `roleClaim` that make an owner' },
  'auth.auditRetentionDays': {
    kind: 'integer',
    default: 90,
    min: 0,
    max: 36_500,
    meaning: 'days a closed audit log segment (16 MiB or one day) is kept; `0` keeps all',
  },
  'auth.auditMaxMegabytes': {
    kind: 'integer',
    default: 10_240,
    min: 0,
    max: 16 << 20,
    meaning: 'the closed audit log segments together stay under this many MiB: past it the oldest are deleted (logged), whatever their age; `0`: no bound',
  },
  cluster: { kind: 'object', meaning: 'run as one node of a trawl cluster coordinated by etcd (docs/cluster.md); absent: a single node' },
  'cluster.etcd': { kind: 'strings', default: [], meaning: "the etcd cluster's client URLs (`http://host:2379`), one or more" },
  'cluster.node': { kind: 'string', meaning: "this node's name, unique in the cluster (letters, digits, `.`, `_`, `-`)" },
  'cluster.advertiseUrl': {
    kind: 'string',
    defaultText: 'where it listens',
    meaning: 'the URL the other nodes reach this one at; required when `listen.host` is every address (`0.0.0.0`, `::`)',
  },
  'cluster.keyFile': {
    kind: 'string',
    meaning:
      'a file holding the key the nodes present to each other (the same on every node, 32 characters or more, readable by its owner only); relative to the config file',
  },
  'cluster.partitions': {
    kind: 'integer',
    default: 64,
    min: 1,
    max: 4096,
    meaning: 'virtual partitions the repositories are hashed into; the same on every node, fixed for the life of the cluster',
  },
  'cluster.replicas': { kind: 'integer', default: 2, min: 1, max: 16, meaning: 'nodes that hold each partition' },
  'cluster.keyPrefix': {
    kind: 'string',
    default: '',
    meaning:
      'put before every key the cluster keeps in etcd (`search-a/`, say), so that several clusters, or other programs, share one etcd; the same on every node',
  },
  'cluster.snapshotAfterChanges': {
    kind: 'integer',
    default: 10_000,
    min: 10,
    max: 100_000,
    meaning: 'changes the credential log on etcd holds before a node replaces them with a snapshot of the state they make; the same on every node',
  },
  'cluster.placementFloorBytes': {
    kind: 'integer',
    default: 256 << 20,
    min: 1,
    max: 2 ** 50,
    meaning:
      'placement balances the bytes of partitions above this size and counts those below it (each weighs as much as one of this size); the same on every node',
  },
  'cluster.strict': {
    kind: 'boolean',
    default: false,
    meaning: 'a search that needs a partition no live node serves is answered 503, not 200 with `isSearchExhaustive: false`',
  },
  'index.maxFileBytes': { kind: 'integer', default: 1 << 20, min: 1, max: 256 << 20, meaning: 'larger files are not stored (still found by path)' },
  'index.maxShardContentBytes': {
    kind: 'integer',
    default: 100 << 20,
    min: 1 << 20,
    max: 2 ** 31,
    meaning: "a repository's shard is split past this much content",
  },
  'index.ctagsCommand': { kind: 'string', default: 'ctags', meaning: 'universal-ctags executable; `""` indexes without symbols' },
  'index.maxWatchedDirectories': {
    kind: 'integer',
    default: 10_000,
    min: 0,
    max: 1_000_000,
    meaning: 'directories of one plain-directory repository watched at most (links are never followed); past it, changes wait for the periodic rescan',
  },
  'index.ctagsProcesses': { kind: 'integer', default: 2, min: 1, max: 64, meaning: 'ctags processes run in parallel' },
} as const satisfies Record<string, OptionSpec>;

export type OptionPath = keyof typeof OPTIONS;

/** The keys an object at `parent` ('' for the top level, e.g. 'server', 'repos[]') may have. */
export function keysOf(parent: string): string[] {
  const prefix = parent === '' ? '' : `${parent}.`;
  const keys = Object.keys(OPTIONS)
    .filter((option) => option.startsWith(prefix))
    .map((option) => option.slice(prefix.length).split(/[.[]/)[0]!);
  return [...new Set(keys)];
}
