import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { AuditTrail, MAX_HELD_RECORDS, type AuditEvent } from '../../src/auth/audit.js';
import { decodeRecords, recordOffsets } from '../../src/auth/state-record.js';
import { NEEDS_ROOT_TO_MOUNT, smallFileSystem, tempDir } from '../helpers/tmp.js';

const DAY_MS = 86_400_000;

function event(n: number): AuditEvent {
  return { action: 'search', actorId: null, actorType: 'anonymous', targetId: null, targetType: null, metadata: { n, query: 'x'.repeat(100) } };
}

/** Records `count` events numbered from `first`, one millisecond apart on `clock`, and waits until they are on disk. */
async function recordAll(
  directory: string,
  clock: { at: number },
  first: number,
  count: number,
  options: { retentionDays: number; segmentBytes?: number },
): Promise<void> {
  const errors: Error[] = [];
  // Each record written at once, as in a trail busy enough to fill a batch at every turn, so that segments fill between the pauses.
  const trail = await AuditTrail.open(directory, { ...options, commitDelayMs: 0, now: () => clock.at, onError: (error) => errors.push(error) });
  for (let n = first; n < first + count; n++) {
    trail.record(event(n));
    clock.at++;
    // Every tenth record, wait until the appends have landed and a rotation they started is done (page() commits
    // and waits for both): segments then fill and rotate alike however fast the disk is.
    if (n % 10 === 0) await trail.page(clock.at, clock.at, 0, 0);
  }
  await trail.close();
  if (errors.length > 0) throw errors[0];
}

/** Every entry in [since, until], newest first. */
async function listAll(trail: AuditTrail, since: number | undefined, until: number | undefined) {
  return (await trail.page(since, until, 0, Number.POSITIVE_INFINITY)).entries;
}

const segmentFiles = (directory: string) => fs.readdirSync(directory).filter((name) => /^audit-\d+\.log$/.test(name));

t.test('the audit log rotates into segments and lists every record once, newest first', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 300, { retentionDays: 0, segmentBytes: 4096 });
  t.ok(segmentFiles(directory).length >= 5, `${segmentFiles(directory).length} closed segments`);
  const trail = await AuditTrail.open(directory, { retentionDays: 0, onError: (error) => t.error(error) });
  t.teardown(() => trail.close());
  const numbers = (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n);
  t.same(
    numbers,
    Array.from({ length: 300 }, (_, i) => 299 - i),
    'all 300, newest first, none twice',
  );
  const since = clock.at - 50;
  t.same(
    (await listAll(trail, since, since + 9)).map((entry) => entry.metadata.n),
    Array.from({ length: 10 }, (_, i) => 259 - i),
    'a time window reads the segments that can hold it',
  );
});

t.test('segments closed longer ago than the retention are deleted; the rest stay', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 200, { retentionDays: 30, segmentBytes: 4096 });
  const old = segmentFiles(directory);
  t.ok(old.length >= 3, 'the first records are in closed segments');
  clock.at += 31 * DAY_MS;
  await recordAll(directory, clock, 200, 100, { retentionDays: 30, segmentBytes: 4096 });
  const kept = segmentFiles(directory);
  t.same(
    kept.filter((name) => old.includes(name)),
    [],
    'every segment closed 31 days before is gone',
  );
  const trail = await AuditTrail.open(directory, { retentionDays: 30, now: () => clock.at, onError: (error) => t.error(error) });
  t.teardown(() => trail.close());
  const numbers = (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n as number);
  t.ok(numbers.length >= 100 && numbers.length < 300, `${numbers.length} records left`);
  t.same(
    numbers.slice(0, 100),
    Array.from({ length: 100 }, (_, i) => 299 - i),
    'the recent records are all there',
  );
  t.ok(
    numbers.every((n, i) => i === 0 || n < numbers[i - 1]!),
    'newest first',
  );
});

t.test('past maxBytes the oldest closed segments are deleted, whatever their age, and reported', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  const errors: string[] = [];
  const trail = await AuditTrail.open(directory, {
    retentionDays: 0,
    segmentBytes: 4096,
    maxBytes: 16_384,
    commitDelayMs: 0,
    now: () => clock.at,
    onError: (error) => errors.push(error.message),
  });
  t.teardown(() => trail.close());
  for (let n = 0; n < 300; n++) {
    trail.record(event(n));
    clock.at++;
    if (n % 10 === 0) await listAll(trail, undefined, undefined); // written, so that segments fill and rotate
  }
  const closedBytes = segmentFiles(directory).reduce((sum, name) => sum + fs.statSync(path.join(directory, name)).size, 0);
  t.ok(closedBytes <= 16_384 && closedBytes > 16_384 - 2 * 4096, `the closed segments hold ${closedBytes} bytes, at most the bound`);
  const kept = (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n as number);
  t.same(
    kept,
    Array.from({ length: kept.length }, (_, k) => 299 - k),
    `the newest ${kept.length} records are kept, none missing between`,
  );
  t.ok(
    errors.length > 0 &&
      errors.every((message) => /^the closed audit segments were over 16384 bytes together: the oldest \d+ deleted before their retention$/.test(message)),
    errors[0] ?? 'nothing reported',
  );
});

