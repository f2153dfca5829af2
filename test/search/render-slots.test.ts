import t from 'tap';
import { PREFIX_ROOM, RenderSlots, placeMembers, prefixedResponse } from '../../src/search/response/render-slots.js';

t.test('a response is the prefix and the members the worker wrote, in the slot', async (t) => {
  const slots = new RenderSlots(2, PREFIX_ROOM + 64);
  const first = slots.acquire()!;
  const second = slots.acquire()!;
  t.same([first, second], [0, 1], 'slots are handed out in order');
  t.equal(slots.acquire(), undefined, 'none left');
  const members = '"files":["é"],"isSearchExhaustive":true}';
  const parts = [Buffer.from('"files":'), Buffer.from('["é"]'), Buffer.from(',"isSearchExhaustive":true}')];
  t.same(placeMembers(slots.share, second, parts), { results: null, slotBytesUsed: Buffer.byteLength(members) }, 'the members fit, one part after the other');
  const response = slots.response(second, '{"stats":{"n":1},', Buffer.byteLength(members));
  t.equal(response.body.toString(), `{"stats":{"n":1},${members}`);
  t.ok(response.body.buffer instanceof SharedArrayBuffer, 'in the shared memory, not a copy');
  response.release();
  response.release();
  t.equal(slots.acquire(), second, 'released once: the slot is free again');
  t.equal(slots.acquire(), undefined, 'and only once');
});

t.test('members over a slot, or without one, come in a buffer of their own; a prefix over its room makes a copy and frees the slot', async (t) => {
  const slots = new RenderSlots(1, PREFIX_ROOM + 8);
  const slot = slots.acquire()!;
  const tooMany = placeMembers(slots.share, slot, [Buffer.from('"files":'), Buffer.from('[]}')]);
  const membersOf = (results: Uint8Array) => Buffer.from(results).subarray(PREFIX_ROOM).toString();
  t.same(
    [membersOf(tooMany.results!), tooMany.results!.byteLength, tooMany.slotBytesUsed],
    ['"files":[]}', PREFIX_ROOM + 11, 0],
    'eleven bytes do not fit in eight: after a room of their own',
  );
  t.notOk(tooMany.results!.buffer instanceof SharedArrayBuffer, 'they are not in the slot');
  t.equal(tooMany.results!.byteLength, tooMany.results!.buffer.byteLength, 'nor in a larger buffer (the answer hands it over whole)');
  const bytes = Buffer.from(tooMany.results!.buffer, tooMany.results!.byteOffset, tooMany.results!.byteLength);
  const inPlace = prefixedResponse(bytes, '{"stats":{},', 11);
  t.same(
    [inPlace.body.toString(), inPlace.inPlace, inPlace.body.buffer === tooMany.results!.buffer],
    ['{"stats":{},"files":[]}', true, true],
    'the prefix written into its room: no copy',
  );
  const noSlot = placeMembers(slots.share, undefined, [Buffer.from('"a":1}')]);
  t.same([membersOf(noSlot.results!), noSlot.slotBytesUsed], ['"a":1}', 0], 'no slot');
  t.same(placeMembers(slots.share, slot, [Buffer.from('"a":1}')]), { results: null, slotBytesUsed: 6 });
  const prefix = `{"stats":"${'x'.repeat(PREFIX_ROOM)}",`;
  const response = slots.response(slot, prefix, 6);
  t.equal(response.body.toString(), `${prefix}"a":1}`);
  t.notOk(response.body.buffer instanceof SharedArrayBuffer, 'a copy');
  t.equal(slots.acquire(), slot, 'the slot is free at once');
});

t.test('slot sizes are validated', async (t) => {
  t.throws(() => new RenderSlots(1, PREFIX_ROOM), /slotBytes must be an integer over 2048, got 2048/);
});
