/**
 * Repository ids shared by the nodes of a cluster (docs/cluster.md, "Repository ids"): grants and scoped tokens name
 * repositories by id, and the credential log they are in is shared, so every node must give a repository the same
 * id. Each id is a key `trawl/repository-ids/<name>` in etcd, created once; `trawl/repository-ids-next` is above
 * every id given. A name without one gets, in one transaction that fails if another node gave ids meanwhile, the
 * id the asking node already gave it (so the first node's grants keep their meaning) when no other name has that
 * id, else the next. A name the host renamed takes its former name's id, in the same transaction that deletes the
 * former name's key, while the former name is not configured: the grants bound to the id move with the name.
 */
import type { EtcdKeys } from './etcd.js';

const IDS_PREFIX = 'trawl/repository-ids/';
const NEXT_KEY = 'trawl/repository-ids-next';
/** Names given ids in one transaction, at most (etcd takes 128 operations). */
const NAMES_PER_TRANSACTION = 100;
const ATTEMPTS = 20;

/**
 * The cluster's id of each of `names`, giving ids to those without one; `local`: the ids this node gave before;
 * `renamed`: the former name of each name a host renamed.
 */
export async function sharedRepositoryIds(
  etcd: EtcdKeys,
  names: readonly string[],
  local: ReadonlyMap<string, number>,
  renamed: ReadonlyMap<string, string> = new Map(),
): Promise<Map<string, number>> {
  const present = new Set(names);
  for (let attempt = 1; ; attempt++) {
    const listed = await etcd.getAll().prefix(IDS_PREFIX).exec();
    const ids = new Map(listed.kvs.map((kv) => [kv.key.toString().slice(IDS_PREFIX.length), Number(kv.value.toString())]));
    const counter = await etcd.get(NEXT_KEY).exec();
    const taken = new Set(ids.values());
    let next = Math.max(Number(counter.kvs[0]?.value.toString() ?? 1), ...[...taken].map((id) => id + 1));
    const missing = names.filter((name) => !ids.has(name)).slice(0, NAMES_PER_TRANSACTION);
    if (missing.length === 0) return new Map(names.map((name) => [name, ids.get(name)!]));
    const given = new Map<string, number>();
    const moved = new Set<string>();
    for (const name of missing) {
      const former = renamed.get(name);
      const mine = local.get(name);
      let id: number;
      if (former !== undefined && ids.has(former) && !present.has(former) && !moved.has(former)) {
        id = ids.get(former)!;
        moved.add(former);
      } else id = mine !== undefined && !taken.has(mine) ? mine : next++;
      taken.add(id);
      next = Math.max(next, id + 1);
      given.set(name, id);
    }
    const revision = counter.kvs[0]?.mod_revision ?? 0;
    const result = await etcd
      .if(NEXT_KEY, 'Mod', '==', revision)
      .then(
        ...[...given].map(([name, id]) => etcd.put(IDS_PREFIX + name).value(String(id))),
        ...[...moved].map((former) => etcd.delete().key(IDS_PREFIX + former)),
        etcd.put(NEXT_KEY).value(String(next)),
      )
      .commit();
    // Another node gave ids meanwhile (the counter moved): read them and decide again.
    if (!result.succeeded && attempt === ATTEMPTS) throw new Error('cluster: repository ids could not be given: other nodes kept giving ids first');
  }
}
