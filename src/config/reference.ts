/**
 * README's configuration reference, generated from the option table
 * (options.ts): `npm run docs:config` rewrites the block between
 * `<!-- config-reference:start -->` and `<!-- config-reference:end -->`, and
 * a test fails while the README's block differs from what this generates.
 */
import fs from 'node:fs';
import { OPTIONS, type OptionSpec } from './options.js';

const START = '<!-- config-reference:start -->';
const END = '<!-- config-reference:end -->';

function typeOf(spec: OptionSpec): string {
  switch (spec.kind) {
    case 'integer':
      return `integer ${spec.min.toLocaleString('en')}–${spec.max.toLocaleString('en')}`;
    case 'strings':
      return 'array of strings';
    case 'oneOf':
      return spec.values.map((value) => `\`${value}\``).join(', ');
    default:
      return spec.kind;
  }
}

function defaultOf(spec: OptionSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (spec.default === undefined || typeof spec.default === 'function') return 'none';
  return `\`${JSON.stringify(spec.default)}\``;
}

/** The reference as a Markdown table, one row per option. */
export function configReference(): string {
  const rows = Object.entries(OPTIONS).map(
    ([option, spec]: [string, OptionSpec]) => `| \`${option}\` | ${typeOf(spec)} | ${defaultOf(spec)} | ${spec.meaning} |`,
  );
  return ['| option | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The reference block as it belongs in README.md. */
export function referenceBlock(): string {
  return `${START}\n${configReference()}\n${END}`;
}

/** Replaces the reference block of the README at `file`; throws when it has no block. */
export function writeReadmeReference(file: string): void {
  const text = fs.readFileSync(file, 'utf8');
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from === -1 || to < from) throw new Error(`${file} has no ${START} … ${END} block`);
  fs.writeFileSync(file, text.slice(0, from) + referenceBlock() + text.slice(to + END.length));
}
