/** A connection's token, from the environment variable or the file the configuration names. */
import fs from 'node:fs';
import type { ConnectionConfig, SecretSource } from '../config/connections.js';
import { ConnectionError } from './errors.js';

/** The connection's token, read at each sync (a rotated token is picked up without a restart). */
export function readToken(connection: ConnectionConfig): string | undefined {
  const source: SecretSource | undefined = connection.token;
  if (!source) return undefined;
  if ('env' in source) {
    const value = process.env[source.env];
    if (!value) throw new ConnectionError(`the token's environment variable ${source.env} is not set`);
    return value.trim();
  }
  let stats: fs.Stats;
  try {
    stats = fs.statSync(source.file);
  } catch (error) {
    throw new ConnectionError(`the token file ${source.file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if ((stats.mode & 0o077) !== 0) throw new ConnectionError(`the token file ${source.file} may be read by others (chmod 600 it)`);
  const value = fs.readFileSync(source.file, 'utf8').trim();
  if (!value) throw new ConnectionError(`the token file ${source.file} is empty`);
  return value;
}