t.test('retention 0 keeps every segment', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 100, { retentionDays: 0, segmentBytes: 4096 });
  const before = segmentFiles(directory);
  clock.at += 3650 * DAY_MS;
  await recordAll(directory, clock, 100, 1, { retentionDays: 0, segmentBytes: 4096 });
  t.ok(before.length > 0);
  t.same(
    segmentFiles(directory).filter((name) => before.includes(name)),
    before,
  );
});

t.test('a quiet trail is closed a day after its first record, so the retention applies to it too', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 5, { retentionDays: 30 });
  t.same(segmentFiles(directory), [], 'small and young: still the current segment');
  clock.at += DAY_MS;
  await recordAll(directory, clock, 5, 1, { retentionDays: 30 });
  t.equal(segmentFiles(directory).length, 1, 'a day after its first record (known across a restart), the segment is closed');
  clock.at += 31 * DAY_MS;
  const trail = await AuditTrail.open(directory, { retentionDays: 30, now: () => clock.at, onError: (error) => t.error(error) });
  t.teardown(() => trail.close());
  t.same(segmentFiles(directory), [], 'and deleted once it is older than the retention');
  const left = (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n as number);
  t.notOk(
    left.some((n) => n < 5),
    'with the records in it',
  );
});

t.test('records wait to be written together; reading and closing write what waits', async (t) => {
  const directory = tempDir(t);
  const onDisk = () => decodeRecords(fs.readFileSync(path.join(directory, 'audit.log'))).records.length;
  const trail = await AuditTrail.open(directory, { retentionDays: 0, commitDelayMs: 60_000, onError: (error) => t.error(error) });
  for (let n = 0; n < 200; n++) trail.record(event(n));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(onDisk(), 0, 'nothing written within the delay');
  t.same(
    (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n),
    Array.from({ length: 200 }, (_, i) => 199 - i),
    'a reader sees every record made before it',
  );
  t.equal(onDisk(), 200, 'all written by then');
  trail.record(event(200));
  await trail.close();
  t.equal(onDisk(), 201, 'closing writes the record that waited');

  const quick = await AuditTrail.open(directory, { retentionDays: 0, commitDelayMs: 20, onError: (error) => t.error(error) });
  t.teardown(() => quick.close());
  quick.record(event(201));
  for (let tries = 0; tries < 500 && onDisk() < 202; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(onDisk(), 202, 'and the delay passing writes it with nobody reading');
});

t.test('a page of a time window across segments: the same entries and total as listing everything, read again from what was remembered', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 300, { retentionDays: 0, segmentBytes: 4096 });
  t.ok(segmentFiles(directory).length >= 5, `${segmentFiles(directory).length} closed segments`);
  const trail = await AuditTrail.open(directory, { retentionDays: 0, now: () => clock.at, onError: (error) => t.error(error) });
  t.teardown(() => trail.close());
  const everything = await listAll(trail, undefined, undefined);
  t.equal(everything.length, 300);
  const first = Date.parse(everything[299]!.timestamp);
  const windows: [number | undefined, number | undefined][] = [
    [undefined, undefined],
    [first + 37, undefined],
    [undefined, first + 211],
    [first + 37, first + 211],
    [first + 500, undefined],
    [undefined, first - 1],
  ];
  for (const round of ['first reading', 'remembered counts']) {
    for (const [since, until] of windows) {
      const expected = everything.filter((entry) => {
        const at = Date.parse(entry.timestamp);
        return (since === undefined || at >= since) && (until === undefined || at <= until);
      });
      for (const [offset, limit] of [
        [0, 30],
        [30, 30],
        [95, 10],
        [170, 50],
        [290, 30],
        [0, 1000],
      ] as const) {
        const page = await trail.page(since, until, offset, limit);
        t.equal(page.total, expected.length, `${round}: total of [${since}, ${until}]`);
        t.same(
          page.entries.map((entry) => entry.id),
          expected.slice(offset, offset + limit).map((entry) => entry.id),
          `${round}: [${since}, ${until}] entries ${offset}..${offset + limit}`,
        );
      }
    }
  }
});

