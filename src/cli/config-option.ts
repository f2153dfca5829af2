/** The `--config FILE` option the commands share. */
import { parseArgs } from 'node:util';
import { ConfigError, type Config } from '../config/config.js';
import { resolveConfig } from '../config/load.js';

/** The configuration of --config, $TRAWL_CONFIG or the zero-config default; a ConfigError's message instead of throwing it. */
export function configOrProblem(file: string | undefined): Config | string {
  try {
    return resolveConfig(file);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

/**
 * For commands whose only option is --config: the configuration and the file
 * it came from (undefined for the zero-config default); or null after
 * printing the problem as `trawl <command>: …` (exit status 2).
 */
export function configFromArgs(command: string, args: string[]): { config: Config; file: string | undefined } | null {
  let file: string | undefined;
  try {
    file = parseArgs({ args, options: { config: { type: 'string' } }, strict: true, allowPositionals: false }).values.config;
  } catch (error) {
    console.error(`trawl ${command}: ${(error as Error).message}`);
    return null;
  }
  const config = configOrProblem(file);
  if (typeof config === 'string') {
    console.error(`trawl ${command}: ${config}`);
    return null;
  }
  return { config, file: file ?? (process.env.TRAWL_CONFIG || undefined) };
}
