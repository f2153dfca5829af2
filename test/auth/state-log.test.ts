import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { native } from '../../native/index.js';
import { StateLog, StateLogCorruptError, StateLogLockedError, StateLogWriteError, STATE_LOG_FILE, repairLog } from '../../src/auth/state-log.js';
import { decodeRecords, encodeRecord, type StateRecord } from '../../src/auth/state-record.js';
import { NEEDS_ROOT_TO_MOUNT, smallFileSystem, tempDir } from '../helpers/tmp.js';

const record = (n: number, extra: Record<string, unknown> = {}): StateRecord => ({ v: 1, type: 'test.record', at: 1_700_000_000_000 + n, n, ...extra });

/** CRC-32C, bit by bit: the reference for the addon. */
function referenceCrc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

t.test('crc32c matches the reference and chains', async (t) => {
  t.equal(native.crc32c(Buffer.from('123456789')), 0xe3069283, 'the standard check value');
  for (const length of [0, 1, 7, 8, 9, 63, 64, 1000]) {
    const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 37 + length) & 0xff));
    t.equal(native.crc32c(bytes), referenceCrc32c(bytes), `${length} bytes`);
    t.equal(native.crc32c(bytes.subarray(length >> 1), native.crc32c(bytes.subarray(0, length >> 1))), referenceCrc32c(bytes), 'in two parts');
  }
});

t.test('appends are replayed in order after a reopen; concurrent appends share syncs', async (t) => {
  const dir = tempDir(t);
  const { log, records, repair } = await StateLog.open(dir);
  t.same(records, [], 'a new log is empty');
  t.equal(repair, null);
  await Promise.all(Array.from({ length: 200 }, (_, n) => log.append(record(n, { name: `user ${n}`, nested: { list: [1, 'two'] } }))));
  t.ok(log.syncs < 200, `group commit: ${log.syncs} fdatasyncs for 200 appends`);
  await log.close();
  t.equal(fs.statSync(path.join(dir, STATE_LOG_FILE)).mode & 0o777, 0o600, 'the log is readable by its owner only');
  const again = await StateLog.open(dir);
  t.teardown(() => again.log.close());
  t.equal(again.records.length, 200);
  t.same(
    again.records.map((r) => r.n),
    Array.from({ length: 200 }, (_, n) => n),
    'in append order',
  );
  t.same(again.records[7], record(7, { name: 'user 7', nested: { list: [1, 'two'] } }));
});

t.test('one writer: a second open is refused while the log is open', async (t) => {
  const dir = tempDir(t);
  const { log } = await StateLog.open(dir);
  await t.rejects(StateLog.open(dir), StateLogLockedError);
  await log.close();
  const reopened = await StateLog.open(dir);
  await reopened.log.close();
  t.pass('free again once closed');
});

t.test('a torn or corrupt tail is cut back to the last good record', async (t) => {
  const cases: [string, (file: string, size: number) => void, number][] = [
    ['a record cut short', (file, size) => fs.truncateSync(file, size - 3), 9],
    ['a header cut short', (file, size) => fs.truncateSync(file, size - encodeRecord(record(9)).length + 5), 9],
    ['a flipped bit in the last body', (file, size) => flip(file, size - 2), 9],
    ['zeros after the end (a crash before the data reached the disk)', (file) => fs.appendFileSync(file, Buffer.alloc(4096)), 10],
    ['garbage appended', (file) => fs.appendFileSync(file, Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9])), 10],
    ['an impossible length', (file) => fs.appendFileSync(file, Buffer.from([0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0])), 10],
  ];
  for (const [name, damage, survivors] of cases) {
    const dir = tempDir(t);
    const { log } = await StateLog.open(dir);
    for (let n = 0; n < 10; n++) await log.append(record(n));
    await log.close();
    const file = path.join(dir, STATE_LOG_FILE);
    damage(file, fs.statSync(file).size);
    const unreplayed = tempDir(t);
    fs.copyFileSync(file, path.join(unreplayed, STATE_LOG_FILE));
    const checkedOnly = await StateLog.open(unreplayed, 'state', { replay: false });
    await checkedOnly.log.close();
    const { log: repaired, records, repair } = await StateLog.open(dir);
    t.same(checkedOnly.records, [], `${name}: without replay nothing is decoded`);
    t.equal(checkedOnly.repair?.goodBytes, repair?.goodBytes, `${name}: and the tail is cut at the same place`);
    t.same(
      records.map((r) => r.n),
      Array.from({ length: survivors }, (_, n) => n),
      `${name}: the good records survive`,
    );
    t.ok(repair && repair.droppedBytes > 0, `${name}: reported (${repair?.reason})`);
    t.equal(fs.statSync(file).size, repair!.goodBytes, `${name}: the file is cut there`);
    await repaired.append(record(100));
    await repaired.close();
    const after = await StateLog.open(dir);
    t.same(
      after.records.map((r) => r.n),
      [...Array.from({ length: survivors }, (_, n) => n), 100],
      `${name}: appends continue after the cut`,
    );
    t.equal(after.repair, null);
    await after.log.close();
  }
});

