import t from 'tap';
import { openEtcd } from '../../src/cluster/etcd.js';
import { sharedRepositoryIds } from '../../src/cluster/repository-ids.js';
import { startEtcd } from './etcd.js';

t.test("a renamed repository takes its former name's id across the cluster, only while the former name is gone", async (t) => {
  const { endpoints } = await startEtcd(t, 1);
  const etcd = await openEtcd({ etcd: endpoints, keyPrefix: '' });
  t.teardown(() => etcd.close());
  const none = new Map<string, number>();
  const first = await sharedRepositoryIds(etcd, ['host/acme/api', 'host/acme/web'], none);
  t.equal(new Set(first.values()).size, 2, 'one id each');

  // Another node still configures the former name: the new name gets an id of its own.
  const both = await sharedRepositoryIds(etcd, ['host/acme/api', 'host/acme/api-v2'], none, new Map([['host/acme/api-v2', 'host/acme/api']]));
  t.equal(both.get('host/acme/api'), first.get('host/acme/api'), 'the former name keeps its id');
  t.notOk([...first.values()].includes(both.get('host/acme/api-v2')!), 'the new name, configured beside it, gets a new one');

  // The host renamed web: its id moves to the new name, and the former name's key goes.
  const renamed = new Map([['host/acme/web-v2', 'host/acme/web']]);
  const moved = await sharedRepositoryIds(etcd, ['host/acme/web-v2'], none, renamed);
  t.equal(moved.get('host/acme/web-v2'), first.get('host/acme/web'), 'the id (and the grants bound to it) moves with the name');
  const listed = await etcd.getAll().prefix('trawl/repository-ids/').strings();
  t.same(Object.keys(listed).sort(), ['trawl/repository-ids/host/acme/api', 'trawl/repository-ids/host/acme/api-v2', 'trawl/repository-ids/host/acme/web-v2']);
  t.same(await sharedRepositoryIds(etcd, ['host/acme/web-v2'], none, renamed), moved, 'asked again, by any node: the same id');

  // A name that comes back after its id moved on is a new repository.
  const back = await sharedRepositoryIds(etcd, ['host/acme/web'], none);
  t.notOk([...first.values(), ...both.values()].includes(back.get('host/acme/web')!), 'the former name, configured again, gets a new id');
});
