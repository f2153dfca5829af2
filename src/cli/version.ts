import { readFileSync } from 'node:fs';

/** The version in package.json (found from src/ and from dist/src/). */
export function packageVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const parsed = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'trawl' && parsed.version) return parsed.version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}