t.test('a damaged record with intact records after it is not a tail: open refuses, repair keeps every intact record and a copy', async (t) => {
  const size = encodeRecord(record(0)).length;
  const cases: [string, number, number[]][] = [
    ['a flipped bit in a middle body', size * 4 + 10, [0, 1, 2, 3, 5, 6, 7, 8, 9]],
    ['a flipped bit in the first body', 10, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['a flipped bit in a middle length', size * 6, [0, 1, 2, 3, 4, 5, 7, 8, 9]],
  ];
  for (const [name, offset, kept] of cases) {
    const dir = tempDir(t);
    const { log } = await StateLog.open(dir);
    for (let n = 0; n < 10; n++) await log.append(record(n));
    await log.close();
    const file = path.join(dir, STATE_LOG_FILE);
    flip(file, offset);
    const damaged = fs.readFileSync(file);
    const refused = await StateLog.open(dir).catch((error: unknown) => error);
    t.ok(refused instanceof StateLogCorruptError, `${name}: refused`);
    t.match((refused as Error).message, /intact records after it.*state repair/, `${name}: saying what to run`);
    t.same(fs.readFileSync(file), damaged, `${name}: and nothing is cut`);

    const repaired = await repairLog(dir);
    t.equal(repaired.kept, kept.length, `${name}: every intact record kept`);
    t.same(fs.readFileSync(repaired.copy!), damaged, `${name}: the whole file copied first`);
    const after = await StateLog.open(dir);
    t.same(
      after.records.map((r) => r.n),
      kept,
      `${name}: the log replays the intact records`,
    );
    t.equal(after.repair, null);
    await after.log.close();
    t.same(await repairLog(dir), { copy: null, kept: kept.length, appended: 0, dropped: [] }, `${name}: a second repair finds nothing to do`);
  }
});

function flip(file: string, offset: number): void {
  const bytes = fs.readFileSync(file);
  bytes[offset]! ^= 0x10;
  fs.writeFileSync(file, bytes);
}

t.test('fuzz: any bytes give a prefix of good records, never an exception', async (t) => {
  let seed = 17;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const originals = Array.from({ length: 20 }, (_, n) => record(n, { blob: 'z'.repeat(n * 3) }));
  const valid = Buffer.concat(originals.map(encodeRecord));
  for (let trial = 0; trial < 2000; trial++) {
    let bytes: Buffer;
    if (trial % 2 === 0) {
      bytes = Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256)));
    } else {
      bytes = Buffer.from(valid.subarray(0, Math.floor(random() * (valid.length + 1))));
      for (let flips = Math.floor(random() * 3); flips > 0 && bytes.length > 0; flips--)
        bytes[Math.floor(random() * bytes.length)]! ^= 1 << Math.floor(random() * 8);
    }
    const { records, goodBytes } = decodeRecords(bytes);
    if (goodBytes > bytes.length || !records.every((r, i) => trial % 2 === 0 || JSON.stringify(r) === JSON.stringify(originals[i]))) {
      t.fail(`trial ${trial}: not a prefix of good records`);
      return;
    }
  }
  t.pass('2000 inputs decoded to prefixes');
});

