import t from 'tap';
import RE2 from 're2';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { native } from '../../native/index.js';
import { escapeRegExp } from '../../src/query/escape.js';

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-native-'));

t.test('the addon keeps its RE2 to itself: no RE2 or Abseil symbol for another copy in the process to bind to', async (t) => {
  // node-re2 carries its own RE2. Symbols exported (or GNU-unique) by both copies are bound process-wide to the
  // copy loaded first, which made this addon's regexes twice as slow whenever node-re2 was loaded before it.
  const addon = fileURLToPath(new URL('../../native/build/Release/trawl_native.node', import.meta.url));
  const symbols = execFileSync('nm', ['-D', '--defined-only', '-C', addon], { encoding: 'utf8' }).trim().split('\n');
  t.ok(
    symbols.some((line) => line.endsWith(' napi_register_module_v1')),
    'the N-API entry point is exported',
  );
  t.same(
    symbols.filter((line) => /\b(re2|absl)::/.test(line)),
    [],
    'no RE2 or Abseil symbol is exported',
  );
  t.same(
    symbols.filter((line) => / u /.test(line)),
    [],
    'no GNU-unique symbol',
  );
});

t.test('mmapFile maps exactly the bytes of the file', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'data.bin');
  const bytes = randomBytes(3 * 4096 + 123);
  fs.writeFileSync(file, bytes);
  const mapped = native.mmapFile(file).bytes;
  t.equal(mapped.length, bytes.length);
  t.ok(mapped.equals(bytes), 'mapped bytes equal the file');
  native.madvise(mapped, 'random');
  native.madvise(mapped, 'willneed');
  t.throws(() => native.madvise(mapped, 'sometimes' as never), /unknown advice 'sometimes'/);

  fs.writeFileSync(path.join(dir, 'empty'), '');
  t.same(native.mmapFile(path.join(dir, 'empty')), { bytes: Buffer.alloc(0), faultSlot: 0 }, 'an empty file maps to an empty buffer that never faults');
  t.throws(() => native.mmapFile(path.join(dir, 'missing')), { code: 'ENOENT', syscall: 'open' });
  t.throws(() => native.mmapFile(42 as never), TypeError);
});

