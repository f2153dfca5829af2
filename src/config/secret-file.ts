/** Secrets the configuration names by file (a client secret, the cluster key): read once, refused unless only their owner can read them. */
import fs from 'node:fs';

/** The first line of `file`, trimmed; throws when others may read the file or the line is empty. `option` names it in messages. */
export function readSecretFile(file: string, option: string): string {
  const stats = fs.statSync(file);
  if ((stats.mode & 0o077) !== 0) throw new Error(`${file} (${option}) must be readable by its owner only (chmod 600 ${file})`);
  const secret = fs.readFileSync(file, 'utf8').split(/\r?\n/)[0]!.trim();
  if (secret === '') throw new Error(`${file} (${option}) is empty`);
  return secret;
}
