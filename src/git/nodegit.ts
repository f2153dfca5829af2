/**
 * nodegit, loaded on its first use: the front end serves searches without it,
 * and loading it costs a start more than a tenth of a second (docs/design.md,
 * "Start"). Types come from `import type NodeGit from 'nodegit'`.
 */
import { createRequire } from 'node:module';
import type NodeGit from 'nodegit';

const require = createRequire(import.meta.url);
let loaded: typeof NodeGit | undefined;

export function nodegit(): typeof NodeGit {
  loaded ??= require('nodegit') as typeof NodeGit;
  return loaded;
}