t.test('several worker threads map the same file at once', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'shared.bin');
  const bytes = randomBytes(1 << 20);
  fs.writeFileSync(file, bytes);
  const expected = (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
  // Workers load the compiled addon itself: what is under test is its thread safety, not the TS loader.
  const addon = fileURLToPath(new URL('../../native/build/Release/trawl_native.node', import.meta.url));
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const native = require(workerData.addon);
    const digests = [];
    for (let i = 0; i < 20; i++) {
      const mapped = native.mmapFile(workerData.file).bytes;
      digests.push(require('node:crypto').createHash('sha256').update(mapped).digest('hex'));
    }
    parentPort.postMessage(digests);`;
  const results = await Promise.all(
    Array.from({ length: 4 }, () => {
      const worker = new Worker(source, { eval: true, workerData: { file, addon } });
      t.teardown(() => worker.terminate());
      return new Promise<unknown>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    }),
  );
  for (const digests of results) t.same(digests, Array(20).fill(expected), 'every mapping in every worker sees the file');
});

t.test('threads mapping one file share one mapping, unmapped after the last buffer; a file renamed over it is mapped anew', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'shard.bin');
  fs.writeFileSync(file, Buffer.alloc(3 * 4096, 1));
  const mappingsOf = (name: string) =>
    fs
      .readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(name)).length;
  const addon = fileURLToPath(new URL('../../native/build/Release/trawl_native.node', import.meta.url));
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const native = require(workerData.addon);
    const mapped = native.mmapFile(workerData.file);
    parentPort.postMessage({ first: mapped.bytes[0], slot: mapped.faultSlot });
    parentPort.once('message', () => parentPort.postMessage(mapped.bytes[4096]));`;
  const here = native.mmapFile(file);
  const workers = Array.from({ length: 3 }, () => {
    const worker = new Worker(source, { eval: true, workerData: { file, addon } });
    t.teardown(() => worker.terminate());
    return worker;
  });
  const answers = await Promise.all(workers.map((worker) => new Promise((resolve, reject) => (worker.once('message', resolve), worker.once('error', reject)))));
  t.same(answers, Array(3).fill({ first: 1, slot: here.faultSlot }), 'every thread reads the file through the same guarded mapping');
  t.equal(mappingsOf('/shard.bin'), 1, 'one mapping in the process, not one per thread');
  const replacement = path.join(dir, 'shard.bin.tmp');
  fs.writeFileSync(replacement, Buffer.alloc(4096, 2));
  fs.renameSync(replacement, file);
  const renewed = native.mmapFile(file);
  t.same(
    [renewed.bytes.length, renewed.bytes[0], here.bytes[0]],
    [4096, 2, 1],
    'a new file at the path is mapped anew; the old mapping still reads the old file',
  );
  t.not(renewed.faultSlot, here.faultSlot);
  const stillRead = await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.once('message', resolve), worker.postMessage('read')))));
  t.same(stillRead, [1, 1, 1], "the workers' buffers still read the old file");
  await Promise.all(workers.map((worker) => worker.terminate()));
  t.equal(mappingsOf('/shard.bin (deleted)'), 1, "the old file stays mapped while this thread's buffer lives");
  // Collected in a process of its own, with gc exposed: every buffer gone, no mapping is left.
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '-e',
      `
    const { Worker } = require('node:worker_threads');
    const native = require(${JSON.stringify(addon)});
    const file = ${JSON.stringify(file)};
    const count = () => require('node:fs').readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('/shard.bin')).length;
    (async () => {
      let mapped = native.mmapFile(file).bytes;
      const worker = new Worker(\`const n = require(${JSON.stringify(addon)}); n.mmapFile(${JSON.stringify(file)}); require('node:worker_threads').parentPort.postMessage(1);\`, { eval: true });
      await new Promise((resolve) => worker.once('message', resolve));
      const whileMapped = count();
      await worker.terminate();
      mapped = null;
      for (let i = 0; i < 10 && count() > 0; i++) { global.gc(); await new Promise((r) => setTimeout(r, 20)); }
      console.log(JSON.stringify([whileMapped, count()]));
    })();`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  await new Promise((resolve) => child.once('exit', resolve));
  t.same(JSON.parse(output), [1, 0], 'two threads, one mapping; none once every buffer is collected');
});

t.test('a file truncated under its mapping reads as zeros past its end and flags the mapping, in every thread', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const addon = fileURLToPath(new URL('../../native/build/Release/trawl_native.node', import.meta.url));
  // Without the guard the read past the new end raises SIGBUS and the whole process dies.
  const source = `
    const fs = require('node:fs');
    const { workerData, parentPort } = require('node:worker_threads');
    const native = require(workerData.addon);
    fs.writeFileSync(workerData.file, Buffer.alloc(5 * 4096, 7));
    const { bytes, faultSlot } = native.mmapFile(workerData.file);
    const before = [bytes[3 * 4096], native.mappingFaults[faultSlot]];
    fs.truncateSync(workerData.file, 4096 + 10);
    const after = [bytes[5], bytes[4096 + 5], bytes[3 * 4096], bytes[5 * 4096 - 1], native.mappingFaults[faultSlot]];
    const other = native.mmapFile(workerData.file + '.other');
    parentPort.postMessage({ before, after, otherFaulted: native.mappingFaults[other.faultSlot], distinct: other.faultSlot !== faultSlot });`;
  fs.writeFileSync(path.join(dir, 'f.other'), 'x');
  const run = (file: string) => {
    fs.copyFileSync(path.join(dir, 'f.other'), `${file}.other`);
    const worker = new Worker(source, { eval: true, workerData: { file, addon } });
    t.teardown(() => worker.terminate());
    return new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  };
  const results = await Promise.all([run(path.join(dir, 'a')), run(path.join(dir, 'b'))]);
  for (const result of results) {
    t.same(
      result,
      { before: [7, 0], after: [7, 7, 0, 0, 1], otherFaulted: 0, distinct: true },
      'bytes before the fault kept, zeros from it on, only its slot flagged',
    );
  }
});

