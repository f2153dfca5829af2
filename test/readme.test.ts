/**
 * README's "Every endpoint, by example" as a newcomer runs it: each line, as printed, through bash, against
 * the daemon serving this repository under the zero-config name (`local/` and the checkout's directory name),
 * from the checkout's directory. Every request must succeed, and every search must find something.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDaemon } from './helpers/daemon.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The lines of the first sh block after `heading` in README.md. */
function exampleLines(heading: string): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block.split('\n').filter((line) => line.trim() !== '');
}

t.test("README's endpoint examples work as printed against this repository", async (t) => {
  const [definitions, ...commands] = exampleLines('### Every endpoint, by example');
  t.match(definitions, /^B=http:\/\/127\.0\.0\.1:6070; /, 'the block opens with its variables');
  t.ok(commands.length >= 15, `${commands.length} examples`);
  const name = `local/${path.basename(ROOT)}`;
  const daemon = await startDaemon(t, { repos: [{ name, path: ROOT, public: true }], auth: { anonymousAccess: true } });
  const variables = definitions!.replace('http://127.0.0.1:6070', daemon.url);
  for (const command of commands) {
    // As printed, but failing on an HTTP error: curl exits 22 with the error body then.
    const strict = command.replaceAll(/\bcurl -s/g, 'curl --fail-with-body -s');
    let output: string;
    try {
      output = execFileSync('bash', ['-c', `${variables}\n${strict}`], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
    } catch (error) {
      t.fail(`${command}\n${(error as { stdout?: string }).stdout ?? ''}`);
      continue;
    }
    t.ok(output.length > 0, `answered: ${command.slice(0, 90)}`);
    if (/api\/(search|find_references|find_definitions)\b/.test(command)) {
      t.ok((JSON.parse(output) as { files: unknown[] }).files.length > 0, `and found something: ${command.slice(0, 90)}`);
    }
    if (command.includes('api/stream_search')) t.match(output, /"type":"chunk","files":\[\{/, 'the stream found something');
  }
});
