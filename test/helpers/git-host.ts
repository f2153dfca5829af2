/**
 * Real git servers for connection tests: `git http-backend` behind nginx and fcgiwrap with HTTP basic auth
 * (the way a self-hosted git server is run; `/moved/*` redirects to `/*`), and `git daemon`. nginx can also pass `/api/` to a fixture API
 * server, so a host's API and its clone URLs share one origin as on a real host. Every process stops when the
 * test ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { waitFor } from './daemon.js';
import { commitAll, git, writeFiles } from './git.js';
import { tempDir, type Teardown } from './tmp.js';

export const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitHost {
  /** http://127.0.0.1:port */
  origin: string;
  /** The directory the served bare repositories live in (`{root}/{name}.git` is served at `{origin}/git/{name}.git`). */
  root: string;
  /** A bare repository `name` served with `files` committed on main; returns a working clone to push from. */
  createRepository(name: string, files: Record<string, string>): string;
}

/** A free port on 127.0.0.1 (closed again: the server about to start binds it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function startProcess(t: Teardown, command: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  // A group of its own: fcgiwrap and git daemon fork workers, which the teardown ends with it.
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...options.env }, detached: true });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  child.stderr!.resume();
  child.on('error', (error) => console.error(`${command} could not start: ${error.message}`));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        const kill = setTimeout(() => signalGroup('SIGKILL'), 3000);
        const done = () => {
          clearTimeout(kill);
          signalGroup('SIGKILL'); // workers the leader left behind
          resolve();
        };
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', done);
        signalGroup('SIGTERM');
      }),
  );
  return child;
}

async function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * nginx on a free port: `/git/*` is git http-backend over fcgiwrap, behind basic auth for `user`/`password`;
 * `/api/*` goes to `apiPort` when given.
 */
export async function startGitHttpHost(t: Teardown, credentials: { user: string; password: string }, apiPort?: number): Promise<GitHost> {
  const dir = tempDir(t, 'trawl-git-host-');
  const root = path.join(dir, 'repositories');
  fs.mkdirSync(root);
  const socket = path.join(dir, 'fcgiwrap.sock');
  startProcess(t, 'fcgiwrap', ['-c', '2', '-s', `unix:${socket}`]);
  await waitFor(async () => fs.existsSync(socket), 10_000, 'fcgiwrap to listen');
  fs.chmodSync(socket, 0o666);
  fs.writeFileSync(path.join(dir, 'htpasswd'), `${credentials.user}:{PLAIN}${credentials.password}\n`);
  const port = await freePort();
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, name)};`;
  const config = `${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  client_max_body_size 0;
  server {
    listen 127.0.0.1:${port};
    ${apiPort === undefined ? '' : `location /api/ { proxy_pass http://127.0.0.1:${apiPort}; proxy_set_header Host $http_host; proxy_buffering off; }`}
    # A redirect to the same repository's real address: a client that follows it gets the repository.
    location ~ ^/moved(/.*)$ { return 302 http://$http_host$1$is_args$args; }
    location ~ ^/git(/.*)$ {
      auth_basic "git";
      auth_basic_user_file ${path.join(dir, 'htpasswd')};
      include /etc/nginx/fastcgi_params;
      fastcgi_pass unix:${socket};
      fastcgi_param SCRIPT_FILENAME ${HTTP_BACKEND};
      fastcgi_param GIT_PROJECT_ROOT ${root};
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param PATH_INFO $1;
      fastcgi_param REMOTE_USER $remote_user;
    }
  }
}
`;
  const configFile = path.join(dir, 'nginx.conf');
  fs.writeFileSync(configFile, config);
  startProcess(t, 'nginx', ['-c', configFile, '-e', path.join(dir, 'error.log')]);
  await waitFor(() => reachable(port), 10_000, 'nginx to listen');
  return { origin: `http://127.0.0.1:${port}`, root, createRepository: (name, files) => createServedRepository(t, root, name, files) };
}

/** `git daemon` serving every repository under `root` at git://127.0.0.1:port/{name}.git. */
export async function startGitDaemon(t: Teardown, root: string): Promise<string> {
  const port = await freePort();
  startProcess(t, 'git', ['daemon', '--reuseaddr', '--export-all', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${port}`, root]);
  await waitFor(() => reachable(port), 10_000, 'git daemon to listen');
  return `git://127.0.0.1:${port}`;
}

/** A bare repository `{root}/{name}.git` holding `files` on main; returns a working clone that pushes to it. */
export function createServedRepository(t: Teardown, root: string, name: string, files: Record<string, string>): string {
  const bare = path.join(root, `${name}.git`);
  fs.mkdirSync(path.dirname(bare), { recursive: true });
  git(root, 'init', '-q', '--bare', bare);
  git(bare, 'config', 'http.receivepack', 'true');
  const work = path.join(tempDir(t, 'trawl-work-'), 'work');
  git(path.dirname(work), 'clone', '-q', bare, work);
  writeFiles(work, files);
  commitAll(work, 'initial');
  git(work, 'push', '-q', 'origin', 'HEAD:main');
  git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  return work;
}