t.test('a SIGBUS outside every guarded mapping still takes its default action', async (t) => {
  const loader = new URL('../../native/index.ts', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(loader)}); process.kill(process.pid, 'SIGBUS'); setTimeout(() => {}, 5000);`,
    ],
    { stdio: 'ignore' },
  );
  const signal = await new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  t.equal(signal, 'SIGBUS');
});

t.test('a second process cannot take a held flock', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const lockFile = path.join(dir, 'lock');
  const fd = fs.openSync(lockFile, 'a');
  t.teardown(() => fs.closeSync(fd));
  t.equal(native.tryLockExclusive(fd), true, 'first lock is taken');
  const loader = new URL('../../native/index.ts', import.meta.url).href;
  const childResult = async () => {
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        '--input-type=module',
        '-e',
        `const { native } = await import(${JSON.stringify(loader)}); const fs = await import('node:fs'); console.log(native.tryLockExclusive(fs.openSync(${JSON.stringify(lockFile)}, 'a')));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    await new Promise((resolve) => child.on('exit', resolve));
    return out.trim();
  };
  t.equal(await childResult(), 'false', 'the other process is refused while the lock is held');
  fs.closeSync(fs.openSync(lockFile, 'a')); // unrelated descriptors do not release it
  t.equal(await childResult(), 'false');
  t.throws(() => native.tryLockExclusive(999999), { name: 'Error', syscall: 'flock' });
});

t.test('a released flock can be taken by another process', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const lockFile = path.join(dir, 'lock');
  const fd = fs.openSync(lockFile, 'a');
  t.equal(native.tryLockExclusive(fd), true);
  fs.closeSync(fd);
  const again = fs.openSync(lockFile, 'a');
  t.teardown(() => fs.closeSync(again));
  t.equal(native.tryLockExclusive(again), true, 'closing the descriptor released the lock');
});

