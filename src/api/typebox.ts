/**
 * TypeBox's run-time values, as trawl loads them: the build bundles this module into one file (package.json
 * `build:typebox`), because the package's 249 ES modules took a tenth of a second of every start (docs/design.md,
 * "Start"). Types come from the package itself (`import type`), which loads nothing.
 */
export { Type } from '@sinclair/typebox';
export { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
export { Value } from '@sinclair/typebox/value';
