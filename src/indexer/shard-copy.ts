/**
 * A repository's shards copied from another node of the cluster that built them from the same commits with the same
 * settings, instead of built here (docs/cluster.md, "Indexing"). Each file is checked against the sha256 that node
 * recorded as it built it: a shard damaged on its disk or on the way is refused, and the repository is built here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { PeerShardOffer } from '../api/cluster-schemas.js';
import { validator } from '../api/validate.js';
import { askPeer, openPeer, postedJson } from '../cluster/peer-client.js';
import { AtomicFileWriter } from '../index/atomic-file.js';
import { ShardFormatError } from '../index/errors.js';
import { SHARD_FILE_EXTENSION } from '../index/format.js';
import { Shard } from '../index/shard-reader.js';
import type { IndexedBranch } from '../index/model.js';
import type { NotCopied } from '../worker/index-protocol.js';
import type { BuildResult } from './build-shards.js';

/** A node that sends nothing for this long is given up on. */
const STALL_MS = 30_000;

const offerSchema = validator(PeerShardOffer);
type ShardOffer = Static<typeof PeerShardOffer>;

/** What the copied shards must have been built from: the repository's cluster id, its place-free fingerprint, its commits. */
export interface WantedShards {
  repository: string;
  id: number;
  fingerprint: string;
  branches: readonly IndexedBranch[];
}

export interface CopiedShards extends BuildResult {
  sha256: string[];
  /** The node they were copied from. */
  from: string;
}

/**
 * The shards of the first of `nodes` (base URLs) that offers ones built as `wanted`, written into `shardDirectory` as
 * `<fileStem>.<i>.trawl`; undefined when none does, with why each node's were not copied pushed to `refused`.
 */
export async function copyShards(
  wanted: WantedShards,
  nodes: readonly string[],
  key: string,
  target: { shardDirectory: string; fileStem: string },
  refused: NotCopied[],
): Promise<CopiedShards | undefined> {
  for (const node of nodes) {
    let offer: ShardOffer;
    try {
      offer = await offerOf(node, wanted.repository, key);
    } catch (error) {
      refused.push({ node, reason: (error as Error).message, damaged: false });
      continue;
    }
    const difference = differenceOf(offer, wanted);
    if (difference) {
      refused.push({ node, reason: `its shards are of ${difference}`, damaged: false });
      continue;
    }
    try {
      return await copy(node, offer, key, target);
    } catch (error) {
      refused.push({ node, reason: (error as Error).message, damaged: error instanceof ShardDamagedError });
    }
  }
  return undefined;
}

/** A shard that came other than offered, in length or sha256: damaged on the offering node's disk, or on the way. */
export class ShardDamagedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardDamagedError';
  }
}

/** The sha256 (hex) of a file, read a MiB at a time. */
export function sha256Of(file: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = fs.openSync(file, 'r');
  try {
    for (let read; (read = fs.readSync(fd, buffer)) > 0;) hash.update(buffer.subarray(0, read));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * The sha256 of each of `files` in `shardDirectory`, each taken only after the file passed the shard format's full
 * check (every section's checksum): sums for shards built before sums were recorded, which vouch for nothing the
 * checksums do not. Null when a file fails the check.
 */
export function verifiedSums(shardDirectory: string, files: readonly string[]): string[] | null {
  const sums: string[] = [];
  for (const file of files) {
    const bytes = fs.readFileSync(path.join(shardDirectory, file));
    try {
      Shard.fromBuffer(bytes, { verify: 'full' });
    } catch (error) {
      if (error instanceof ShardFormatError) return null;
      throw error;
    }
    sums.push(createHash('sha256').update(bytes).digest('hex'));
  }
  return sums;
}

async function copy(
  node: string,
  offer: ShardOffer,
  key: string,
  { shardDirectory, fileStem }: { shardDirectory: string; fileStem: string },
): Promise<CopiedShards> {
  const shards: string[] = [];
  try {
    for (const [i, shard] of offer.shards.entries()) {
      const name = `${fileStem}.${i}${SHARD_FILE_EXTENSION}`;
      await download(node, key, shard, path.join(shardDirectory, name));
      shards.push(name);
    }
  } catch (error) {
    for (const name of shards) fs.rmSync(path.join(shardDirectory, name), { force: true });
    throw error;
  }
  const { documents, contentBytes, warnings } = offer;
  const shardBytes = offer.shards.reduce((sum, shard) => sum + shard.bytes, 0);
  const sha256 = offer.shards.map((shard) => shard.sha256);
  return { shards, sha256, documents, contentBytes, sourceBytes: 0, shardBytes, warnings, from: node };
}

async function offerOf(node: string, repository: string, key: string): Promise<ShardOffer> {
  const answer = await askPeer(`${node}/api/cluster/shards`, postedJson({ repository }, key, AbortSignal.timeout(STALL_MS)));
  if (answer.status !== 200) throw new Error(`it answered ${answer.status}: ${answer.body.subarray(0, 200).toString()}`);
  let offer: unknown;
  try {
    offer = JSON.parse(answer.body.toString());
  } catch {
    offer = undefined;
  }
  if (!offerSchema.check.Check(offer)) throw new Error('its answer is not an offer of shards');
  return offer;
}

/** How `offer` differs from what is wanted; undefined when it is what this node would build. */
function differenceOf(offer: ShardOffer, wanted: WantedShards): string | undefined {
  if (offer.id !== wanted.id) return `repository id ${offer.id}, not ${wanted.id}`;
  if (offer.fingerprint !== wanted.fingerprint) return 'other settings (the config or the shard format)';
  const commits = (branches: readonly IndexedBranch[]) => branches.map((branch) => `${branch.name} ${branch.commit}`).join('\n');
  if (commits(offer.branches) !== commits(wanted.branches)) return 'other commits';
  return undefined;
}

/** One shard of an offer into `file`, published only once its length and sha256 are the offer's. */
async function download(node: string, key: string, shard: ShardOffer['shards'][number], file: string): Promise<void> {
  const stalled = new AbortController();
  const timer = setTimeout(() => stalled.abort(new Error(`it sent nothing of ${shard.file} for ${STALL_MS / 1000} s`)), STALL_MS);
  const writer = new AtomicFileWriter(file);
  try {
    const answer = await openPeer(`${node}/api/cluster/shard`, postedJson({ file: shard.file }, key, stalled.signal));
    if (answer.statusCode !== 200) {
      answer.destroy();
      throw new Error(`it answered ${answer.statusCode} for ${shard.file}`);
    }
    const hash = createHash('sha256');
    for await (const chunk of answer as AsyncIterable<Buffer>) {
      timer.refresh();
      if (writer.position + chunk.length > shard.bytes) throw new ShardDamagedError(`${shard.file} is longer than the ${shard.bytes} bytes offered`);
      hash.update(chunk);
      writer.write(chunk);
    }
    if (writer.position !== shard.bytes) throw new ShardDamagedError(`${writer.position} bytes of ${shard.file}'s ${shard.bytes} came`);
    if (hash.digest('hex') !== shard.sha256) throw new ShardDamagedError(`${shard.file} does not match the sha256 recorded when it was built`);
    writer.commit();
  } catch (error) {
    writer.abort();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
