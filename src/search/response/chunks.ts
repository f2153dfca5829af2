/**
 * Chunks of a file result: the lines around each match, `contextLines` on
 * either side, merged when their windows overlap or touch, with the match
 * ranges and the ctags definitions the matches fall in. Laid out once
 * (`layChunks`), then made into the API's objects (`chunkObjects`) or
 * written as their JSON by the addon (`writeChunks`), which makes no object per range.
 */
import type { Chunk, Range, SymbolInfo } from '../../api/types.js';
import type { DocumentSymbol } from '../../index/model.js';
import { native } from '../../../native/index.js';
import { RANGE_WORDS } from './positions.js';
import { byStart } from '../../index/ranges.js';
import { SymbolSpans } from '../symbol-spans.js';
import type { JsonWriter } from './json-writer.js';
import { WordScratch } from './word-scratch.js';

export interface ChunkInput {
  content: Buffer;
  /** Flattened [start, end, …] byte ranges, in any order. */
  ranges: readonly number[];
  contextLines: number;
  /** The file's definitions by start offset (only those overlapping `ranges` are needed). */
  symbols: DocumentSymbol[];
}

/**
 * A file's chunks laid out by the addon (native/index.ts, layChunks), in this thread's scratch: valid
 * until the next file is laid out (word-scratch.ts). `chunks` holds CHUNK_WORDS words a chunk:
 * byteOffset and to (its text is the file's bytes [byteOffset, to)), lineNumber, firstRange and ranges (its
 * ranges are ranges [firstRange, firstRange + ranges) of `positions`), and two left to writeChunks. `positions`
 * holds each range's start and end positions (positions.ts), ranges by start; `symbols` the definitions of
 * the chunks that have some, by chunk.
 */
export interface ChunksLayout {
  chunks: Uint32Array;
  positions: Uint32Array;
  symbols?: Map<number, SymbolInfo[]>;
}

/** Words per chunk of a layout's table (native/index.ts, writeChunksJson). */
const CHUNK_WORDS = 7;
const NO_WORDS = new Uint32Array(0);
const NO_SYMBOLS = new Uint8Array(0);

/** A file without chunks. */
export const NO_CHUNKS: ChunksLayout = { chunks: NO_WORDS, positions: NO_WORDS };

const rangesScratch = new WordScratch();
const positionsScratch = new WordScratch();
const chunksScratch = new WordScratch();

export function layChunks({ content, ranges, contextLines, symbols }: ChunkInput): ChunksLayout {
  const sorted = byStart(ranges);
  const words = rangesScratch.take(sorted.length);
  words.set(sorted);
  const positions = positionsScratch.take((sorted.length / 2) * RANGE_WORDS);
  const table = chunksScratch.take((sorted.length / 2) * CHUNK_WORDS);
  const chunks = table.subarray(0, native.layChunks(content, words, contextLines, positions, table) * CHUNK_WORDS);
  if (symbols.length === 0) return { chunks, positions };
  const spans = new SymbolSpans(symbols);
  const definitionsOf = new Map<number, SymbolInfo[]>();
  for (let at = 0; at < chunks.length; at += CHUNK_WORDS) {
    const firstRange = chunks[at + 3]!;
    const definitions = symbolsAt(content, spans.overlapping(sorted, firstRange, firstRange + chunks[at + 4]!));
    if (definitions.length > 0) definitionsOf.set(at / CHUNK_WORDS, definitions);
  }
  return { chunks, positions, symbols: definitionsOf };
}

/** Bytes of content the chunks carry. */
export function chunksContentBytes({ chunks }: ChunksLayout): number {
  let bytes = 0;
  for (let at = 0; at < chunks.length; at += CHUNK_WORDS) bytes += chunks[at + 1]! - chunks[at]!;
  return bytes;
}

export function chunkObjects(content: Buffer, { chunks, positions, symbols }: ChunksLayout): Chunk[] {
  const objects: Chunk[] = [];
  for (let at = 0; at < chunks.length; at += CHUNK_WORDS) {
    const byteOffset = chunks[at]!;
    const chunk: Chunk = {
      content: content.toString('utf8', byteOffset, chunks[at + 1]),
      matchRanges: rangeObjects(positions, chunks[at + 3]!, chunks[at + 4]!),
      contentStart: { byteOffset, lineNumber: chunks[at + 2]!, column: 1 },
    };
    const definitions = symbols?.get(at / CHUNK_WORDS);
    if (definitions) chunk.symbols = definitions;
    objects.push(chunk);
  }
  return objects;
}

/** Writes JSON.stringify(chunkObjects(layout)) without the objects; `content` is the file's, the chunks' text is escaped from it. */
export function writeChunks(json: JsonWriter, content: Buffer, { chunks, positions, symbols }: ChunksLayout): void {
  if (chunks.length === 0) return json.raw('[]'); // a file matched by name: no call into the addon
  let symbolsJson = NO_SYMBOLS;
  if (symbols && symbols.size > 0) {
    // The few chunks with definitions have them as JSON, one after the other, each chunk its bytes' bounds.
    const texts: string[] = [];
    let bytes = 0;
    for (const [chunk, definitions] of symbols) {
      const text = JSON.stringify(definitions);
      texts.push(text);
      chunks[chunk * CHUNK_WORDS + 5] = bytes;
      bytes += Buffer.byteLength(text);
      chunks[chunk * CHUNK_WORDS + 6] = bytes;
    }
    symbolsJson = Buffer.from(texts.join(''));
  }
  json.direct((bytes, at) => native.writeChunksJson(content, chunks, positions, symbolsJson, bytes, at));
}

/** Ranges [first, first + count) of `positions` as the API's objects. */
export function rangeObjects(positions: Uint32Array, first: number, count: number): Range[] {
  const ranges: Range[] = [];
  for (let at = first * RANGE_WORDS, end = at + count * RANGE_WORDS; at < end; at += RANGE_WORDS) {
    ranges.push({
      start: { byteOffset: positions[at]!, lineNumber: positions[at + 1]!, column: positions[at + 2]! },
      end: { byteOffset: positions[at + 3]!, lineNumber: positions[at + 4]!, column: positions[at + 5]! },
    });
  }
  return ranges;
}

/** Writes JSON.stringify(rangeObjects(positions, first, count)) without the objects. */
export function writeRanges(json: JsonWriter, positions: Uint32Array, first: number, count: number): void {
  if (count === 0) return json.raw('[]'); // a file matched by content alone: no call into the addon
  json.direct((bytes, at) => native.writeRangesJson(positions, first, count, bytes, at));
}

/** What a chunk says of the definitions its ranges overlap. */
function symbolsAt(content: Buffer, overlapping: readonly DocumentSymbol[]): SymbolInfo[] {
  return overlapping.map((symbol) => {
    const info: SymbolInfo = { symbol: content.toString('utf8', symbol.start, symbol.end), kind: symbol.kind };
    if (symbol.parent) info.parent = symbol.parent;
    return info;
  });
}