t.test('a flipped bit in a segment, or a closed one cut short: the intact records are still listed, and the damage is reported once', async (t) => {
  const directory = tempDir(t);
  const clock = { at: Date.parse('2026-01-01T00:00:00Z') };
  await recordAll(directory, clock, 0, 200, { retentionDays: 0, segmentBytes: 4096 });
  const errors: string[] = [];
  const trail = await AuditTrail.open(directory, { retentionDays: 0, commitDelayMs: 0, now: () => clock.at, onError: (error) => errors.push(error.message) });
  t.teardown(() => trail.close());
  for (let n = 200; n < 210; n++) trail.record(event(n));
  t.equal((await listAll(trail, undefined, undefined)).length, 210);
  // The second record of a closed segment, and of the one being written, each lose a bit.
  const damage = (file: string) => {
    const bytes = fs.readFileSync(file);
    const second = recordOffsets(bytes).offsets[1]!;
    bytes[second + 12]! ^= 0x08;
    fs.writeFileSync(file, bytes);
  };
  damage(path.join(directory, segmentFiles(directory)[2]!));
  damage(path.join(directory, 'audit.log'));
  const listed = (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n as number);
  t.equal(listed.length, 208, 'every record but the two damaged ones is listed');
  t.same(
    listed,
    [...listed].sort((a, b) => b - a),
    'newest first',
  );
  t.equal(errors.length, 2, 'each damage is reported');
  t.match(
    errors.find((message) => message.startsWith('audit-')),
    /^audit-\d+\.log is damaged at bytes \d+-\d+ \(a flipped bit, a bad sector\): the intact records after it are listed all the same$/,
  );
  t.match(
    errors.find((message) => message.startsWith('audit.log')),
    /^audit\.log is damaged at bytes \d+-\d+ .*: the intact records after it are listed all the same; the daemon will not start on it until `trawl admin --config FILE state repair`/,
  );
  await listAll(trail, undefined, undefined);
  t.equal(errors.length, 2, 'once');

  // A closed segment cut short loses its last records: reported too, where the current segment's tail is a write.
  const closed = path.join(directory, segmentFiles(directory)[4]!);
  fs.truncateSync(closed, fs.statSync(closed).size - 5);
  t.equal((await listAll(trail, undefined, undefined)).length, 207, 'the cut record is gone');
  t.match(
    errors[2],
    /^audit-\d+\.log ends with \d+ bytes that are no record \(a truncated or damaged file\): the records before them are listed$/,
    'a truncated closed segment is reported',
  );
  t.equal(errors.length, 3);
});

t.test(
  'a full disk: records are kept in order and written once there is room; past the bound the oldest are dropped and counted',
  { skip: NEEDS_ROOT_TO_MOUNT },
  async (t) => {
    const disk = smallFileSystem(t, 8192); // room for the bound's records
    const errors: string[] = [];
    const trail = await AuditTrail.open(disk.dir, { retentionDays: 0, commitDelayMs: 0, onError: (error) => errors.push(error.message) });
    t.teardown(() => trail.close());
    const written = async () => (await listAll(trail, undefined, undefined)).map((entry) => entry.metadata.n as number).reverse();
    let next = 0;
    const record = (count: number) => {
      for (const end = next + count; next < end; next++) trail.record(event(next));
    };
    record(3);
    t.same(await written(), [0, 1, 2]);

    disk.fill();
    record(200);
    const onDisk = await written();
    t.ok(onDisk.length < 203, `the full disk took ${onDisk.length - 3} of the 200 records`);
    t.same(errors.length, 1, 'the failure is reported once');
    t.match(errors[0], /^audit records are kept in memory \(at most 10000\) until they can be written: nothing was saved: .* full \(ENOSPC\)$/);
    disk.free();
    t.same(
      await written(),
      Array.from({ length: next }, (_, n) => n),
      'once there is room every record is written, in order',
    );
    t.equal(errors.length, 1, 'nothing was dropped');

    disk.fill();
    const before = next;
    record(50);
    await written(); // the write fails: these are kept, and a retry is due
    record(MAX_HELD_RECORDS); // made before the retry: past the bound with those, so the oldest are dropped as they come
    disk.free();
    const after = await written();
    const lost = Array.from({ length: next }, (_, n) => n).filter((n) => !after.includes(n));
    t.ok(lost.length >= 50 && lost.every((n, k) => n === lost[0]! + k && n >= before), `the oldest kept records are dropped, one run of them (${lost.length})`);
    t.same(
      after.slice(-MAX_HELD_RECORDS),
      Array.from({ length: MAX_HELD_RECORDS }, (_, k) => next - MAX_HELD_RECORDS + k),
      'the newest are written, in order',
    );
    t.same(
      errors.slice(1),
      [errors[1], `${lost.length} audit records were dropped while the audit log could not be written`],
      'the new failure and the count dropped are reported',
    );
  },
);
