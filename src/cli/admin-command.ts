import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { passwordProblem } from '../auth/password.js';
import { RepairRefusedError, stateRepairFollowUp, type RepairChoice } from '../auth/repair-policy.js';
import { AUDIT_LOG_NAME, repairLog, StateLogLockedError, StateLogWriteError } from '../auth/state-log.js';
import { stateDirectory } from '../auth/store.js';
import { createCommandLogger } from '../obs/logger.js';
import { AdminError, offlineAdmin, onlineAdmin, type AdminBackend, type KeyView, type LicenseView, type UserView } from './admin-backend.js';
import { configOrProblem } from './config-option.js';
import type { Command } from './main.js';

const USAGE = `Usage: trawl admin [--url URL --key KEY | --config FILE] <action>

Manages users, API keys, repository grants, anonymous access and the
license. With --url (or $TRAWL_URL) it talks to a running daemon with an
owner's API key (--key or $TRAWL_API_KEY); otherwise it works on the data
directory of the configuration directly, which it cannot while a daemon
holds it (stop the daemon, or use --url).

Actions:
  init --email EMAIL [--name NAME] [--password-stdin]
                                       first owner and their API key (offline, once);
                                       with a password (read from stdin) they can sign in
  users list
  users add --email EMAIL [--name NAME] [--role member|owner] [--password-stdin]
  users remove USER_ID                 revokes their keys and tokens
  keys list [--user USER_ID|*]
  keys create --name NAME [--user USER_ID]
  keys delete KEY_ID
  grant USER_ID REPO                   let a member see a repository that is not public
  revoke USER_ID REPO
  anonymous on|off                     anonymous reads (overrides auth.anonymousAccess)
  license install KEY
  license show
  state repair [--end-credentials | --accept-risk]
                                       keep every intact record of a damaged state or audit
                                       log, after copying it whole (offline; the daemon
                                       refuses to start on such a log). It says what each
                                       dropped record still shows, and refuses when one could
                                       have ended access (a removal, revocation, role or
                                       password change) unless told to end every credential
                                       it could have concerned, or to accept that risk

Options:
  --url URL       a running daemon (default: $TRAWL_URL)
  --key KEY       an owner's API key for --url (default: $TRAWL_API_KEY)
  --config FILE   configuration file, for offline use (default: $TRAWL_CONFIG)
  -h, --help      show this help

Secrets (API keys) are printed once, when created. Exit status 0 on
success, 1 when the action failed, 2 for a usage error.`;

class UsageError extends Error {}

/** Actions that change nothing. */
const READS = new Set(['users list', 'keys list', 'license show']);

export const adminCommand: Command = {
  summary: 'manage users, API keys, grants, anonymous access and the license',
  usage: USAGE,
  async run(args) {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        options: {
          url: { type: 'string' },
          key: { type: 'string' },
          config: { type: 'string' },
          email: { type: 'string' },
          name: { type: 'string' },
          role: { type: 'string' },
          user: { type: 'string' },
          'password-stdin': { type: 'boolean' },
          'end-credentials': { type: 'boolean' },
          'accept-risk': { type: 'boolean' },
        },
        strict: true,
        allowPositionals: true,
      });
    } catch (error) {
      console.error(`trawl admin: ${(error as Error).message}`);
      return 2;
    }
    const { values, positionals } = parsed;
    const url = values.url ?? process.env.TRAWL_URL;
    if (positionals.join(' ') === 'state repair') return repairState(values.config, url, values);
    let backend: AdminBackend;
    try {
      if (url !== undefined) {
        const key = values.key ?? process.env.TRAWL_API_KEY;
        if (!key) throw new UsageError('--url needs an owner API key: --key KEY or $TRAWL_API_KEY');
        if (positionals[0] === 'init') throw new UsageError('init works offline only: run it on the server with --config, before the daemon starts');
        backend = onlineAdmin(url, key);
      } else {
        const config = configOrProblem(values.config);
        if (typeof config === 'string') throw new UsageError(config);
        // A read needs no state directory: one that does not exist yet is not made by looking.
        if (READS.has(positionals.join(' ')) && !fs.existsSync(stateDirectory(config.dataDir))) {
          console.log(`${config.dataDir} has no users yet: \`trawl admin init\` makes the first owner`);
          return 0;
        }
        backend = await offlineAdmin(config, createCommandLogger('trawl admin'));
      }
    } catch (error) {
      return failure(error);
    }
    try {
      await perform(backend, positionals, values);
      return 0;
    } catch (error) {
      return failure(error);
    } finally {
      await backend.close();
    }
  },
};

/** `state repair`: offline, before anything opens (and refuses) the damaged logs. */
async function repairState(
  configPath: string | undefined,
  url: string | undefined,
  values: { config?: string; 'end-credentials'?: boolean; 'accept-risk'?: boolean },
): Promise<number> {
  try {
    if (url !== undefined) throw new UsageError('state repair works offline only: stop the daemon and run it with --config');
    if (values['end-credentials'] && values['accept-risk']) throw new UsageError('--end-credentials and --accept-risk exclude each other');
    const choice: RepairChoice = values['end-credentials'] ? 'end-credentials' : values['accept-risk'] ? 'accept-risk' : 'refuse';
    const config = configOrProblem(configPath);
    if (typeof config === 'string') throw new UsageError(config);
    const directory = stateDirectory(config.dataDir);
    for (const name of ['state', AUDIT_LOG_NAME]) {
      const report: string[] = [];
      try {
        const { copy, kept, appended, dropped } = await repairLog(
          directory,
          name,
          name === 'state' ? stateRepairFollowUp(choice, Date.now(), report) : undefined,
        );
        if (!copy) {
          console.log(`${name}.log: intact (${kept} records)`);
          continue;
        }
        const bytes = dropped.reduce((sum, range) => sum + range.to - range.from, 0);
        console.log(
          `${name}.log: kept ${kept} intact records, dropped ${bytes} damaged bytes (${dropped.map((range) => `${range.from}-${range.to}`).join(', ')})${appended > 0 ? `, appended ${appended} records ending credentials` : ''}; the whole file as it was is in ${copy}`,
        );
      } finally {
        for (const line of report) console.log(`  ${name}.log: ${line}`);
      }
    }
    return 0;
  } catch (error) {
    return failure(error);
  }
}

