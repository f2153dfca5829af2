#!/usr/bin/env node
/** The `trawl` command line: parses the command name and hands over. Wiring only. */
import { packageVersion } from './version.js';

export interface Command {
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

/** Each command's module, loaded only when it runs: `serve` starts its workers before the daemon's modules load. */
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve-command.js')).serveCommand,
  index: async () => (await import('./index-command.js')).indexCommand,
  search: async () => (await import('./search-command.js')).searchCommand,
  admin: async () => (await import('./admin-command.js')).adminCommand,
  cluster: async () => (await import('./cluster-command.js')).clusterCommand,
};

async function overview(): Promise<string> {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const summaries = await Promise.all(Object.entries(commands).map(async ([name, load]) => `  ${name.padEnd(width)}  ${(await load()).summary}`));
  return ['Usage: trawl <command> [options]', '', 'Commands:', ...summaries, '', 'Run `trawl <command> --help` for the options of a command.'].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(await overview());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    console.log(packageVersion());
    return 0;
  }
  const load = commands[name];
  if (!load) {
    console.error(`trawl: unknown command ${JSON.stringify(name)}\n\n${await overview()}`);
    return 2;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  return command.run(rest);
}

// A reader that stops early (`trawl search … | head`) closes the pipe: the output ends quietly, as ripgrep's does.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

// Everything trawl writes (shards hold private code, the state holds credentials) is its user's
// alone, under systemd (UMask=0077) or not.
process.umask(0o077);
process.exitCode = await main(process.argv.slice(2));