t.test('compaction replaces the log with a snapshot; appends around it are kept', async (t) => {
  const dir = tempDir(t);
  const { log } = await StateLog.open(dir);
  // The state the records make: here, the set of acknowledged n.
  const state = new Set<number>();
  const append = async (n: number) => {
    await log.append(record(n));
    state.add(n);
  };
  for (let n = 0; n < 50; n++) await append(n);
  const inFlight = Array.from({ length: 20 }, (_, i) => append(1000 + i)); // some are being written as compaction starts
  const compacted = log.compact(() => [...state].map((n) => record(n, { snapshot: true })));
  const after = Array.from({ length: 20 }, (_, i) => append(2000 + i)); // these wait for it
  await Promise.all([...inFlight, compacted, ...after]);
  await log.close();
  const { log: reopened, records } = await StateLog.open(dir);
  t.teardown(() => reopened.close());
  const replayed = new Set(records.map((r) => r.n as number));
  t.same(
    [...state].filter((n) => !replayed.has(n)),
    [],
    `every acknowledged record is in the compacted log (${replayed.size} records)`,
  );
  const firstAppended = records.findIndex((r) => !r.snapshot);
  t.ok(
    firstAppended >= 50 && records.slice(firstAppended).every((r) => !r.snapshot && (r.n as number) >= 1000),
    'the log is the snapshot, then what was appended after it',
  );
  t.notOk(fs.existsSync(path.join(dir, `${STATE_LOG_FILE}.compact.tmp`)), 'no temporary file left');
});

t.test('a full disk: an append that does not fit is refused whole, and appends land again once there is room', { skip: NEEDS_ROOT_TO_MOUNT }, async (t) => {
  const disk = smallFileSystem(t);
  const { log } = await StateLog.open(disk.dir);
  t.teardown(() => log.close());
  const file = path.join(disk.dir, STATE_LOG_FILE);
  const acknowledged: number[] = [];
  for (let n = 0; n < 3; n++) await log.append(record(n)).then(() => acknowledged.push(n));
  disk.fill();
  // The log's last page has room left: appends fill it, then one needs a page the disk does not have.
  let refused: unknown = null;
  for (let n = 3; n < 100 && !refused; n++) {
    await log.append(record(n, { padding: 'x'.repeat(300) })).then(
      () => acknowledged.push(n),
      (error: unknown) => (refused = error),
    );
  }
  t.type(refused, StateLogWriteError, 'the append is refused');
  t.match((refused as Error).message, /^nothing was saved: the disk that holds the server's data directory is full \(ENOSPC\)$/, 'saying why');
  t.equal(fs.statSync(file).size, log.bytes, 'none of its bytes stay in the file');
  await t.rejects(
    log.compact(() => acknowledged.map((n) => record(n))),
    StateLogWriteError,
    'compaction on the full disk is refused too',
  );
  t.notOk(fs.existsSync(`${file}.compact.tmp`), 'leaving no temporary file');
  disk.free();
  await log.append(record(1000));
  await log.close();
  const reopened = await StateLog.open(disk.dir);
  t.teardown(() => reopened.log.close());
  t.equal(reopened.repair, null, 'the log reopens whole');
  t.same(
    reopened.records.map((r) => r.n),
    [...acknowledged, 1000],
    'with every acknowledged record and nothing of the refused one',
  );
});

t.test('crash safety: kill -9 during concurrent appends loses no acknowledged record', async (t) => {
  const dir = tempDir(t);
  const writer = fileURLToPath(new URL('./state-log-writer.ts', import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, writer, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const acked = new Set<number>();
  let output = '';
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = output.split('\n');
      output = lines.pop()!;
      for (const line of lines) acked.add(Number(line.slice('acked '.length)));
      if (acked.size >= 300) resolve();
    });
  });
  child.kill('SIGKILL');
  await exited;
  const { log, records } = await StateLog.open(dir);
  t.teardown(() => log.close());
  const stored = new Set(records.map((r) => r.n as number));
  const lost = [...acked].filter((n) => !stored.has(n));
  t.same(lost, [], `all ${acked.size} acknowledged records survived (${records.length} stored)`);
});

