#!/usr/bin/env node
/** The `trawl` command line: parses the command name and hands over. Wiring only. */
import { adminCommand } from './admin-command.js';
import { indexCommand } from './index-command.js';
import { searchCommand } from './search-command.js';
import { serveCommand } from './serve-command.js';
import { packageVersion } from './version.js';

export interface Command {
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

const commands: Record<string, Command> = { serve: serveCommand, index: indexCommand, search: searchCommand, admin: adminCommand };

function overview(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'Usage: trawl <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'Run `trawl <command> --help` for the options of a command.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(overview());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    console.log(packageVersion());
    return 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`trawl: unknown command ${JSON.stringify(name)}\n\n${overview()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  return command.run(rest);
}

// Everything trawl writes (shards hold private code, the state holds credentials) is its user's
// alone, under systemd (UMask=0077) or not.
process.umask(0o077);
process.exitCode = await main(process.argv.slice(2));
