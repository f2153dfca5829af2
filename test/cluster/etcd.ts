/**
 * A real etcd cluster for the cluster tests and benchmarks: Debian's etcd-server, `size` members as child processes on free
 * loopback ports, each with its own data directory. Teardown stops them with SIGKILL and waits for their exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { tempDir, type Teardown } from '../helpers/tmp.js';
import { waitFor } from '../helpers/daemon.js';
import { freePort } from '../helpers/git-host.js';

export interface EtcdMember {
  name: string;
  clientUrl: string;
  process: ChildProcess;
  /** Its command line: a member killed is started again with it, on its data directory. */
  args: string[];
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** The client URLs, as `cluster.etcd` takes them. */
  endpoints: string[];
}

export async function startEtcd(t: Teardown, size = 3): Promise<EtcdCluster> {
  const dir = tempDir(t, 'trawl-etcd-');
  const ports = await Promise.all(Array.from({ length: size * 2 }, freePort));
  const names = Array.from({ length: size }, (_, i) => `etcd${i}`);
  const peerUrl = (i: number) => `http://127.0.0.1:${ports[2 * i + 1]}`;
  const initialCluster = names.map((name, i) => `${name}=${peerUrl(i)}`).join(',');
  const members = names.map((name, i) => {
    const clientUrl = `http://127.0.0.1:${ports[2 * i]}`;
    const args = [
      `--name=${name}`,
      `--data-dir=${path.join(dir, name)}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl(i)}`,
      `--initial-advertise-peer-urls=${peerUrl(i)}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      '--initial-cluster-token=trawl-test',
      '--log-level=error',
    ];
    return { name, clientUrl, process: spawnMember(args), args };
  });
  t.teardown(() => Promise.all(members.map((member) => killMember(member))));
  await healthyCluster(members);
  return { members, endpoints: members.map((member) => member.clientUrl) };
}

/** Resolves once every member answers healthy (a cluster with its leader). */
export async function healthyCluster(members: EtcdMember[]): Promise<void> {
  await Promise.all(members.map((member) => waitFor(() => healthy(member.clientUrl), 30_000, `etcd member ${member.name} healthy`)));
}

function spawnMember(args: string[]): ChildProcess {
  const child = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.resume();
  return child;
}

/** Starts a killed member again on its data directory (its ports are its own: nothing else took them meanwhile). */
export function restartMember(member: EtcdMember): void {
  member.process = spawnMember(member.args);
}

/** The member etcd's members agree leads, as its status endpoint says. */
export async function leaderOf(cluster: EtcdCluster): Promise<EtcdMember> {
  for (const member of cluster.members) {
    try {
      const response = await fetch(`${member.clientUrl}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
      const status = (await response.json()) as { header: { member_id: string }; leader: string };
      if (status.leader === status.header.member_id) return member;
    } catch {
      // Down, or not answering: ask the next.
    }
  }
  throw new Error('no etcd member says it leads');
}

/** SIGKILL, resolved once the process is gone. */
export async function killMember(member: EtcdMember): Promise<void> {
  const { process: child } = member;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function healthy(clientUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
    return response.ok && ((await response.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}