/** Binds a unix datagram socket with python3 (always present: node-gyp needs it) and returns the first message. */
function receiveDatagram(address: string): { ready: Promise<void>; message: Promise<string>; stop(): void } {
  const script = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
a = sys.argv[1]
s.bind('\\0' + a[1:] if a.startswith('@') else a)
print('bound', flush=True)
s.settimeout(20)
print(s.recv(4096).decode(), flush=True)`;
  const child = spawn('python3', ['-c', script, address], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let onBound: () => void;
  const ready = new Promise<void>((resolve) => (onBound = resolve));
  const message = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.startsWith('bound\n')) onBound();
    });
    child.on('exit', (code) => (code === 0 ? resolve(out.slice('bound\n'.length).trim()) : reject(new Error(`receiver exited ${code}`))));
  });
  return { ready, message, stop: () => child.kill() };
}

t.test('sdNotify delivers READY=1 to $NOTIFY_SOCKET (path and abstract namespace)', async (t) => {
  const dir = scratch();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const saved = process.env.NOTIFY_SOCKET;
  t.teardown(() => {
    if (saved === undefined) delete process.env.NOTIFY_SOCKET;
    else process.env.NOTIFY_SOCKET = saved;
  });
  for (const address of [path.join(dir, 'notify.sock'), `@trawl-test-${process.pid}-${Date.now()}`]) {
    const receiver = receiveDatagram(address);
    t.teardown(receiver.stop);
    await receiver.ready;
    process.env.NOTIFY_SOCKET = address;
    t.equal(native.sdNotify('READY=1'), true, `sent to ${address}`);
    t.equal(await receiver.message, 'READY=1', `received on ${address}`);
  }
  delete process.env.NOTIFY_SOCKET;
  t.equal(native.sdNotify('READY=1'), false, 'without NOTIFY_SOCKET nothing is sent');
  process.env.NOTIFY_SOCKET = 'relative/path';
  t.throws(() => native.sdNotify('READY=1'), /unusable NOTIFY_SOCKET/);
});

/** ASCII bytes of the haystack at a random place, each letter in a random case; undefined when the place holds others. */
function occurringNeedle(haystack: Buffer, length: number, random: () => number): Buffer | undefined {
  if (haystack.length < length) return undefined;
  const start = Math.floor(random() * (haystack.length - length + 1));
  const bytes = Buffer.from(haystack.subarray(start, start + length));
  if (bytes.some((byte) => byte >= 0x80)) return undefined;
  return Buffer.from(bytes.map((byte) => (/[a-z]/i.test(String.fromCharCode(byte)) && random() < 0.5 ? byte ^ 0x20 : byte)));
}

/** The start offsets of the non-overlapping matches RE2 finds for `needle` case-insensitively, the reference for findLiteralIgnoringCase. */
function reReferenceOccurrences(haystack: Buffer, needle: string, from: number, limit: number): number[] {
  const regex = new RE2(escapeRegExp(needle), 'gimu');
  regex.lastIndex = from;
  const found: number[] = [];
  for (let match = regex.exec(haystack); match !== null && found.length < limit; match = regex.exec(haystack)) found.push(match.index);
  return found;
}

/** The non-overlapping occurrences Buffer.indexOf finds, the reference for findLiteral. */
function referenceOccurrences(haystack: Buffer, needle: Buffer, from: number, limit: number): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle, from); at !== -1 && found.length < limit; at = haystack.indexOf(needle, at + needle.length)) {
    found.push(at);
  }
  return found;
}

t.test('findLiteral finds what indexOf finds, at every length around the SIMD widths', async (t) => {
  // A 3-letter alphabet makes partial matches (first and last byte equal) frequent.
  const alphabet = Buffer.from('ab_');
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const text = (length: number) => Buffer.from(Array.from({ length }, () => alphabet[Math.floor(random() * 3)]!));
  let cases = 0;
  for (const haystackLength of [0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 4099]) {
    for (const needleLength of [1, 2, 3, 4, 5, 17, 33]) {
      const haystack = text(haystackLength);
      const needle = needleLength <= haystackLength && random() < 0.7 ? haystack.subarray(haystackLength - needleLength) : text(needleLength);
      const out = new Uint32Array(10_000);
      const count = native.findLiteral(haystack, needle, 0, out);
      t.same([...out.subarray(0, count)], referenceOccurrences(haystack, needle, 0, out.length), `haystack ${haystackLength}, needle ${needleLength}`);
      cases++;
    }
  }
  t.equal(cases, 98);
});

t.test('findLiteral stops at out.length, resumes from `from`, and rejects bad arguments', async (t) => {
  const haystack = Buffer.from('xx aaaa aaaa aa'.repeat(20));
  const needle = Buffer.from('aa');
  const all = referenceOccurrences(haystack, needle, 0, Infinity);
  const out = new Uint32Array(7);
  t.equal(native.findLiteral(haystack, needle, 0, out), 7, 'fills out and stops');
  t.same([...out], all.slice(0, 7));
  const resumeAt = out[6]! + needle.length;
  const rest = new Uint32Array(1000);
  const count = native.findLiteral(haystack, needle, resumeAt, rest);
  t.same([...rest.subarray(0, count)], all.slice(7), 'resuming after the last occurrence finds the rest');
  t.equal(native.findLiteral(haystack, needle, haystack.length, rest), 0, 'from at the end finds nothing');
  t.throws(() => native.findLiteral(haystack, needle, haystack.length + 1, rest), { name: 'RangeError', message: /from must be within/ });
  t.throws(() => native.findLiteral(haystack, Buffer.alloc(0), 0, rest), { name: 'RangeError', message: /needle must not be empty/ });
  t.throws(() => native.findLiteral(haystack, needle, 0, new Uint8Array(4) as unknown as Uint32Array), { name: 'TypeError', message: /out/ });
});

t.test('findRegex writes [start, end] pairs up to out.length, sees the text before `from`; testRegex; both reject bad arguments', async (t) => {
  const haystack = Buffer.from('one two\nthree four\n');
  const words = native.compileRegex('(?m)^\\w+', true);
  const out = new Uint32Array(2);
  t.equal(native.findRegex(words, haystack, 0, out), 1, 'one pair fits');
  t.same([...out], [0, 3]);
  const rest = new Uint32Array(8);
  t.equal(native.findRegex(words, haystack, 3, rest), 1, 'from inside a line: ^ holds only after the newline before it');
  t.same([...rest.subarray(0, 2)], [8, 13]);
  t.equal(native.findRegex(words, haystack, 9, rest), 0, 'no word starts a line after offset 9');
  t.equal(native.findRegex(native.compileRegex('FOUR', false), haystack, 0, rest), 1, 'case-insensitive');
  t.same([...rest.subarray(0, 2)], [14, 18]);
  t.throws(() => native.compileRegex('(', true), { name: 'SyntaxError', message: 'missing ): (' });
  t.throws(() => native.compileRegex('(?P<a>x)(?P<a>y)', true), { name: 'SyntaxError', message: 'duplicate capture group name' });
  t.throws(() => native.compileRegex(7 as unknown as string, true), { name: 'TypeError' });
  t.throws(() => native.findRegex({} as never, haystack, 0, rest), { name: 'TypeError', message: /must come from compileRegex/ });
  t.throws(() => native.findRegex(words, haystack, haystack.length + 1, rest), { name: 'RangeError', message: /from ≤ to must be within/ });
  t.throws(() => native.findRegex(words, haystack, 4, rest, 3), { name: 'RangeError', message: /from ≤ to/ }, 'from past to');
  t.throws(
    () => native.findRegex(words, haystack, 0, rest, haystack.length + 1),
    { name: 'RangeError', message: /within the haystack/ },
    'to past the haystack',
  );
  t.throws(() => native.findRegex(words, haystack, 0, rest, 'x' as unknown as number), { name: 'TypeError', message: /to must be a number/ });
  const lineEnds = native.compileRegex('(?m)\\w+$', true);
  t.equal(native.findRegex(lineEnds, haystack, 0, rest, 5), 0, 'to: `$` reads the byte after it (t, not a line end)');
  t.equal(native.findRegex(lineEnds, haystack, 0, rest, 7), 1, 'to at a newline: `$` holds');
  t.same([...rest.subarray(0, 2)], [4, 7]);
  t.throws(() => native.findRegex(words, haystack, 0, new Uint8Array(4) as unknown as Uint32Array), { name: 'TypeError', message: /out/ });
  t.ok(native.testRegex(words, haystack), 'testRegex: a match');
  t.equal(native.regexProgramSize(native.compileRegex('[a-z]{1000}', true)), 1004, "regexProgramSize: its program's instructions");
  t.notOk(native.testRegex(native.compileRegex('five', true), haystack), 'testRegex: none');
  t.ok(native.testRegex(native.compileRegex('x*', true), Buffer.alloc(0)), 'testRegex: an empty match counts, as RegExp.test');
  native.freeRegex(words);
  t.throws(() => native.findRegex(words, haystack, 0, rest), { name: 'Error', message: /the regex was freed/ }, 'a freed regex is refused, not used');
  t.throws(() => native.testRegex(words, haystack), { name: 'Error', message: /testRegex: the regex was freed/ });
  t.throws(() => native.regexProgramSize(words), { name: 'Error', message: /regexProgramSize: the regex was freed/ });
  t.doesNotThrow(() => native.freeRegex(words), 'freeing twice is harmless');
  t.throws(() => native.freeRegex({} as never), { name: 'TypeError' });
});

t.test('findLiteralIgnoringCase finds what RE2 finds case-insensitively, or declines where U+212A or U+017F is', async (t) => {
  // Letters in both cases (k and s among them), bytes one bit 0x20 away from letters ('@', '`', '[', '{'), and
  // multi-byte text: the Kelvin sign and long s that fold to k and s, other letters, a stray byte.
  const pieces = ['a', 'A', 'k', 'K', 's', 'S', 'a', 'k', 's', 'b', '_', '@', '`', '[', '{', '\u212a', '\u017f', 'é', 'ß', '\xff'].map((piece) =>
    piece === '\xff' ? Buffer.from([0xff]) : Buffer.from(piece, 'utf8'),
  );
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const text = (count: number, from: Buffer[]) => Buffer.concat(Array.from({ length: count }, () => from[Math.floor(random() * from.length)]!));
  const asciiPieces = pieces.filter((piece) => piece.length === 1 && piece[0]! < 0x80);
  let compared = 0;
  let declined = 0;
  let withMatches = 0;
  for (const haystackPieces of [0, 1, 2, 15, 16, 17, 31, 32, 33, 64, 65, 300, 3000]) {
    for (const needleLength of [1, 2, 3, 4, 17, 33]) {
      for (const withSpecials of [false, true, false, true, false, true]) {
        const haystack = text(haystackPieces, withSpecials ? pieces : pieces.filter((piece) => piece.length === 1 || piece[0] === 0xc3));
        const needle = random() < 0.7 ? (occurringNeedle(haystack, needleLength, random) ?? text(needleLength, asciiPieces)) : text(needleLength, asciiPieces);
        const from = haystack.length === 0 ? 0 : Math.floor(random() * Math.min(haystack.length, 40));
        const limit = 1 + Math.floor(random() * 6);
        const out = new Uint32Array(limit);
        const count = native.findLiteralIgnoringCase(haystack, needle, from, out);
        const expected = reReferenceOccurrences(haystack, needle.toString('latin1'), from, limit);
        if (count === -1) {
          declined++;
          t.ok(
            /[ks]/i.test(needle.toString('latin1')) && /[\u212a\u017f]/.test(haystack.toString('utf8')),
            `declines only for a k or s and a special character (${haystackPieces}, ${needleLength})`,
          );
        } else {
          compared++;
          if (expected.length > 0) withMatches++;
          t.same(
            [...out.subarray(0, count)],
            expected,
            `haystack ${haystackPieces} pieces, needle ${JSON.stringify(needle.toString('latin1'))}, from ${from}, limit ${limit}`,
          );
        }
      }
    }
  }
  t.ok(compared > 300 && declined > 20 && withMatches > 60, `${compared} compared with RE2 (${withMatches} with matches), ${declined} declined`);
  const out = new Uint32Array(4);
  t.equal(native.findLiteralIgnoringCase(Buffer.from('x PM_Resume pm_RESUME'), Buffer.from('pM_rEsUmE'), 0, out), 2, 'both casings found');
  t.same([...out.subarray(0, 2)], [2, 12]);
  t.throws(() => native.findLiteralIgnoringCase(Buffer.from('é'), Buffer.from('é'), 0, new Uint32Array(1)), {
    name: 'RangeError',
    message: /needle must be ASCII/,
  });
  t.throws(() => native.findLiteralIgnoringCase(Buffer.from('a'), Buffer.alloc(0), 0, new Uint32Array(1)), {
    name: 'RangeError',
    message: /findLiteralIgnoringCase: needle must not be empty/,
  });
});

t.test('findLiteralIgnoringCase declines wherever U+212A or U+017F lies, a byte short of either is no reason', async (t) => {
  // Every offset around the SIMD widths, so that the scan for them meets each at a block's start, middle and end.
  const out = new Uint32Array(4);
  for (const [name, special, near] of [
    ['U+212A', Buffer.from('\u212a'), Buffer.from([0xe2, 0x84, 0xab])],
    ['U+017F', Buffer.from('\u017f'), Buffer.from([0xc5, 0xbe])],
  ] as const) {
    const wrong: string[] = [];
    let placed = 0;
    for (let length = special.length; length <= 70; length++) {
      for (let at = 0; at + special.length <= length; at++, placed++) {
        const haystack = Buffer.alloc(length, 'x');
        special.copy(haystack, at);
        if (native.findLiteralIgnoringCase(haystack, Buffer.from('s k'), 0, out) !== -1) wrong.push(`not declined at ${at} of ${length}`);
        const nearly = Buffer.alloc(length, 'x');
        near.copy(nearly, at);
        if (native.findLiteralIgnoringCase(nearly, Buffer.from('s k'), 0, out) !== 0) wrong.push(`near miss declined at ${at} of ${length}`);
      }
    }
    t.same(wrong, [], `${name} placed at ${placed} offsets`);
  }
});

t.test('uniteTrigrams gives the trigram set of pieces that cover a text, masks ORed, and leaves its scratch clean', async (t) => {
  const seen = new Uint8Array(1 << 21);
  const masks = new Uint8Array(1 << 24);
  const text = Buffer.from('abcabd abcx abce '.repeat(40));
  const whole = new Uint32Array(text.length);
  const expected = [...whole.subarray(0, native.collectTrigrams(text, seen, masks, whole, 0))].sort((a, b) => a - b);
  // Overlapping pieces, as blocks with their reach are: every trigram start inside one of them.
  const pieces = new Uint32Array(4 * text.length);
  let length = 0;
  for (let start = 0; start < text.length; start += 100)
    length = native.collectTrigrams(text.subarray(start, Math.min(text.length, start + 110)), seen, masks, pieces, length);
  const out = new Uint32Array(length);
  const united = native.uniteTrigrams(pieces.subarray(0, length), seen, masks, out, 0);
  t.same(
    [...out.subarray(0, united)].sort((a, b) => a - b),
    expected,
    'the same trigrams with the same next-byte masks as one scan',
  );
  t.ok(seen.every((byte) => byte === 0) && masks.every((byte) => byte === 0), 'both scratch tables are zero again');
  t.throws(() => native.uniteTrigrams(pieces, seen, masks, pieces, 0), { name: 'RangeError', message: /apart from pairs/ }, 'out may not overlap pairs');
  t.throws(() => native.uniteTrigrams(pieces.subarray(0, length), seen, masks, new Uint32Array(1), 0), { name: 'RangeError', message: /room/ });
});

t.test('the JSON writers write what JSON.stringify writes of the objects, from `at`, or nothing and the room they need', async (t) => {
  const range = (start: number[], end: number[]) => ({
    start: { byteOffset: start[0], lineNumber: start[1], column: start[2] },
    end: { byteOffset: end[0], lineNumber: end[1], column: end[2] },
  });
  const max = 0xffffffff;
  const positions = new Uint32Array([0, 1, 1, 9, 1, 10, 12, 2, 3, max, max, max, 40, 4, 1, 41, 4, 2]);
  const out = Buffer.alloc(4096, 0x2a);
  const expectedRanges = JSON.stringify([range([12, 2, 3], [max, max, max]), range([40, 4, 1], [41, 4, 2])]);
  const rangesEnd = native.writeRangesJson(positions, 1, 2, out, 5);
  t.equal(out.toString('latin1', 5, rangesEnd), expectedRanges, 'ranges 1 and 2, the largest numbers included, written from `at`');
  t.equal(out[4], 0x2a, 'nothing before `at`');
  t.equal(native.writeRangesJson(positions, 0, 0, out, 0), 2, 'no ranges: []');

  const text = Buffer.concat([Buffer.from('int a;\n\t"b\\"\u0001\n'), Buffer.from('é'), Buffer.from([0xff, 0x0a])]);
  const symbols = Buffer.from('[{"symbol":"a","kind":"variable"}]');
  // byteOffset, to, lineNumber, firstRange, ranges, symbolsFrom, symbolsTo
  const chunks = new Uint32Array([0, 7, 1, 0, 1, 0, symbols.length, 7, text.length, 2, 1, 2, 0, 0]);
  const chunkPositions = new Uint32Array([4, 1, 5, 5, 1, 6, 0, 1, 1, 9, 1, 10, 12, 2, 3, 14, 2, 5]);
  const end = native.writeChunksJson(text, chunks, chunkPositions, symbols, out, 0);
  const expectedChunks = JSON.stringify([
    {
      content: 'int a;\n',
      matchRanges: [range([4, 1, 5], [5, 1, 6])],
      contentStart: { byteOffset: 0, lineNumber: 1, column: 1 },
      symbols: [{ symbol: 'a', kind: 'variable' }],
    },
    {
      content: text.toString('utf8', 7),
      matchRanges: [range([0, 1, 1], [9, 1, 10]), range([12, 2, 3], [14, 2, 5])],
      contentStart: { byteOffset: 7, lineNumber: 2, column: 1 },
    },
  ]);
  t.equal(out.toString('utf8', 0, end), expectedChunks, 'content escaped (quote, backslash, control bytes, UTF-8, a byte that is not), ranges, symbols');

  const small = Buffer.alloc(expectedChunks.length, 0x2a);
  const refused = native.writeChunksJson(text, chunks, chunkPositions, symbols, small, 0);
  t.ok(refused < -expectedChunks.length, `no room for the most it may write: ${refused}`);
  t.ok(
    small.every((byte) => byte === 0x2a),
    'and nothing written',
  );
  const room = Buffer.alloc(-refused);
  t.equal(room.toString('utf8', 0, native.writeChunksJson(text, chunks, chunkPositions, symbols, room, 0)), expectedChunks, 'given that room, it writes');
  t.equal(native.writeJsonString(text, 0, 3, Buffer.alloc(7), 0), -20, 'a string of 3 bytes may need 20: six a byte, and the quotes');

  t.throws(() => native.writeChunksJson(text, new Uint32Array([0, text.length + 1, 1, 0, 0, 0, 0]), chunkPositions, symbols, out, 0), {
    name: 'RangeError',
    message: /reaches past content/,
  });
  t.throws(() => native.writeChunksJson(text, new Uint32Array([0, 1, 1, 2, 2, 0, 0]), chunkPositions, symbols, out, 0), {
    name: 'RangeError',
    message: /reaches past content, positions/,
  });
  t.throws(() => native.writeChunksJson(text, new Uint32Array([0, 1, 1, 0, 0, 0, symbols.length + 1]), chunkPositions, symbols, out, 0), {
    name: 'RangeError',
  });
  t.throws(() => native.writeChunksJson(text, new Uint32Array(6), chunkPositions, symbols, out, 0), { name: 'RangeError', message: /7 words a chunk/ });
  t.throws(() => native.writeRangesJson(positions, 2, 2, out, 0), { name: 'RangeError', message: /within positions' ranges/ });
  t.throws(() => native.writeRangesJson(positions, 0, 1, out, out.length + 1), { name: 'RangeError', message: /at must lie within out/ });
  t.throws(() => native.writeJsonString(text, 2, 1, out, 0), { name: 'RangeError', message: /start\.\.end must lie within bytes/ });
  t.throws(() => native.writeRangesJson(new Float64Array(6) as unknown as Uint32Array, 0, 1, out, 0), {
    name: 'TypeError',
    message: /positions \(Uint32Array\) has the wrong type/,
  });
});
