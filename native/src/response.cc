// A search response's bulk: what costs per byte and per range in JavaScript
// (docs/design.md, "Rendering a response"). layChunks finds a file's positions
// and chunks in one pass; the JSON writers write straight into the caller's
// memory. Each writer first bounds what it may write; when that does not fit
// between `at` and the end of `out` it writes nothing and returns minus the
// bound, for the caller to make room and call again.

#include "response.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "args.h"
#include "find.h"

namespace trawl {
namespace {

// A position is byteOffset, lineNumber, column (src/search/response/positions.ts POSITION_WORDS);
// a range its start's, then its end's.
constexpr size_t kRangeWords = 6;
// A chunk of writeChunksJson's table: byteOffset, to, lineNumber, firstRange, ranges, symbolsFrom, symbolsTo.
constexpr size_t kChunkWords = 7;
constexpr size_t kMaxDigits = 10;  // of a uint32

template <size_t N>
constexpr size_t Length(const char (&)[N]) {
  return N - 1;
}

constexpr char kRangeStart[] = "{\"start\":{\"byteOffset\":";
constexpr char kLineNumber[] = ",\"lineNumber\":";
constexpr char kColumn[] = ",\"column\":";
constexpr char kRangeEnd[] = "},\"end\":{\"byteOffset\":";
constexpr char kRangeClose[] = "}}";
constexpr char kChunkStart[] = "{\"content\":";
constexpr char kMatchRanges[] = ",\"matchRanges\":";
constexpr char kContentStart[] = ",\"contentStart\":{\"byteOffset\":";
constexpr char kFirstColumn[] = ",\"column\":1}";
constexpr char kSymbols[] = ",\"symbols\":";

// The most a range writes, its leading comma included.
constexpr size_t kRangeBound = 1 + Length(kRangeStart) + 2 * Length(kLineNumber) + 2 * Length(kColumn) + Length(kRangeEnd) +
                               Length(kRangeClose) + kRangeWords * kMaxDigits;
// The most a chunk writes besides its content, its ranges and its symbols: its leading comma included.
constexpr size_t kChunkBound = 1 + Length(kChunkStart) + 2 + Length(kMatchRanges) + 2 + Length(kContentStart) +
                               Length(kLineNumber) + Length(kFirstColumn) + 2 * kMaxDigits + Length(kSymbols) + 1;

// The most a JSON string of n content bytes writes: each byte as a six-byte \u00XX, and the quotes.
constexpr size_t StringBound(size_t n) {
  return 6 * n + 2;
}

template <size_t N>
inline uint8_t* Put(uint8_t* out, const char (&text)[N]) {
  std::memcpy(out, text, N - 1);
  return out + N - 1;
}

inline uint8_t* PutUint32(uint8_t* out, uint32_t value) {
  char digits[kMaxDigits];
  size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (count > 0) *out++ = static_cast<uint8_t>(digits[--count]);
  return out;
}

// 1 for an ASCII byte JSON.stringify writes as it is.
constexpr std::array<uint8_t, 256> PlainBytes() {
  std::array<uint8_t, 256> plain{};
  for (int byte = 0x20; byte < 0x80; byte++) plain[byte] = byte != '"' && byte != '\\';
  return plain;
}
constexpr std::array<uint8_t, 256> kPlain = PlainBytes();

// JSON.stringify's escape of an ASCII byte that is not plain.
inline uint8_t* PutEscape(uint8_t* out, uint8_t byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out++ = '\\';
  switch (byte) {
    case '"': *out++ = '"'; break;
    case '\\': *out++ = '\\'; break;
    case '\b': *out++ = 'b'; break;
    case '\t': *out++ = 't'; break;
    case '\n': *out++ = 'n'; break;
    case '\f': *out++ = 'f'; break;
    case '\r': *out++ = 'r'; break;
    default:
      out = Put(out, "u00");
      *out++ = static_cast<uint8_t>(kHex[byte >> 4]);
      *out++ = static_cast<uint8_t>(kHex[byte & 0xf]);
  }
  return out;
}

// JSON.stringify of the string bytes[0, n) decode to as UTF-8: a well-formed sequence is copied, each maximal
// ill-formed subpart (the WHATWG decoder's, which Node's toString follows) becomes U+FFFD.
uint8_t* PutString(uint8_t* out, const uint8_t* bytes, size_t n) {
  const uint8_t* end = bytes + n;
  *out++ = '"';
  while (bytes < end) {
    uint8_t lead = *bytes;
    if (kPlain[lead]) {
      *out++ = lead;
      bytes++;
      continue;
    }
    if (lead < 0x80) {
      out = PutEscape(out, lead);
      bytes++;
      continue;
    }
    size_t continuations;
    uint8_t low = 0x80, high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      continuations = 1;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      continuations = 2;
      if (lead == 0xe0) low = 0xa0;
      if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      continuations = 3;
      if (lead == 0xf0) low = 0x90;
      if (lead == 0xf4) high = 0x8f;
    } else {
      continuations = 0;  // never a lead: a subpart of its own
    }
    const uint8_t* next = bytes + 1;
    size_t seen = 0;
    for (; seen < continuations && next < end && *next >= low && *next <= high; seen++, next++) {
      low = 0x80;
      high = 0xbf;
    }
    if (continuations > 0 && seen == continuations) {
      std::memcpy(out, bytes, next - bytes);
      out += next - bytes;
    } else {
      out = Put(out, "\xef\xbf\xbd");  // the byte that ended the subpart, if any, is read again as a lead
    }
    bytes = next;
  }
  *out++ = '"';
  return out;
}

uint8_t* PutRanges(uint8_t* out, const uint32_t* positions, size_t count) {
  *out++ = '[';
  for (size_t range = 0; range < count; range++, positions += kRangeWords) {
    if (range > 0) *out++ = ',';
    out = PutUint32(Put(out, kRangeStart), positions[0]);
    out = PutUint32(Put(out, kLineNumber), positions[1]);
    out = PutUint32(Put(out, kColumn), positions[2]);
    out = PutUint32(Put(out, kRangeEnd), positions[3]);
    out = PutUint32(Put(out, kLineNumber), positions[4]);
    out = PutUint32(Put(out, kColumn), positions[5]);
    out = Put(out, kRangeClose);
  }
  *out++ = ']';
  return out;
}

constexpr size_t RangesBound(size_t count) {
  return 2 + count * kRangeBound;
}

// The memory a writer writes into: out[at, out.length), from its last two arguments.
struct Target {
  uint8_t* at;
  size_t room;
  uint8_t* start;  // out's first byte
};

// Arguments index and index + 1: out (a Uint8Array) and at.
bool TargetArg(const Napi::CallbackInfo& info, size_t index, const char* outName, const char* atName, const char* outOfBounds, Target* target) {
  TypedView out = TypedArg(info, index, napi_uint8_array, outName);
  if (info.Env().IsExceptionPending()) return false;
  int64_t at;
  if (!IntegerArg(info, index + 1, atName, &at)) return false;
  if (at < 0 || static_cast<uint64_t>(at) > out.length) {
    Napi::RangeError::New(info.Env(), outOfBounds).ThrowAsJavaScriptException();
    return false;
  }
  *target = {out.data + at, out.length - static_cast<size_t>(at), out.data};
  return true;
}

// Where the writer stopped, as an offset in `out`.
Napi::Value Written(Napi::Env env, const Target& target, uint8_t* end) {
  return Napi::Number::New(env, static_cast<double>(end - target.start));
}

// Minus `bound`: the room the writer needs, which `target` has not.
Napi::Value NoRoom(Napi::Env env, size_t bound) {
  return Napi::Number::New(env, -static_cast<double>(bound));
}

// Arguments index and index + 1: start and end of a span of something `length` long.
bool RangeArg(const Napi::CallbackInfo& info, size_t index, size_t length, const char* startName, const char* endName, const char* outOfBounds, size_t* start, size_t* end) {
  int64_t from, to;
  if (!IntegerArg(info, index, startName, &from) || !IntegerArg(info, index + 1, endName, &to)) return false;
  if (from < 0 || to < from || static_cast<uint64_t>(to) > length) {
    Napi::RangeError::New(info.Env(), outOfBounds).ThrowAsJavaScriptException();
    return false;
  }
  *start = static_cast<size_t>(from);
  *end = static_cast<size_t>(to);
  return true;
}

// writeJsonString(bytes, start, end, out, at) -> where it stopped in out, or minus the room it needs.
Napi::Value WriteJsonString(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView bytes = TypedArg(info, 0, napi_uint8_array, "writeJsonString: bytes (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  size_t start, end;
  if (!RangeArg(info, 1, bytes.length, "writeJsonString: start", "writeJsonString: end", "writeJsonString: start..end must lie within bytes", &start, &end)) return env.Undefined();
  Target target;
  if (!TargetArg(info, 3, "writeJsonString: out (Uint8Array)", "writeJsonString: at", "writeJsonString: at must lie within out", &target)) return env.Undefined();
  size_t bound = StringBound(end - start);
  if (bound > target.room) return NoRoom(env, bound);
  return Written(env, target, PutString(target.at, bytes.data + start, end - start));
}

// writeRangesJson(positions, first, count, out, at) -> where it stopped in out, or minus the room it needs.
Napi::Value WriteRangesJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView positions = TypedArg(info, 0, napi_uint32_array, "writeRangesJson: positions (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t first, count;
  if (!IntegerArg(info, 1, "writeRangesJson: first", &first) || !IntegerArg(info, 2, "writeRangesJson: count", &count)) return env.Undefined();
  if (first < 0 || count < 0 || static_cast<uint64_t>(first + count) > positions.length / kRangeWords) {
    Napi::RangeError::New(env, "writeRangesJson: first..first + count must lie within positions' ranges").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Target target;
  if (!TargetArg(info, 3, "writeRangesJson: out (Uint8Array)", "writeRangesJson: at", "writeRangesJson: at must lie within out", &target)) return env.Undefined();
  size_t bound = RangesBound(static_cast<size_t>(count));
  if (bound > target.room) return NoRoom(env, bound);
  const uint32_t* words = reinterpret_cast<const uint32_t*>(positions.data);
  return Written(env, target, PutRanges(target.at, words + static_cast<size_t>(first) * kRangeWords, static_cast<size_t>(count)));
}

// writeChunksJson(content, chunks, positions, symbols, out, at) -> where it stopped in out, or minus the room it needs.
Napi::Value WriteChunksJson(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView content = TypedArg(info, 0, napi_uint8_array, "writeChunksJson: content (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView table = TypedArg(info, 1, napi_uint32_array, "writeChunksJson: chunks (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView positions = TypedArg(info, 2, napi_uint32_array, "writeChunksJson: positions (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView symbols = TypedArg(info, 3, napi_uint8_array, "writeChunksJson: symbols (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  Target target;
  if (!TargetArg(info, 4, "writeChunksJson: out (Uint8Array)", "writeChunksJson: at", "writeChunksJson: at must lie within out", &target)) return env.Undefined();
  if (table.length % kChunkWords != 0) {
    Napi::RangeError::New(env, "writeChunksJson: chunks must hold 7 words a chunk").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const uint32_t* chunks = reinterpret_cast<const uint32_t*>(table.data);
  const uint32_t* words = reinterpret_cast<const uint32_t*>(positions.data);
  const size_t count = table.length / kChunkWords;
  const size_t rangesHeld = positions.length / kRangeWords;
  size_t bound = 2;
  for (const uint32_t* chunk = chunks; chunk < chunks + table.length; chunk += kChunkWords) {
    const uint64_t from = chunk[0], to = chunk[1], firstRange = chunk[3], ranges = chunk[4], symbolsFrom = chunk[5], symbolsTo = chunk[6];
    if (to < from || to > content.length || firstRange + ranges > rangesHeld || symbolsTo < symbolsFrom || symbolsTo > symbols.length) {
      Napi::RangeError::New(env, "writeChunksJson: a chunk reaches past content, positions or symbols").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    bound += kChunkBound + StringBound(to - from) + RangesBound(ranges) + (symbolsTo - symbolsFrom);
  }
  if (bound > target.room) return NoRoom(env, bound);
  uint8_t* out = target.at;
  *out++ = '[';
  for (size_t index = 0; index < count; index++) {
    const uint32_t* chunk = chunks + index * kChunkWords;
    if (index > 0) *out++ = ',';
    out = PutString(Put(out, kChunkStart), content.data + chunk[0], chunk[1] - chunk[0]);
    out = PutRanges(Put(out, kMatchRanges), words + static_cast<size_t>(chunk[3]) * kRangeWords, chunk[4]);
    out = PutUint32(Put(out, kContentStart), chunk[0]);
    out = PutUint32(Put(out, kLineNumber), chunk[2]);
    out = Put(out, kFirstColumn);
    if (chunk[6] > chunk[5]) {
      out = Put(out, kSymbols);
      std::memcpy(out, symbols.data + chunk[5], chunk[6] - chunk[5]);
      out += chunk[6] - chunk[5];
    }
    *out++ = '}';
  }
  *out++ = ']';
  return Written(env, target, out);
}

// '\n' bytes in [from, to): a loop over a few dozen bytes, SIMD beyond (the call costs about that much).
size_t NewlinesIn(const uint8_t* from, const uint8_t* to) {
  if (to - from <= 64) {
    size_t count = 0;
    for (; from < to; from++) count += *from == '\n';
    return count;
  }
  return HasAvx2() ? CountAvx2(from, to, '\n') : CountWith<Sse2Lanes>(from, to, '\n');
}

// Code points in [from, to): bytes that do not continue a UTF-8 sequence.
size_t CodePointsIn(const uint8_t* from, const uint8_t* to) {
  size_t count = 0;
  for (; from < to; from++) count += (*from & 0xc0) != 0x80;
  return count;
}

// Lines and columns of one text, asked in mostly ascending offsets (src/search/response/positions.ts
// defines them): each answer is counted on from the point the last one reached, so a pass over the
// matches of a file reads each byte about once, even on one long line with many matches.
class Lines {
 public:
  Lines(const uint8_t* text, size_t size) : text_(text), size_(size) {}

  // 1-based line of `offset` (a '\n' belongs to the line it ends).
  size_t LineOf(size_t offset) {
    if (offset >= at_) {
      newlines_ += NewlinesIn(text_ + at_, text_ + offset);
    } else if (offset >= at_ - offset) {
      newlines_ -= NewlinesIn(text_ + offset, text_ + at_);
    } else {
      newlines_ = NewlinesIn(text_, text_ + offset);
    }
    at_ = offset;
    return newlines_ + 1;
  }

  // Where 1-based `line` starts; the text's size past the last line.
  size_t LineStart(size_t line) { return AfterNewline(line - 1); }
  // Just past 1-based `line`, its '\n' included when it has one.
  size_t LineEnd(size_t line) { return AfterNewline(line); }

  // Writes offset's position (offset, line, column) to out[0, 3); returns its line.
  size_t Position(size_t offset, uint32_t* out) {
    size_t line = LineOf(offset);
    if (line == lastLine_ && offset >= lastOffset_) {
      lastColumn_ += CodePointsIn(text_ + lastOffset_, text_ + offset);
    } else {
      if (line != lastLine_) lastLineStart_ = LineStart(line);
      lastLine_ = line;
      lastColumn_ = 1 + CodePointsIn(text_ + lastLineStart_, text_ + offset);
    }
    lastOffset_ = offset;
    out[0] = static_cast<uint32_t>(offset);
    out[1] = static_cast<uint32_t>(line);
    out[2] = static_cast<uint32_t>(lastColumn_);
    return line;
  }

 private:
  // The offset just past the n-th '\n' (1-based; 0 for n = 0), or the text's size when there are fewer.
  size_t AfterNewline(size_t n) {
    if (n == 0) return 0;
    if (n <= newlines_) {
      // Back from the known point: the newlines before it are numbers newlines_, newlines_ − 1, …
      const uint8_t* found = text_ + at_;
      for (size_t k = newlines_; k >= n; k--) found = static_cast<const uint8_t*>(memrchr(text_, '\n', found - text_));
      return found - text_ + 1;
    }
    // Forward from it: the first after it is number newlines_ + 1.
    const uint8_t* from = text_ + at_;
    for (size_t k = newlines_; k < n; k++) {
      const uint8_t* found = static_cast<const uint8_t*>(memchr(from, '\n', text_ + size_ - from));
      if (found == nullptr) return size_;
      from = found + 1;
    }
    return from - text_;
  }

  const uint8_t* text_;
  size_t size_;
  // A known point: newlines_ '\n' bytes precede at_.
  size_t at_ = 0;
  size_t newlines_ = 0;
  // The last position made: its line (0: none yet), where that line starts, its offset and column.
  size_t lastLine_ = 0;
  size_t lastLineStart_ = 0;
  size_t lastOffset_ = 0;
  size_t lastColumn_ = 1;
};

// layChunks(content, ranges, contextLines, positions, chunks) -> how many chunks it wrote.
// See native/index.ts for the contract; src/search/response/chunks.ts for what a chunk is.
Napi::Value LayChunks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView content = TypedArg(info, 0, napi_uint8_array, "layChunks: content (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView rangesView = TypedArg(info, 1, napi_uint32_array, "layChunks: ranges (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t context;
  if (!IntegerArg(info, 2, "layChunks: contextLines", &context)) return env.Undefined();
  TypedView positionsView = TypedArg(info, 3, napi_uint32_array, "layChunks: positions (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView chunksView = TypedArg(info, 4, napi_uint32_array, "layChunks: chunks (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  const size_t count = rangesView.length / 2;
  const uint32_t* ranges = reinterpret_cast<const uint32_t*>(rangesView.data);
  if (rangesView.length % 2 != 0 || context < 0 || positionsView.length < count * kRangeWords || chunksView.length < count * kChunkWords) {
    Napi::RangeError::New(env, "layChunks: ranges must be pairs, contextLines not negative, and positions and chunks have room for every range").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  for (size_t range = 0; range < count; range++) {
    const uint32_t start = ranges[2 * range], end = ranges[2 * range + 1];
    if (end < start || end > content.length || (range > 0 && start < ranges[2 * range - 2])) {
      Napi::RangeError::New(env, "layChunks: each range must lie within content, ranges ordered by start").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  const size_t contextLines = static_cast<size_t>(context);
  uint32_t* positions = reinterpret_cast<uint32_t*>(positionsView.data);
  uint32_t* chunks = reinterpret_cast<uint32_t*>(chunksView.data);
  Lines lines(content.data, content.length);
  size_t chunkCount = 0;
  size_t lastLine = 0;  // of the chunk being laid out: its last line with context
  for (size_t range = 0; range < count; range++) {
    const uint32_t start = ranges[2 * range], end = ranges[2 * range + 1];
    const size_t startLine = lines.Position(start, positions + range * kRangeWords);
    const size_t endLine = lines.Position(end, positions + range * kRangeWords + kRangeWords / 2);
    const size_t first = startLine > contextLines ? startLine - contextLines : 1;
    // A range ending with a '\n' ends on that newline's line; past the last line, LineEnd is the text's end.
    const size_t last = endLine - (end > start && content.data[end - 1] == '\n' ? 1 : 0) + contextLines;
    if (chunkCount > 0 && first <= lastLine + 1) {
      uint32_t* current = chunks + (chunkCount - 1) * kChunkWords;
      if (last > lastLine) {
        lastLine = last;
        current[1] = static_cast<uint32_t>(lines.LineEnd(last));
      }
      current[4]++;
      continue;
    }
    uint32_t* chunk = chunks + chunkCount++ * kChunkWords;
    lastLine = last;
    chunk[0] = static_cast<uint32_t>(lines.LineStart(first));
    chunk[1] = static_cast<uint32_t>(lines.LineEnd(last));
    chunk[2] = static_cast<uint32_t>(first);
    chunk[3] = static_cast<uint32_t>(range);
    chunk[4] = 1;
    chunk[5] = 0;
    chunk[6] = 0;
  }
  return Napi::Number::New(env, static_cast<double>(chunkCount));
}

}  // namespace

void RegisterResponse(Napi::Env env, Napi::Object exports) {
  exports.Set("layChunks", Napi::Function::New(env, LayChunks, "layChunks"));
  exports.Set("writeJsonString", Napi::Function::New(env, WriteJsonString, "writeJsonString"));
  exports.Set("writeRangesJson", Napi::Function::New(env, WriteRangesJson, "writeRangesJson"));
  exports.Set("writeChunksJson", Napi::Function::New(env, WriteChunksJson, "writeChunksJson"));
}

}  // namespace trawl
