/**
 * When a connection's repositories leave this node: one gone from its host is dropped, and in a cluster one this node
 * no longer holds loses its mirror here, each `sync.removeAfterHours` after it went (docs/connections.md, "A sync").
 */
import type { ConnectionRecord, MirroredRepository } from './sync-state.js';

const HOUR_MS = 3_600_000;

/**
 * The repositories of `record` due to leave this node, taken out of it (`gone`) or with their fetch forgotten
 * (`released`, only in a cluster: `holds` given); the caller removes their mirrors.
 */
export function departures(record: ConnectionRecord, holds: ((name: string) => boolean) | undefined, removeAfterHours: number, now = Date.now()) {
  return { gone: dropGone(record, removeAfterHours, now), released: holds ? releaseUnheld(record, holds, removeAfterHours, now) : [] };
}

/** Takes the repositories gone from the host for `removeAfterHours` out of `record`; returns them. */
function dropGone(record: ConnectionRecord, removeAfterHours: number, now: number): MirroredRepository[] {
  const cutoff = now - removeAfterHours * HOUR_MS;
  const dropped = new Set(record.repos.filter((repo) => repo.goneSince !== undefined && Date.parse(repo.goneSince) <= cutoff));
  if (dropped.size > 0) record.repos = record.repos.filter((repo) => !dropped.has(repo));
  return [...dropped];
}

/**
 * Notes since when each fetched repository has not been held (`holds`), and forgets the fetch of those not held for
 * `removeAfterHours` (they stay listed: other nodes hold them); returns those, whose mirrors go.
 */
function releaseUnheld(record: ConnectionRecord, holds: (name: string) => boolean, removeAfterHours: number, now: number): MirroredRepository[] {
  const cutoff = now - removeAfterHours * HOUR_MS;
  const released: MirroredRepository[] = [];
  for (const repo of record.repos) {
    if (repo.fetchedAt === undefined || holds(repo.name)) {
      delete repo.releasedSince;
      continue;
    }
    repo.releasedSince ??= new Date(now).toISOString();
    if (Date.parse(repo.releasedSince) > cutoff) continue;
    delete repo.fetchedAt;
    delete repo.releasedSince;
    delete repo.error;
    released.push(repo);
  }
  return released;
}
