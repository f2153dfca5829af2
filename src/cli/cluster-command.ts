import { parseArgs } from 'node:util';
import { readLogSummary, type LogSummary } from '../auth/etcd-snapshot.js';
import { openEtcd, type EtcdKeys } from '../cluster/etcd.js';
import { clusterStatusIn, type ClusterStatus } from '../cluster/status.js';
import { mirroredRepositories } from '../connections/mirrored-repositories.js';
import { configOrProblem } from './config-option.js';
import type { Command } from './main.js';

export const clusterCommand: Command = {
  summary: "a cluster's members, partitions and what each node serves, as etcd holds them",
  usage: `Usage: trawl cluster status [--config FILE] [--json]

Reads the cluster of the configuration's \`cluster\` section from etcd: the live
members, how many partitions each owns and serves and the size of the shards it
serves, the partitions served by fewer nodes than \`cluster.replicas\` (with the
nodes that own them), the configured repositories no live node serves
(searches lack them), and the credential log: its commits since its last
snapshot, and that snapshot.

Options:
  --config FILE   configuration file (default: $TRAWL_CONFIG)
  --json          print the status as one JSON object
  -h, --help      show this help

Exit status: 0 when every partition is served, 1 when some is not, 2 for a
usage or configuration error or when etcd cannot be reached.`,

  async run(args) {
    let values: { config?: string; json?: boolean };
    let positionals: string[];
    try {
      ({ values, positionals } = parseArgs({ args, options: { config: { type: 'string' }, json: { type: 'boolean' } }, strict: true, allowPositionals: true }));
    } catch (error) {
      console.error(`trawl cluster: ${(error as Error).message}`);
      return 2;
    }
    if (positionals.join(' ') !== 'status') {
      console.error('trawl cluster: the one subcommand is `status` (trawl cluster --help)');
      return 2;
    }
    const config = configOrProblem(values.config);
    if (typeof config === 'string' || !config.cluster) {
      console.error(`trawl cluster: ${typeof config === 'string' ? config : 'the configuration has no `cluster` section'}`);
      return 2;
    }
    let status: ClusterStatus & { credentialLog: LogSummary };
    let etcd: EtcdKeys | undefined;
    try {
      etcd = await openEtcd(config.cluster);
      const repositories = [...config.repos, ...mirroredRepositories(config)];
      status = { ...(await clusterStatusIn(etcd, config.cluster, repositories)), credentialLog: await readLogSummary(etcd) };
    } catch (error) {
      console.error(`trawl cluster: cannot read the cluster from etcd at ${config.cluster.etcd.join(', ')}: ${(error as Error).message}`);
      return 2;
    } finally {
      etcd?.close();
    }
    console.log(values.json ? JSON.stringify(status) : formatStatus(status));
    return status.unserved.length > 0 ? 1 : 0;
  },
};

function formatStatus(status: ClusterStatus & { credentialLog: LogSummary }): string {
  const rows = [
    ['node', 'owns', 'serves', 'MB served', 'url'],
    ...status.members.map((member) => [member.node, String(member.owns), String(member.serves), (member.bytes / 1e6).toFixed(1), member.url]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = [
    `${status.members.length} live members, ${status.partitions} partitions, ${status.replicas} replicas each`,
    '',
    ...rows.map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    ),
    '',
  ];
  if (status.underReplicated.length === 0) lines.push('every partition is served by its replicas');
  for (const { partition, servedBy, owners } of status.underReplicated) {
    const owning = owners.length === 0 ? 'no live node owns it' : `owners: ${owners.join(', ')}`;
    lines.push(`partition ${partition}: served by ${servedBy.length === 0 ? 'no node' : servedBy.join(', ')} (${owning})`);
  }
  if (status.unserved.length > 0) lines.push(`repositories no live node serves: ${status.unserved.join(', ')}`);
  const { head, commits, snapshot } = status.credentialLog;
  const compacted = !snapshot
    ? 'and no snapshot'
    : 'damaged' in snapshot
      ? `and a damaged snapshot: ${snapshot.damaged}`
      : `after its snapshot through revision ${snapshot.through} (${(snapshot.bytes / 1e6).toFixed(1)} MB)`;
  lines.push(head === 0 ? 'credential log: not started' : `credential log: ${commits} commits, the last at revision ${head}, ${compacted}`);
  return lines.join('\n');
}
