// A daemon loads at start only what serving needs (docs/design.md, "Start"): the etcd client and its gRPC
// stack only in a cluster, octokit only at a GitHub connection's first listing, TypeBox as one bundled module.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const daemonModule = new URL('../../dist/src/server/daemon.js', import.meta.url).href;
const typeboxModule = fileURLToPath(new URL('../../dist/src/api/typebox.js', import.meta.url));

t.test('importing the daemon loads neither etcd3, gRPC nor octokit', async (t) => {
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(daemonModule)});
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify(loaded.filter((file) => /node_modules\\/(etcd3|@grpc|@octokit|protobufjs)\\//.test(file))));
    const { openEtcd } = await import(${JSON.stringify(new URL('../../dist/src/cluster/etcd.js', import.meta.url).href)});
    (await openEtcd({ etcd: ['http://127.0.0.1:1'], keyPrefix: '' })).close();
    console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/node_modules/etcd3/'))));
  `;
  const [atStart, afterOpen] = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim().split('\n');
  t.same(JSON.parse(atStart!), [], 'nothing of them loaded by the import');
  t.equal(afterOpen, 'true', 'the etcd client loads at the first openEtcd');
});

t.test('the build bundles TypeBox into one module', async (t) => {
  const source = fs.readFileSync(typeboxModule, 'utf8');
  t.notMatch(source, /from\s+["']@sinclair\/typebox/, 'no import of the package is left');
  const { Type, TypeCompiler, Value } = (await import(typeboxModule)) as typeof import('../../src/api/typebox.js');
  const schema = Type.Object({ name: Type.String() });
  t.ok(TypeCompiler.Compile(schema).Check({ name: 'x' }));
  t.notOk(Value.Check(schema, { name: 1 }));
});

t.test("the build bundles the CLI and the thread entries: they import only the bundle's chunks", async (t) => {
  for (const entry of ['cli/main.js', 'worker/search-thread.js', 'worker/index-thread.js', 'worker/symbol-thread.js']) {
    const source = fs.readFileSync(fileURLToPath(new URL(`../../dist/src/${entry}`, import.meta.url)), 'utf8');
    const relative = [...source.matchAll(/(?:from\s*|import\s*\(\s*)["'](\.[^"']+)["']/g)].map((found) => found[1]!);
    t.ok(relative.length > 0, `${entry} imports chunks`);
    t.same(
      relative.filter((specifier) => !specifier.startsWith('../chunks/')),
      [],
      `${entry} imports no module of dist/src but the chunks`,
    );
  }
});
