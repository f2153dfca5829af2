/**
 * What the syncer knows of each connection across restarts, in `state/connections.json` (written atomically):
 * its stable numeric id, its last sync, and each repository's host id, mirror, last fetch and error, and
 * since when it has been gone from the host. A file that does not read is an error, never replaced: the
 * ids are what `GET /api/repos?connectionId=` names.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../index/atomic-file.js';
import { stateDirectory } from '../index/data-directory.js';

const FILE = 'connections.json';
const VERSION = 1;
/** Connection ids start here: below are the code host types of configured repositories (one "connection" each). */
export const FIRST_CONNECTION_ID = 100;

export interface MirroredRepository {
  /** The trawl name, `host/owner/name`. */
  name: string;
  /** The host's name, `owner/name`. */
  path: string;
  hostId?: string;
  cloneUrl: string;
  webUrl?: string;
  archived: boolean;
  fork: boolean;
  /** The mirror's directory name under `mirrors/{connection}/`. */
  mirror: string;
  /** When a fetch last completed; absent until the first one does (the repository is not indexed before). */
  fetchedAt?: string;
  /** Why the last fetch failed; absent after a good one. */
  error?: string;
  /** When the host stopped listing it; it is dropped `sync.removeAfterHours` later. */
  goneSince?: string;
  /** In a cluster: since when this node has not held it, while it has a mirror here; the mirror goes `sync.removeAfterHours` later. */
  releasedSince?: string;
  /** Its former trawl name, until the index has moved its id to the new one. */
  renamedFrom?: string;
}

export interface ConnectionRecord {
  id: number;
  lastSyncedAt?: string;
  /** Why the last sync's listing failed; absent after a good one. */
  error?: string;
  warnings: string[];
  repos: MirroredRepository[];
}

interface StateFile {
  version: number;
  nextId: number;
  connections: Record<string, ConnectionRecord>;
}

export class SyncState {
  private constructor(
    private readonly file: string,
    private readonly state: StateFile,
  ) {}

  static open(dataDir: string): SyncState {
    const file = path.join(stateDirectory(dataDir), FILE);
    let text: string | null = null;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text === null) return new SyncState(file, { version: VERSION, nextId: FIRST_CONNECTION_ID, connections: {} });
    let state: StateFile;
    try {
      state = JSON.parse(text) as StateFile;
    } catch {
      throw new Error(`${file} is not valid JSON: restore it from the state backup, or remove it to sync every connection afresh (connection ids change)`);
    }
    if (state?.version !== VERSION || !Number.isSafeInteger(state.nextId) || typeof state.connections !== 'object' || state.connections === null) {
      throw new Error(`${file} is not a version ${VERSION} connection state file: restore it from the state backup`);
    }
    return new SyncState(file, state);
  }

  /** The record of connection `name`, made (with the next id) if it has none. */
  record(name: string): ConnectionRecord {
    const known = this.state.connections[name];
    if (known) return known;
    const made: ConnectionRecord = { id: this.state.nextId++, warnings: [], repos: [] };
    this.state.connections[name] = made;
    return made;
  }

  /**
   * Empties the records of connections no longer configured and returns the repositories they held (their
   * mirrors to remove); a record keeps its id, so a connection configured again gets it back.
   */
  forgetAllBut(names: ReadonlySet<string>): { connection: string; repos: MirroredRepository[] }[] {
    const forgotten: { connection: string; repos: MirroredRepository[] }[] = [];
    for (const [name, record] of Object.entries(this.state.connections)) {
      if (names.has(name) || record.repos.length === 0) continue;
      forgotten.push({ connection: name, repos: record.repos });
      record.repos = [];
    }
    return forgotten;
  }

  save(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(this.file, `${JSON.stringify(this.state, null, 2)}\n`);
  }
}
