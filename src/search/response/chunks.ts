/**
 * Chunks of a file result: the lines around each match, `contextLines` on
 * either side, merged when their windows overlap or touch, with the match
 * ranges and the ctags definitions the matches fall in. Laid out once
 * (`layChunks`), then made into the API's objects (`chunkObjects`) or
 * written as their JSON (`writeChunks`), which makes no object per range.
 */
import type { Chunk, Range, SymbolInfo } from '../../api/types.js';
import type { DocumentSymbol } from '../../index/model.js';
import { LineIndex, NEWLINE, RANGE_WORDS } from './positions.js';
import { byStart } from '../../index/ranges.js';
import { SymbolSpans } from '../symbol-spans.js';
import { encodedJson, type JsonWriter } from './json-writer.js';

export interface ChunkInput {
  content: Buffer;
  /** Flattened [start, end, …] byte ranges, in any order. */
  ranges: readonly number[];
  contextLines: number;
  /** The file's definitions by start offset (only those overlapping `ranges` are needed). */
  symbols: DocumentSymbol[];
}

/** A chunk before it is an object or JSON: its ranges are ranges [firstRange, firstRange + ranges) of its file's `positions`. */
export interface ChunkLayout {
  /** The chunk's text is the file's bytes [byteOffset, to). */
  byteOffset: number;
  to: number;
  lineNumber: number;
  firstRange: number;
  ranges: number;
  symbols?: SymbolInfo[];
}

/** A file's chunks laid out; `positions` holds each range's start and end positions (LineIndex.pushPosition), ranges by start. */
export interface ChunksLayout {
  chunks: ChunkLayout[];
  positions: number[];
}

export function layChunks({ content, ranges, contextLines, symbols }: ChunkInput): ChunksLayout {
  const lines = new LineIndex(content);
  const sorted = byStart(ranges);
  const positions: number[] = [];
  // A group's byte bounds are found as soon as its lines are known: LineIndex walks from the
  // offset it last counted to, which is then the group's latest range.
  const groups: { last: number; from: number; to: number; startLine: number; firstRange: number; ranges: number }[] = [];
  for (let i = 0; i < sorted.length; i += 2) {
    const start = sorted[i]!;
    const end = sorted[i + 1]!;
    const startLine = lines.pushPosition(start, positions);
    const endLine = lines.pushPosition(end, positions);
    const first = Math.max(1, startLine - contextLines);
    // A range ending with a '\n' ends on that newline's line. Past the last line, lineEnd is
    // the end of the content, so `last` needs no clamp.
    const last = endLine - (end > start && content[end - 1] === NEWLINE ? 1 : 0) + contextLines;
    const current = groups[groups.length - 1];
    if (current && first <= current.last + 1) {
      if (last > current.last) {
        current.last = last;
        current.to = lines.lineEnd(last);
      }
      current.ranges++;
    } else {
      groups.push({ last, from: lines.lineStart(first), to: lines.lineEnd(last), startLine: first, firstRange: i / 2, ranges: 1 });
    }
  }
  const spans = new SymbolSpans(symbols);
  const chunks = groups.map(({ from, to, startLine, firstRange, ranges }): ChunkLayout => {
    const chunk: ChunkLayout = { byteOffset: from, to, lineNumber: startLine, firstRange, ranges };
    if (symbols.length > 0) {
      const definitions = symbolsAt(content, spans.overlapping(sorted, firstRange, firstRange + ranges));
      if (definitions.length > 0) chunk.symbols = definitions;
    }
    return chunk;
  });
  return { chunks, positions };
}

export function chunkObjects(content: Buffer, { chunks, positions }: ChunksLayout): Chunk[] {
  return chunks.map(({ byteOffset, to, lineNumber, firstRange, ranges, symbols }) => {
    const chunk: Chunk = { content: content.toString('utf8', byteOffset, to), matchRanges: rangeObjects(positions, firstRange, ranges), contentStart: { byteOffset, lineNumber, column: 1 } };
    if (symbols) chunk.symbols = symbols;
    return chunk;
  });
}

const FIRST_CHUNK = encodedJson('{"content":');
const NEXT_CHUNK = encodedJson(',{"content":');
const MATCH_RANGES = encodedJson(',"matchRanges":');
const CONTENT_START = encodedJson(',"contentStart":{"byteOffset":');
const LINE_NUMBER = encodedJson(',"lineNumber":');
const FIRST_COLUMN = encodedJson(',"column":1}');
const FIRST_RANGE = encodedJson('{"start":{"byteOffset":');
const NEXT_RANGE = encodedJson(',{"start":{"byteOffset":');
const COLUMN = encodedJson(',"column":');
const RANGE_END = encodedJson('},"end":{"byteOffset":');
const RANGE_CLOSE = encodedJson('}}');

/** Writes JSON.stringify(chunkObjects(layout)) without the objects; `content` is the file's, the chunks' text is escaped from it. */
export function writeChunks(json: JsonWriter, content: Buffer, { chunks, positions }: ChunksLayout): void {
  json.raw('[');
  for (let i = 0; i < chunks.length; i++) {
    const { byteOffset, to, lineNumber, firstRange, ranges, symbols } = chunks[i]!;
    json.encoded(i > 0 ? NEXT_CHUNK : FIRST_CHUNK);
    json.utf8String(content, byteOffset, to);
    json.encoded(MATCH_RANGES);
    writeRanges(json, positions, firstRange, ranges);
    json.encoded(CONTENT_START);
    json.integer(byteOffset);
    json.encoded(LINE_NUMBER);
    json.integer(lineNumber);
    json.encoded(FIRST_COLUMN);
    if (symbols) {
      json.raw(',"symbols":');
      json.value(symbols);
    }
    json.raw('}');
  }
  json.raw(']');
}

/** Ranges [first, first + count) of `positions` as the API's objects. */
export function rangeObjects(positions: readonly number[], first: number, count: number): Range[] {
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
export function writeRanges(json: JsonWriter, positions: readonly number[], first: number, count: number): void {
  json.raw('[');
  for (let at = first * RANGE_WORDS, end = at + count * RANGE_WORDS; at < end; at += RANGE_WORDS) {
    json.encoded(at > first * RANGE_WORDS ? NEXT_RANGE : FIRST_RANGE);
    json.integer(positions[at]!);
    json.encoded(LINE_NUMBER);
    json.integer(positions[at + 1]!);
    json.encoded(COLUMN);
    json.integer(positions[at + 2]!);
    json.encoded(RANGE_END);
    json.integer(positions[at + 3]!);
    json.encoded(LINE_NUMBER);
    json.integer(positions[at + 4]!);
    json.encoded(COLUMN);
    json.integer(positions[at + 5]!);
    json.encoded(RANGE_CLOSE);
  }
  json.raw(']');
}

/** What a chunk says of the definitions its ranges overlap. */
function symbolsAt(content: Buffer, overlapping: readonly DocumentSymbol[]): SymbolInfo[] {
  return overlapping.map((symbol) => {
    const info: SymbolInfo = { symbol: content.toString('utf8', symbol.start, symbol.end), kind: symbol.kind };
    if (symbol.parent) info.parent = symbol.parent;
    return info;
  });
}
