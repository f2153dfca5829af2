/**
 * What a host lists, checked and filtered: a repository whose name could escape a path or mislead a reader
 * (`..`, control characters, overlong) is left out with a warning; the connection's `exclude` options and
 * topics apply here for every host alike; past `sync.maxRepositories` the listing fails (nothing is dropped
 * from what was indexed before).
 */
import type { ConnectionConfig } from '../config/connections.js';
import { globToRegExp } from '../config/glob.js';
import { ConnectionError } from './errors.js';

/** A repository as the host describes it. */
export interface RemoteRepository {
  /** The host's name, `owner/name` (what `repos` and `exclude.repos` globs match). */
  path: string;
  /** The host's stable id, when it has one: a renamed repository keeps its mirror and its id in trawl. */
  hostId?: string;
  cloneUrl: string;
  webUrl?: string;
  archived?: boolean;
  fork?: boolean;
  sizeBytes?: number;
  topics?: string[];
  readOnly?: boolean;
  hidden?: boolean;
  disabled?: boolean;
}

/** A listed repository that passed the checks: its trawl name is `host/path`. */
export interface ListedRepository extends RemoteRepository {
  name: string;
}

const MAX_SEGMENT = 255;
const MAX_NAME = 1024;
const WARNINGS_KEPT = 20;

export class Listing {
  private readonly byName = new Map<string, ListedRepository>();
  readonly warnings: string[] = [];
  private warned = 0;
  private readonly excluded: RegExp[];
  private readonly topics: RegExp[];
  private readonly excludedTopics: RegExp[];
  private readonly host: string;

  constructor(
    private readonly connection: ConnectionConfig,
    private readonly maxRepositories: number,
    /** The origin clone URLs must have (remote connections); null: any URL is the connection's own (`git`). */
    private readonly cloneOrigins: readonly string[] | null,
  ) {
    this.excluded = connection.exclude.repos.map(globToRegExp);
    this.topics = connection.topics.map(globToRegExp);
    this.excludedTopics = connection.exclude.topics.map(globToRegExp);
    this.host = connectionHost(connection);
  }

  get repositories(): ListedRepository[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Adds `repo` unless a check or an exclusion leaves it out; throws past `maxRepositories`. */
  add(repo: RemoteRepository): void {
    const problem = nameProblem(repo.path) ?? this.cloneUrlProblem(repo.cloneUrl);
    if (problem) return this.warn(`${JSON.stringify(repo.path.slice(0, 200))} left out: ${problem}`);
    if (this.isExcluded(repo)) return;
    const name = `${this.host}/${repo.path.replace(/\.git$/, '')}`;
    if (this.byName.has(name)) return;
    if (this.byName.size >= this.maxRepositories) {
      throw new ConnectionError(
        `the host lists more than ${this.maxRepositories} repositories (sync.maxRepositories); narrow the connection with exclude or raise the bound`,
      );
    }
    this.byName.set(name, { ...repo, name });
  }

  private isExcluded(repo: RemoteRepository): boolean {
    const { exclude } = this.connection;
    if (
      (exclude.forks && repo.fork) ||
      (exclude.archived && repo.archived) ||
      (exclude.readOnly && repo.readOnly) ||
      (exclude.hidden && repo.hidden) ||
      (exclude.disabled && repo.disabled)
    )
      return true;
    if (repo.sizeBytes !== undefined && (repo.sizeBytes < exclude.minSizeBytes || repo.sizeBytes > exclude.maxSizeBytes)) return true;
    if (this.excluded.some((glob) => glob.test(repo.path))) return true;
    const repoTopics = repo.topics ?? [];
    if (this.excludedTopics.some((glob) => repoTopics.some((topic) => glob.test(topic)))) return true;
    return this.topics.length > 0 && !this.topics.some((glob) => repoTopics.some((topic) => glob.test(topic)));
  }

  /** A clone URL must stay on the host: never a local path, never another scheme family or origin. */
  private cloneUrlProblem(cloneUrl: string): string | null {
    if (this.cloneOrigins === null) return null;
    if (!URL.canParse(cloneUrl)) return 'its clone URL is not a URL';
    const url = new URL(cloneUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `its clone URL is ${url.protocol} (only http(s) from a host's API)`;
    return this.cloneOrigins.includes(url.origin) ? null : `its clone URL points at ${url.origin}, not the connection's host`;
  }

  private warn(message: string): void {
    if (this.warned++ < WARNINGS_KEPT) this.warnings.push(message);
    else if (this.warned === WARNINGS_KEPT + 1) this.warnings.push('more repositories left out; the first are listed');
  }
}

/** Why `path` cannot name a repository in trawl, or null. */
export function nameProblem(path: string): string | null {
  if (typeof path !== 'string' || path === '') return 'the name is empty';
  if (path.length > MAX_NAME) return `the name is over ${MAX_NAME} characters`;
  if (/[\x00-\x20\x7f\\]/.test(path)) return 'the name holds spaces, control characters or backslashes';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return 'the name has an empty, `.` or `..` segment';
  if (segments.some((segment) => segment.length > MAX_SEGMENT)) return `a segment of the name is over ${MAX_SEGMENT} characters`;
  return null;
}

/** The first segment of the connection's trawl names: the host (`github.com`, `bitbucket.org`), or `local` for a file URL. */
export function connectionHost(connection: ConnectionConfig): string {
  const url = new URL(connection.url);
  if (url.protocol === 'file:') return 'local';
  if (connection.type === 'bitbucket' && url.host === 'api.bitbucket.org') return 'bitbucket.org';
  if (connection.type === 'github' && url.host === 'api.github.com') return 'github.com';
  return url.host;
}
