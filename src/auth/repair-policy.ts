/**
 * What a repair of the state log does about the records it must drop (docs/state-log.md, "Repair"): it says
 * what each damaged range still shows (record types, ids), and fails closed. A dropped record that could have
 * ended access (a removal, a revocation, a role change, a password change, ended sessions…) would bring that
 * access back, so such a repair is refused unless the operator chose: end every credential the dropped records
 * could have concerned, or accept the risk by name.
 */
import { AuthState } from './auth-state.js';
import { authRecord, type AuthRecord } from './model.js';
import { UNUSABLE_HASH } from './password.js';
import { framesIn, legibleIn, type StateRecord } from './state-record.js';

/** Record types whose loss could give back access that had been ended. */
const ACCESS_ENDING_TYPES: ReadonlySet<string> = new Set([
  'user.removed',
  'user.role',
  'user.password',
  'user.identity',
  'apikey.deleted',
  'token.revoked',
  'grant.removed',
  'session.ended',
  'oauth.grant.revoked',
  'settings.anonymousAccess',
]);
/** Every record type of the state log: the words of damaged bytes that name one. */
const KNOWN_TYPES: ReadonlySet<string> = new Set([
  ...ACCESS_ENDING_TYPES,
  'user.added',
  'apikey.created',
  'token.created',
  'grant.added',
  'session.created',
  'session.seen',
  'oauth.client.registered',
  'oauth.grant.issued',
  'license.installed',
]);

/** What the operator chose for dropped records that could have ended access. */
export type RepairChoice = 'refuse' | 'end-credentials' | 'accept-risk';

export class RepairRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepairRefusedError';
  }
}

/** One dropped record as far as it can be read, or damaged bytes whose records cannot be told apart. */
interface DroppedRecord {
  types: string[];
  ids: string[];
  /** Framed as one record whose type is legible: what it could have concerned is its ids. */
  whole: boolean;
}

/** Could have ended access: an access-ending type is legible, or it is not whole. */
const risky = (record: DroppedRecord) => !record.whole || record.types.some((type) => ACCESS_ENDING_TYPES.has(type));

/** A repair's follow-up for the state log under `choice`; `report` collects one line per dropped record and per action taken. */
export function stateRepairFollowUp(choice: RepairChoice, now: number, report: string[]): (kept: StateRecord[], dropped: Buffer[]) => StateRecord[] {
  return (kept, dropped) => {
    const records = dropped.flatMap(droppedRecords);
    records.forEach((record, i) => {
      const what = record.types.length > 0 ? `${record.types.join(', ')}${record.whole ? '' : ' among unreadable bytes'}` : 'type unreadable';
      report.push(
        `dropped record ${i + 1}: ${what}${record.ids.length > 0 ? ` (ids ${record.ids.join(', ')})` : ''}${risky(record) ? ': could have ended access' : ''}`,
      );
    });
    const dangerous = records.filter(risky);
    if (dangerous.length === 0 || choice === 'accept-risk') return [];
    if (choice === 'refuse') {
      throw new RepairRefusedError(
        `refused: ${dangerous.length} of the damaged records could have ended access (a removal, revocation, role or password change, ended session), which dropping them would give back; nothing was written. ` +
          'Run again with --end-credentials to end every credential they could have concerned (their users’ keys, tokens, sessions, OAuth grants and passwords; everyone’s when one is unreadable or names no one still known), ' +
          'or with --accept-risk to keep only what the intact records say',
      );
    }
    return endingRecords(kept, dangerous, now, report);
  };
}

function droppedRecords(bytes: Buffer): DroppedRecord[] {
  const read = (part: Buffer, framed: boolean): DroppedRecord => {
    const { words, ids } = legibleIn(part);
    const types = [...words].filter((word) => KNOWN_TYPES.has(word));
    return { types, ids: [...ids], whole: framed && types.length === 1 };
  };
  const frames = framesIn(bytes);
  return frames ? frames.map((frame) => read(frame, true)) : [read(bytes, false)];
}

/** Records that end what the `dangerous` dropped records could have ended, over the state the kept records build. */
function endingRecords(kept: StateRecord[], dangerous: DroppedRecord[], now: number, report: string[]): StateRecord[] {
  const state = new AuthState();
  for (const record of kept) state.apply(record);
  const named = (id: string) => state.users.has(id) || state.apiKeys.has(id) || state.tokens.has(id) || state.sessions.has(id) || state.oauthGrants.has(id);
  // A record that cannot be read whole, or names no one still known, could have concerned anyone.
  const everyone = dangerous.some((record) => !record.whole || record.ids.length === 0 || !record.ids.every(named));
  const ids = new Set(dangerous.flatMap((record) => record.ids));
  const users = new Set([...state.users.keys()].filter((id) => everyone || ids.has(id)));
  // A removal read whole is done again: it ends everything of its user's in one record.
  const removed = new Set(everyone ? [] : dangerous.filter((record) => record.types.includes('user.removed')).flatMap((record) => record.ids));
  const records: AuthRecord[] = [];
  for (const userId of users) {
    if (removed.has(userId)) records.push({ type: 'user.removed', userId });
    else if (state.passwords.has(userId)) records.push({ type: 'user.password', userId, hash: UNUSABLE_HASH });
  }
  const concerned = (userId: string, id: string) => !removed.has(userId) && (users.has(userId) || ids.has(id));
  for (const key of state.apiKeys.values()) if (concerned(key.userId, key.id)) records.push({ type: 'apikey.deleted', keyId: key.id });
  for (const token of state.tokens.values())
    if (token.revokedAt === undefined && concerned(token.userId, token.id)) records.push({ type: 'token.revoked', tokenId: token.id });
  for (const session of state.sessions.values()) if (concerned(session.userId, session.id)) records.push({ type: 'session.ended', sessionId: session.id });
  for (const grant of state.oauthGrants.values())
    if (grant.revokedAt === undefined && concerned(grant.userId, grant.id)) records.push({ type: 'oauth.grant.revoked', grantId: grant.id });
  if (dangerous.some((record) => !record.whole || record.types.includes('settings.anonymousAccess')) && state.anonymousAccess !== false)
    records.push({ type: 'settings.anonymousAccess', enabled: false });
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.type, (counts.get(record.type) ?? 0) + 1);
  report.push(
    `ended, for ${everyone ? 'every user (a dropped record is unreadable or names no one still known)' : `${users.size} user(s) and the ids named`}: ${[...counts].map(([type, count]) => `${count} × ${type}`).join(', ') || 'nothing was live'}`,
  );
  return records.map((record) => authRecord(record, now));
}
