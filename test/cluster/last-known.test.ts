import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readLastKnown, rememberCluster } from '../../src/cluster/last-known.js';
import { tempDir } from '../helpers/tmp.js';

t.test('what a node last knew of its cluster is kept, merged, and a damaged file is reported, never read as empty', async (t) => {
  const dataDir = tempDir(t, 'trawl-last-known-');
  t.equal(readLastKnown(dataDir), null, 'a node that never joined knows nothing');
  rememberCluster(dataDir, { held: [3, 1] });
  rememberCluster(dataDir, { repositoryIds: { 'example.com/a': 4 } });
  t.same(readLastKnown(dataDir), { held: [3, 1], repositoryIds: { 'example.com/a': 4 } }, 'each change is kept beside the others');
  rememberCluster(dataDir, { held: [] });
  t.same(readLastKnown(dataDir), { held: [], repositoryIds: { 'example.com/a': 4 } }, 'a node that holds nothing knows it');

  const file = path.join(dataDir, 'state', 'cluster-last-known.json');
  for (const damaged of ['{"version":1,"held":[1],"repositoryIds":{"a":0}}', '{"version":2,"held":[],"repositoryIds":{}}', '{"held":', '']) {
    fs.writeFileSync(file, damaged);
    t.throws(() => readLastKnown(dataDir), /cluster-last-known\.json is damaged/, `refused: ${JSON.stringify(damaged)}`);
  }
  rememberCluster(dataDir, { held: [2] });
  t.same(readLastKnown(dataDir), { held: [2], repositoryIds: {} }, 'the next change replaces a damaged file (etcd holds the truth)');
});
