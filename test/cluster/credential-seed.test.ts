import { randomBytes } from 'node:crypto';
import t from 'tap';
import { CHUNKS_PREFIX, MAX_COMMIT_BYTES, readIdentity, seed, SNAPSHOT_KEY } from '../../src/auth/etcd-log.js';
import { firstState, parseSnapshotMeta, readLogSummary, readSnapshot } from '../../src/auth/etcd-snapshot.js';
import { openEtcd } from '../../src/cluster/etcd.js';
import { startEtcd } from './etcd.js';

t.test("a node that loses the race to start the log deletes its snapshot's chunks; the status shows the winner's, or its damage", async (t) => {
  const { endpoints } = await startEtcd(t, 1);
  const etcd = await openEtcd({ etcd: endpoints, keyPrefix: '' });
  t.teardown(() => etcd.close());
  const sealingKey = randomBytes(32);
  const identity = () => ({ id: crypto.randomUUID(), instanceKey: randomBytes(32) });
  // Two nodes whose states are over one commit's limit: each writes its state's chunks, then tries to start the log.
  const states = [randomBytes(2 * MAX_COMMIT_BYTES + 1), randomBytes(MAX_COMMIT_BYTES + 1)];
  const [first, second] = await Promise.all(states.map((records) => firstState(etcd, records)));
  t.ok(first && 'snapshot' in first && second && 'snapshot' in second, 'both states go in as snapshots');
  const won = identity();
  t.ok((await seed(etcd, 'a', sealingKey, won, first!)) > 0, 'the first node starts the log');
  t.equal(await seed(etcd, 'b', sealingKey, identity(), second!), 0, 'the second finds it started');
  t.equal((await readIdentity(etcd, sealingKey))!.id, won.id, "the log is the first node's");
  const chunks = await etcd.getAll().prefix(CHUNKS_PREFIX).keys();
  const ids = new Set(chunks.map((key) => key.slice(CHUNKS_PREFIX.length).split('/')[0]));
  t.same([...ids], ['snapshot' in first! ? first.snapshot.id : ''], "only the winner's chunks are left");
  const meta = parseSnapshotMeta((await etcd.get(SNAPSHOT_KEY).exec()).kvs[0]!);
  t.same(await readSnapshot(etcd, meta), states[0], "and they read back as the winner's state");

  // What `trawl cluster status` shows of the log: the snapshot, or what is wrong with its description.
  t.same((await readLogSummary(etcd)).snapshot, { through: meta.through, bytes: states[0]!.length });
  await etcd.put(SNAPSHOT_KEY).value('{"through": "soon"}');
  t.match(
    (await readLogSummary(etcd)).snapshot,
    { damaged: /trawl\/state\/snapshot \(not a snapshot description\)/ },
    'a damaged description is shown, not thrown',
  );
});
