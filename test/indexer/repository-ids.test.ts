import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { assignRepositoryIds } from '../../src/indexer/repository-ids.js';
import type { Manifest } from '../../src/index/manifest.js';
import { tempDir } from '../helpers/tmp.js';

const manifestWith = (ids: Record<string, number>, nextRepositoryId: number): Manifest => ({
  version: 1,
  generation: 3,
  nextRepositoryId,
  repositories: Object.fromEntries(
    Object.entries(ids).map(([name, id]) => [
      name,
      { id, shards: [], branches: [], fingerprint: '', state: 'ready', warnings: [], documents: 0, contentBytes: 0 },
    ]),
  ),
});
const empty = manifestWith({}, 1);

t.test('ids are kept in the state directory, given once, never reused', async (t) => {
  const dataDir = tempDir(t);
  t.same(
    [...assignRepositoryIds(dataDir, ['a', 'b'], empty)],
    [
      ['a', 1],
      ['b', 2],
    ],
    'new names get the next ids',
  );
  t.same(
    [...assignRepositoryIds(dataDir, ['b', 'a'], empty)],
    [
      ['b', 2],
      ['a', 1],
    ],
    'in any order, the same ids',
  );
  t.same([...assignRepositoryIds(dataDir, ['c'], empty)], [['c', 3]], 'a removed name keeps its id on record; a new one never gets a freed id');
  t.same([...assignRepositoryIds(dataDir, ['a'], empty)], [['a', 1]], 'a name back again has its old id');
  t.ok(fs.existsSync(path.join(dataDir, 'state', 'repository-ids.json')), 'beside the state log');
});

t.test("a renamed repository takes its former name's id, only while the former name is gone", async (t) => {
  const dataDir = tempDir(t);
  assignRepositoryIds(dataDir, ['host/acme/api', 'host/acme/web'], empty);
  const renamed = new Map([['host/acme/api-v2', 'host/acme/api']]);
  t.same(
    [...assignRepositoryIds(dataDir, ['host/acme/api-v2', 'host/acme/web'], empty, renamed)],
    [
      ['host/acme/api-v2', 1],
      ['host/acme/web', 2],
    ],
    'the id moves to the new name',
  );
  t.same(
    [...assignRepositoryIds(dataDir, ['host/acme/api', 'host/acme/api-v2'], empty)],
    [
      ['host/acme/api', 3],
      ['host/acme/api-v2', 1],
    ],
    'the former name, back as another repository, gets a new id',
  );
  t.same(
    [...assignRepositoryIds(dataDir, ['x/new', 'host/acme/web'], empty, new Map([['x/new', 'host/acme/web']]))],
    [
      ['x/new', 4],
      ['host/acme/web', 2],
    ],
    'a former name still present keeps its id',
  );
});

t.test('an install from before the id file keeps the ids its manifest gave (its grants use them)', async (t) => {
  const dataDir = tempDir(t);
  t.same(
    [...assignRepositoryIds(dataDir, ['old', 'new'], manifestWith({ old: 7 }, 9))],
    [
      ['old', 7],
      ['new', 9],
    ],
  );
});

t.test('a damaged id file is an error, never silently replaced', async (t) => {
  const dataDir = tempDir(t);
  assignRepositoryIds(dataDir, ['a'], empty);
  const file = path.join(dataDir, 'state', 'repository-ids.json');
  for (const text of [
    '{ not json',
    JSON.stringify({ version: 1, nextId: 2, ids: { a: 1, b: 1 } }),
    JSON.stringify({ version: 1, nextId: 1, ids: { a: 1 } }),
    JSON.stringify({ version: 2, nextId: 2, ids: {} }),
  ]) {
    fs.writeFileSync(file, text);
    t.throws(() => assignRepositoryIds(dataDir, ['a'], empty), /restore it from the state backup/, text);
    t.equal(fs.readFileSync(file, 'utf8'), text, 'and left as it is');
  }
});