t.test('format 1 logs (written by @msgpack/msgpack) replay unchanged; format 2 writes what they read', async (t) => {
  // test/auth/fixtures/state-format-1.log: one record of every auth type and an audit record, written by trawl before msgpackr.
  const fixture = fs.readFileSync(fileURLToPath(new URL('fixtures/state-format-1.log', import.meta.url)));
  const at = 1_764_000_000_000; // above 2^32: format 1 wrote every `at` as a 64-bit integer
  const expected: StateRecord[] = [
    { v: 1, at, type: 'settings.anonymousAccess', enabled: true },
    { v: 1, at: at + 1, type: 'license.installed', key: 'trawl-license-v1.eyJ4IjoxfQ.c2ln' },
    { v: 1, at: at + 2, type: 'user.added', userId: 'u_owner', name: 'Ada Lovelace', email: 'ada@example.com', role: 'owner' },
    { v: 1, at: at + 3, type: 'user.added', userId: 'u_member', name: 'Jürgen Ünicode 名前', email: 'j@example.com', role: 'member' },
    { v: 1, at: at + 4, type: 'user.role', userId: 'u_member', role: 'owner' },
    { v: 1, at: at + 5, type: 'grant.added', userId: 'u_member', repoId: 7 },
    { v: 1, at: at + 6, type: 'grant.removed', userId: 'u_member', repoId: 7 },
    { v: 1, at: at + 7, type: 'apikey.created', keyId: 'k_1', userId: 'u_owner', name: 'ci', digest: 'a'.repeat(64) },
    { v: 1, at: at + 8, type: 'token.created', tokenId: 't_1', userId: 'u_member', digest: 'b'.repeat(64), repoIds: [1, 70000, 4294967296] },
    { v: 1, at: at + 9, type: 'token.revoked', tokenId: 't_1' },
    { v: 1, at: at + 10, type: 'apikey.deleted', keyId: 'k_1' },
    { v: 1, at: at + 11, type: 'user.removed', userId: 'u_member' },
    {
      v: 1,
      type: 'audit',
      at: at + 12,
      ...{ id: 1, action: 'search', actorId: 'u_owner', actorType: 'user', targetId: null, targetType: null },
      metadata: { query: 'fö\u0000o "bar"', matches: 12, stream: true, ratio: 0.25, missing: null, nested: { list: [-1, -70000, 2 ** 40] } },
    },
  ];
  const read = decodeRecords(fixture);
  t.equal(read.problem, null, 'every record decodes');
  t.equal(read.goodBytes, fixture.length);
  t.strictSame(read.records, expected, 'the same values, 64-bit integers as numbers, nil as null');
  t.ok(
    read.records.every((one) => Object.getPrototypeOf(one) === Object.prototype),
    'maps are plain objects',
  );

  const directory = tempDir(t);
  fs.writeFileSync(path.join(directory, STATE_LOG_FILE), fixture, { mode: 0o600 });
  const { log, records } = await StateLog.open(directory);
  t.strictSame(records, expected, 'a state directory of format 1 opens');
  await log.append(record(1, { missing: undefined }));
  await log.close();
  const reopened = decodeRecords(fs.readFileSync(path.join(directory, STATE_LOG_FILE)));
  t.strictSame(reopened.records, [...expected, record(1, { missing: null })], 'a format 2 record after them: undefined is written as nil, as format 1 did');
  const rewritten = Buffer.concat(expected.map(encodeRecord));
  t.strictSame(decodeRecords(rewritten).records, expected, 'format 2 encodes the same values');
  t.ok(rewritten.length <= fixture.length, `no bigger than format 1 (${rewritten.length} vs ${fixture.length} bytes)`);
});
