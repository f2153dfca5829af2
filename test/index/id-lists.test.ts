import t from 'tap';
import { recycleIdLists, takeIdList } from '../../src/index/id-lists.js';

const filled = (length: number, first: number) => {
  const list = takeIdList(length);
  for (let i = 0; i < length; i++) list[i] = first + i;
  return list;
};
const isRun = (list: Uint32Array, first: number) => list.every((id, i) => id === first + i);

t.test('lists taken between recycles do not overlap, also when one needs more than the room holds', async (t) => {
  recycleIdLists();
  const small = filled(1000, 0);
  const large = filled(100_000, 5_000); // more than the first room: it comes from a new buffer
  const after = filled(70_000, 900_000);
  t.equal(large.length, 100_000);
  t.ok(isRun(small, 0), 'the list taken before the room ran out is intact');
  t.ok(isRun(large, 5_000), 'the list bigger than the room is whole');
  t.ok(isRun(after, 900_000));
});

t.test('after a recycle, lists as many as were taken before it fit one room', async (t) => {
  recycleIdLists();
  const lists = [filled(150_000, 0), filled(150_000, 0), filled(150_000, 0)];
  t.not(lists[0]!.buffer, lists[2]!.buffer, 'three did not fit the room they started in');
  recycleIdLists();
  const again = [takeIdList(150_000), takeIdList(150_000), takeIdList(150_000)];
  t.ok(
    again.every((list) => list.buffer === again[0]!.buffer),
    'the recycled room holds all three',
  );
  recycleIdLists();
  t.equal(takeIdList(450_000).buffer, again[0]!.buffer, 'and is reused by the next recycle');
});
