/** Finding, reading and resolving the configuration file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { ConfigError, validateConfig, type Config } from './config.js';

/** Reads and validates a config file; relative paths in it are resolved against its directory. */
export function loadConfigFile(file: string): Config {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError([`cannot read the file: ${(error as Error).message}`], absolute);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`not valid JSON: ${(error as Error).message}`], absolute);
  }
  return resolvePaths(validateConfig(raw, absolute), path.dirname(absolute));
}

/**
 * The zero-config default: index the git repository `directory` is in (its work tree's top, as git finds it,
 * so a subdirectory means the whole repository), or the directory itself when it is in none, readable
 * anonymously on 127.0.0.1, with data under the user's cache directory.
 */
export function zeroConfig(directory: string): Config {
  const root = enclosingRepository(path.resolve(directory));
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const slug = `${path.basename(root) || 'root'}-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
  const config = validateConfig(
    {
      dataDir: path.join(cacheHome, 'trawl', slug),
      repos: [{ name: `local/${path.basename(root) || 'root'}`, path: root, public: true }],
      auth: { anonymousAccess: true },
    },
    'the zero-config default',
  );
  return config;
}

/** The nearest of `directory` and its parents that holds `.git` (a directory, or a worktree's file), else `directory`. */
function enclosingRepository(directory: string): string {
  for (let candidate = directory; ; candidate = path.dirname(candidate)) {
    if (fs.existsSync(path.join(candidate, '.git'))) return candidate;
    if (path.dirname(candidate) === candidate) return directory;
  }
}

/** The config named by --config, else $TRAWL_CONFIG, else the zero-config default for the working directory. */
export function resolveConfig(explicit: string | undefined): Config {
  const file = explicit ?? process.env.TRAWL_CONFIG;
  return file ? loadConfigFile(file) : zeroConfig(process.cwd());
}

function resolvePaths(config: Config, base: string): Config {
  return {
    ...config,
    dataDir: path.resolve(base, config.dataDir),
    auth: { ...config.auth, oidc: config.auth.oidc && { ...config.auth.oidc, clientSecretFile: path.resolve(base, config.auth.oidc.clientSecretFile) } },
    repos: config.repos.map((repo) => ({ ...repo, path: path.resolve(base, repo.path) })),
    cluster: config.cluster && { ...config.cluster, keyFile: path.resolve(base, config.cluster.keyFile) },
    connections: config.connections.map((connection) =>
      connection.token && 'file' in connection.token ? { ...connection, token: { file: path.resolve(base, connection.token.file) } } : connection,
    ),
  };
}