function failure(error: unknown): number {
  if (error instanceof UsageError) {
    console.error(`trawl admin: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (error instanceof AdminError || error instanceof StateLogLockedError || error instanceof StateLogWriteError || error instanceof RepairRefusedError) {
    console.error(`trawl admin: ${error.message}`);
    return 1;
  }
  throw error;
}

type Values = { email?: string; name?: string; role?: string; user?: string; 'password-stdin'?: boolean };

async function perform(backend: AdminBackend, positionals: string[], values: Values): Promise<void> {
  const [area, action, ...rest] = positionals;
  const needs = (count: number, what: string) => {
    if (rest.length !== count) throw new UsageError(`${area} ${action} takes ${what}`);
  };
  switch (`${area} ${action ?? ''}`.trim()) {
    case 'init':
      return init(backend, values);
    case 'users list':
      return printUsers(await backend.listUsers());
    case 'users add':
      return printUsers([await backend.addUser(await userFields(values, 'member'))]);
    case 'users remove':
      needs(1, 'USER_ID');
      console.log(await backend.removeUser(rest[0]!));
      return;
    case 'keys list':
      return printKeys(await backend.listKeys(values.user));
    case 'keys create': {
      if (!values.name) throw new UsageError('keys create needs --name NAME');
      const created = await backend.createKey(values.name, values.user);
      printKeys([created]);
      console.log(`\nAPI key (shown once, keep it secret):\n${created.key}`);
      return;
    }
    case 'keys delete':
      needs(1, 'KEY_ID');
      await backend.deleteKey(rest[0]!);
      console.log(`deleted ${rest[0]}`);
      return;
    case 'license install':
      needs(1, 'the license KEY');
      return printLicense(await backend.installLicense(rest[0]!));
    case 'license show':
      return printLicense(await backend.showLicense());
  }
  if (area === 'grant' || area === 'revoke') {
    if (positionals.length !== 3) throw new UsageError(`${area} takes USER_ID REPO`);
    await backend.setGrant(positionals[1]!, positionals[2]!, area === 'grant');
    console.log(`${area === 'grant' ? 'granted' : 'revoked'} ${positionals[2]} ${area === 'grant' ? 'to' : 'from'} ${positionals[1]}`);
    return;
  }
  if (area === 'anonymous' && (action === 'on' || action === 'off') && rest.length === 0) {
    await backend.setAnonymousAccess(action === 'on');
    console.log(`anonymous reads are ${action}`);
    return;
  }
  throw new UsageError(positionals.length === 0 ? 'which action?' : `unknown action ${JSON.stringify(positionals.join(' '))}`);
}

async function userFields(values: Values, defaultRole: 'owner' | 'member') {
  if (!values.email) throw new UsageError('needs --email EMAIL');
  const role = values.role ?? defaultRole;
  if (role !== 'owner' && role !== 'member') throw new UsageError('--role is member or owner');
  const password = values['password-stdin'] ? await passwordFromStdin() : undefined;
  return { email: values.email, name: values.name ?? values.email.split('@')[0]!, role, ...(password === undefined ? {} : { password }) } as const;
}

/** A password piped in (as `docker login --password-stdin` reads one): its first line, never an argument (argv is visible to every user). */
async function passwordFromStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > 64 << 10) break;
  }
  const password = text.split(/\r?\n/)[0] ?? '';
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`--password-stdin: ${problem}`);
  return password;
}

/** The first owner and their API key, on an instance without users. */
async function init(backend: AdminBackend, values: Values): Promise<void> {
  if ((await backend.listUsers()).length > 0) throw new AdminError('this instance already has users; add more with `trawl admin users add`');
  const owner = await backend.addUser(await userFields(values, 'owner'));
  const { key } = await backend.createKey('created by trawl admin init', owner.id);
  printUsers([owner]);
  console.log(`\nAPI key of ${owner.email} (shown once, keep it secret):\n${key}`);
}

function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    );
}

function printUsers(users: UserView[]): void {
  table([['ID', 'ROLE', 'EMAIL', 'NAME', 'CREATED'], ...users.map((user) => [user.id, user.role.toLowerCase(), user.email, user.name, user.createdAt])]);
}

function printKeys(keys: KeyView[]): void {
  table([['ID', 'USER', 'NAME', 'CREATED'], ...keys.map((key) => [key.id, key.userId, key.name, key.createdAt])]);
}

function printLicense(license: LicenseView): void {
  if (!license.installed) {
    console.log(`no license installed (${license.seatsUsed} of 1 seat in use)`);
    return;
  }
  console.log(
    `licensee: ${license.licensee}\nseats: ${license.seatsUsed} of ${license.seats} in use\nexpires: ${license.expiresAt}\nstatus: ${license.active ? 'active' : 'EXPIRED'}`,
  );
}
