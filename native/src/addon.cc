// trawl's N-API addon: the few OS calls Node does not expose.
//
// Every function is re-entrant and, but for the mapping guard's registry
// (mapping-guard.h) and the registry of shared file mappings (below), both
// thread-safe, keeps no mutable static state, so the addon may be loaded by
// any number of worker threads at once.

#include <napi.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nmmintrin.h>

#include "args.h"
#include "find.h"
#include "mapping-guard.h"
#include "regex.h"
#include "response.h"

namespace trawl {

bool HasAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

}  // namespace trawl

namespace {

using trawl::IntegerArg;
using trawl::TypedArg;
using trawl::TypedView;

// One mapping of a file for the whole process: every thread that maps the same
// file (device and inode: a shard is never rewritten in place, and an inode is
// not reused while a mapping holds it) shares it, so its pages count once in
// the process's RSS; unmapped when the last buffer over it is collected.
struct Mapping {
  void* address;
  size_t length;
  size_t guardSlot;
  size_t buffers;  // buffers over it, in any thread
};

using FileId = std::pair<dev_t, ino_t>;

// One word per guard slot that the threads sharing a mapping read and write
// (mappingNotes): zero whenever the slot is given to a new mapping.
uint32_t mappingNotes[mapping_guard::kSlots];

std::mutex mappingsMutex;
std::map<FileId, Mapping*>& Mappings() {
  static auto* mappings = new std::map<FileId, Mapping*>();  // never destroyed: finalizers may run at exit
  return *mappings;
}

// The buffer finalizer: the last buffer over a mapping unguards and unmaps it.
void ReleaseMapping(Napi::Env /*env*/, uint8_t* /*data*/, FileId* id) {
  Mapping* last = nullptr;
  {
    std::lock_guard<std::mutex> lock(mappingsMutex);
    auto found = Mappings().find(*id);
    if (found != Mappings().end() && --found->second->buffers == 0) {
      last = found->second;
      Mappings().erase(found);
    }
  }
  delete id;
  if (last == nullptr) return;
  // Unguarded first: once unmapped, the range may be mapped again for another file.
  mapping_guard::Release(last->guardSlot);
  munmap(last->address, last->length);
  delete last;
}

Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int err, const std::string& subject) {
  std::string message = std::string(syscall) + " failed for " + subject + ": " + std::strerror(err);
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, err == ENOENT ? "ENOENT" : err == EACCES ? "EACCES" : "ENATIVE"));
  error.Set("errno", Napi::Number::New(env, err));
  error.Set("syscall", Napi::String::New(env, syscall));
  error.ThrowAsJavaScriptException();
  return env.Undefined();
}

// mmapFile(path) -> { bytes, faultSlot }: bytes is a Buffer backed by a
// read-only MAP_SHARED mapping of the whole file, guarded against SIGBUS
// (mapping-guard.h), shared with every other buffer over the same file in the
// process (Mapping) and released by the buffers' finalizers; faultSlot is its
// index in mappingFaults. An empty file yields an empty (unmapped) buffer,
// slot 0, because mmap rejects zero lengths.
Napi::Value MmapFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "mmapFile(path): path must be a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ThrowErrno(env, "open", errno, path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return ThrowErrno(env, "fstat", err, path);
  }
  size_t length = static_cast<size_t>(st.st_size);
  Napi::Object result = Napi::Object::New(env);
  if (length == 0) {
    close(fd);
    result.Set("bytes", Napi::Buffer<uint8_t>::New(env, 0));
    result.Set("faultSlot", Napi::Number::New(env, 0));
    return result;
  }
  const FileId id{st.st_dev, st.st_ino};
  std::lock_guard<std::mutex> lock(mappingsMutex);
  Mapping*& mapping = Mappings()[id];
  if (mapping == nullptr) {
    void* address = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
    int mmapErr = errno;
    close(fd);  // the mapping keeps its own reference to the file
    size_t slot = address == MAP_FAILED ? 0 : mapping_guard::Guard(address, length);
    if (address == MAP_FAILED || slot == 0) {
      if (address != MAP_FAILED) munmap(address, length);
      Mappings().erase(id);
      return address == MAP_FAILED ? ThrowErrno(env, "mmap", mmapErr, path)
                                   : ThrowErrno(env, "mmap", ENOMEM, path + " (every mapping guard slot is taken)");
    }
    mappingNotes[slot] = 0;
    mapping = new Mapping{address, length, slot, 0};
  } else {
    close(fd);
  }
  mapping->buffers++;
  result.Set("bytes", Napi::Buffer<uint8_t>::New(env, static_cast<uint8_t*>(mapping->address), mapping->length,
                                                 ReleaseMapping, new FileId(id)));
  result.Set("faultSlot", Napi::Number::New(env, static_cast<double>(mapping->guardSlot)));
  return result;
}

int AdviceFromName(const std::string& name) {
  if (name == "normal") return MADV_NORMAL;
  if (name == "random") return MADV_RANDOM;
  if (name == "sequential") return MADV_SEQUENTIAL;
  if (name == "willneed") return MADV_WILLNEED;
  if (name == "dontneed") return MADV_DONTNEED;
  return -1;
}

// madvise(buffer, advice): advice for the pages under a mapped buffer. The
// range is widened to page boundaries, which is harmless for read-only maps.
Napi::Value Madvise(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsBuffer() || !info[1].IsString()) {
    Napi::TypeError::New(env, "madvise(buffer, advice): expected a Buffer and an advice name")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto buffer = info[0].As<Napi::Buffer<uint8_t>>();
  std::string name = info[1].As<Napi::String>().Utf8Value();
  int advice = AdviceFromName(name);
  if (advice < 0) {
    Napi::TypeError::New(env, "madvise: unknown advice '" + name +
                                  "' (expected normal, random, sequential, willneed or dontneed)")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (buffer.Length() == 0) return env.Undefined();
  uintptr_t pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = reinterpret_cast<uintptr_t>(buffer.Data()) & ~(pageSize - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(buffer.Data()) + buffer.Length();
  if (madvise(reinterpret_cast<void*>(start), end - start, advice) != 0) {
    return ThrowErrno(env, "madvise", errno, name);
  }
  return env.Undefined();
}

// tryLockExclusive(fd) -> true when the exclusive flock was taken, false when
// another open file description holds it. Other failures throw.
Napi::Value TryLockExclusive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "tryLockExclusive(fd): fd must be a number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return Napi::Boolean::New(env, true);
  if (errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
  return ThrowErrno(env, "flock", errno, "fd " + std::to_string(fd));
}

// sdNotify(state) -> true when the datagram was sent to $NOTIFY_SOCKET, false
// when the variable is unset (not running under systemd). A leading '@' names
// a socket in the abstract namespace.
Napi::Value SdNotify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "sdNotify(state): state must be a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string state = info[0].As<Napi::String>().Utf8Value();
  const char* socketPath = getenv("NOTIFY_SOCKET");
  if (socketPath == nullptr || socketPath[0] == '\0') return Napi::Boolean::New(env, false);
  size_t pathLength = strlen(socketPath);
  struct sockaddr_un address;
  if (pathLength >= sizeof(address.sun_path) || (socketPath[0] != '/' && socketPath[0] != '@')) {
    Napi::Error::New(env, std::string("sdNotify: unusable NOTIFY_SOCKET '") + socketPath + "'")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::memset(&address, 0, sizeof(address));
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socketPath, pathLength);
  if (socketPath[0] == '@') address.sun_path[0] = '\0';
  socklen_t addressLength = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + pathLength);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ThrowErrno(env, "socket", errno, "NOTIFY_SOCKET");
  ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                        reinterpret_cast<struct sockaddr*>(&address), addressLength);
  int err = errno;
  close(fd);
  if (sent < 0) return ThrowErrno(env, "sendto", err, socketPath);
  return Napi::Boolean::New(env, true);
}

constexpr uint32_t kTrigramSpace = 1u << 24;

// The bit a byte sets in a next-byte mask (docs/index-format.md, CTRP): its low
// three bits, which an ASCII letter shares with its other case.
inline uint8_t NextByteBit(uint8_t byte) { return static_cast<uint8_t>(1u << (byte & 7)); }

// Puts the collected masks into out[first, end) (bits 24-31) and clears both
// scratch tables behind them, entry by entry.
void AttachMasks(uint8_t* seen, uint8_t* next, uint32_t* out, size_t first, size_t end) {
  for (size_t i = first; i < end; i++) {
    uint32_t trigram = out[i];
    seen[trigram >> 3] = 0;
    out[i] = trigram | static_cast<uint32_t>(next[trigram]) << 24;
    next[trigram] = 0;
  }
}

// collectTrigrams(bytes, seenBits, nextMasks, out, outLength) -> new outLength.
// Appends to out the distinct trigrams (3 bytes, case kept) of bytes, in
// first-seen order, each with its next-byte mask in bits 24-31: the OR of
// NextByteBit over the bytes that follow its occurrences.
// seenBits is a caller-owned 2^24-bit scratch bitmap (2 MiB: small enough to
// stay in cache, unlike a table of 2^24 words) and nextMasks a 2^24-byte one;
// both are all zero on entry and left all zero on return, by clearing exactly
// the entries this call set.
Napi::Value CollectTrigrams(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView bytes = TypedArg(info, 0, napi_uint8_array, "collectTrigrams: bytes (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView bits = TypedArg(info, 1, napi_uint8_array, "collectTrigrams: seenBits (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView masks = TypedArg(info, 2, napi_uint8_array, "collectTrigrams: nextMasks (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView outView = TypedArg(info, 3, napi_uint32_array, "collectTrigrams: out (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t outLengthArg;
  if (!IntegerArg(info, 4, "collectTrigrams: outLength", &outLengthArg)) return env.Undefined();
  size_t outLength = static_cast<size_t>(outLengthArg);
  size_t needed = bytes.length >= 3 ? bytes.length - 2 : 0;
  if (bits.length != kTrigramSpace / 8 || masks.length != kTrigramSpace || outLength > outView.length ||
      outView.length - outLength < needed) {
    Napi::RangeError::New(env,
                          "collectTrigrams: seenBits must hold 2^24 bits, nextMasks 2^24 bytes and out room for "
                          "bytes.length - 2 more")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint8_t* seen = bits.data;
  uint8_t* next = masks.data;
  uint32_t* out = reinterpret_cast<uint32_t*>(outView.data);
  size_t first = outLength;
  if (bytes.length >= 3) {
    const uint8_t* data = bytes.data;
    uint32_t trigram = (static_cast<uint32_t>(data[0]) << 8) | data[1];
    for (size_t i = 2; i < bytes.length; i++) {
      trigram = ((trigram << 8) | data[i]) & (kTrigramSpace - 1);
      uint8_t bit = static_cast<uint8_t>(1u << (trigram & 7));
      if (!(seen[trigram >> 3] & bit)) {
        seen[trigram >> 3] |= bit;
        out[outLength++] = trigram;
      }
      if (i + 1 < bytes.length) next[trigram] |= NextByteBit(data[i + 1]);
    }
  }
  AttachMasks(seen, next, out, first, outLength);
  return Napi::Number::New(env, static_cast<double>(outLength));
}

// uniteTrigrams(pairs, seenBits, nextMasks, out, outLength) -> new outLength.
// Appends to out the distinct trigrams of pairs (trigrams with next-byte masks
// in bits 24-31, as collectTrigrams writes them), each with the OR of its
// masks: the trigram set of a text from the sets of pieces that cover it.
// Scratch tables and out as for collectTrigrams; out needs room for
// pairs.length more and must not overlap pairs.
Napi::Value UniteTrigrams(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView pairs = TypedArg(info, 0, napi_uint32_array, "uniteTrigrams: pairs (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView bits = TypedArg(info, 1, napi_uint8_array, "uniteTrigrams: seenBits (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView masks = TypedArg(info, 2, napi_uint8_array, "uniteTrigrams: nextMasks (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView outView = TypedArg(info, 3, napi_uint32_array, "uniteTrigrams: out (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t outLengthArg;
  if (!IntegerArg(info, 4, "uniteTrigrams: outLength", &outLengthArg)) return env.Undefined();
  size_t outLength = static_cast<size_t>(outLengthArg);
  const uint32_t* in = reinterpret_cast<const uint32_t*>(pairs.data);
  uint32_t* out = reinterpret_cast<uint32_t*>(outView.data);
  bool overlapping = in < out + outView.length && out < in + pairs.length;
  if (bits.length != kTrigramSpace / 8 || masks.length != kTrigramSpace || outLength > outView.length ||
      outView.length - outLength < pairs.length || overlapping) {
    Napi::RangeError::New(env,
                          "uniteTrigrams: seenBits must hold 2^24 bits, nextMasks 2^24 bytes and out room for "
                          "pairs.length more, apart from pairs")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint8_t* seen = bits.data;
  uint8_t* next = masks.data;
  size_t first = outLength;
  for (size_t i = 0; i < pairs.length; i++) {
    uint32_t trigram = in[i] & (kTrigramSpace - 1);
    uint8_t bit = static_cast<uint8_t>(1u << (trigram & 7));
    if (!(seen[trigram >> 3] & bit)) {
      seen[trigram >> 3] |= bit;
      out[outLength++] = trigram;
    }
    next[trigram] |= static_cast<uint8_t>(in[i] >> 24);
  }
  AttachMasks(seen, next, out, first, outLength);
  return Napi::Number::New(env, static_cast<double>(outLength));
}


template <typename Needle>
const uint8_t* Find(const uint8_t* at, const uint8_t* end, const Needle& needle) {
  if (needle.length == 1) {
    if constexpr (!Needle::kFolded) return static_cast<const uint8_t*>(memchr(at, needle.Byte(0), static_cast<size_t>(end - at)));
    for (; at < end; at++) {
      if (needle.Equal(at, 0, 1)) return at;
    }
    return nullptr;
  }
  if (trawl::HasAvx2()) return trawl::FindAvx2(at, end, needle);
  return trawl::FindWith<trawl::Sse2Lanes>(at, end, needle);
}

// The arguments both find functions take: (haystack, needle, from, out).
struct FindArgs {
  TypedView haystack;
  TypedView needle;
  size_t from;
  uint32_t* out;
  size_t outLength;
};

// A find function's error messages, made at compile time: these functions are called thousands of times per search.
struct FindMessages {
  const char* haystack;
  const char* needle;
  const char* from;
  const char* out;
  const char* fromRange;
  const char* emptyNeedle;
};
#define TRAWL_FIND_MESSAGES(name)                                                                               \
  FindMessages {                                                                                                \
    name ": haystack (Uint8Array)", name ": needle (Uint8Array)", name ": from", name ": out (Uint32Array)",     \
        name ": from must be within the haystack (at most 4 GiB)", name ": needle must not be empty"            \
  }

bool ReadFindArgs(const Napi::CallbackInfo& info, const FindMessages& messages, FindArgs* args) {
  Napi::Env env = info.Env();
  args->haystack = TypedArg(info, 0, napi_uint8_array, messages.haystack);
  if (env.IsExceptionPending()) return false;
  args->needle = TypedArg(info, 1, napi_uint8_array, messages.needle);
  if (env.IsExceptionPending()) return false;
  int64_t from;
  if (!IntegerArg(info, 2, messages.from, &from)) return false;
  TypedView outView = TypedArg(info, 3, napi_uint32_array, messages.out);
  if (env.IsExceptionPending()) return false;
  if (args->haystack.length > 0xffffffffu || from < 0 || static_cast<uint64_t>(from) > args->haystack.length) {
    Napi::RangeError::New(env, messages.fromRange).ThrowAsJavaScriptException();
    return false;
  }
  if (args->needle.length == 0) {
    Napi::RangeError::New(env, messages.emptyNeedle).ThrowAsJavaScriptException();
    return false;
  }
  args->from = static_cast<size_t>(from);
  args->out = reinterpret_cast<uint32_t*>(outView.data);
  args->outLength = outView.length;
  return true;
}

// Writes the start offsets of successive non-overlapping occurrences of needle in
// args.haystack at or after args.from to args.out (at most args.outLength); returns how many.
template <typename Needle>
size_t FindAll(const FindArgs& args, const Needle& needle) {
  const uint8_t* end = args.haystack.data + args.haystack.length;
  size_t count = 0;
  for (const uint8_t* at = args.haystack.data + args.from; count < args.outLength;) {
    const uint8_t* found = Find(at, end, needle);
    if (found == nullptr) break;
    args.out[count++] = static_cast<uint32_t>(found - args.haystack.data);
    at = found + needle.length;
  }
  return count;
}

// findLiteral(haystack, needle, from, out) -> count: the start offsets of
// successive non-overlapping occurrences of needle in haystack at or after
// `from`, at most out.length of them, written to out.
Napi::Value FindLiteral(const Napi::CallbackInfo& info) {
  FindArgs args;
  if (!ReadFindArgs(info, TRAWL_FIND_MESSAGES("findLiteral"), &args)) return info.Env().Undefined();
  const auto needle = trawl::WithRarestPair(trawl::ExactNeedle{args.needle.data, args.needle.length});
  return Napi::Number::New(info.Env(), static_cast<double>(FindAll(args, needle)));
}

bool HoldsFoldingOutsideAscii(const uint8_t* at, const uint8_t* end) {
  if (trawl::HasAvx2()) return trawl::HoldsFoldingOutsideAsciiAvx2(at, end);
  return trawl::HoldsFoldingOutsideAsciiWith<trawl::Sse2Lanes>(at, end);
}

// findLiteralIgnoringCase(haystack, needle, from, out) -> count: as findLiteral,
// with needle's ASCII letters matching either case (needle must be ASCII). The
// same occurrences as a Unicode case-insensitive regex of the needle, except
// where a k or s of the needle could match U+212A or U+017F: then, if the bytes
// that decide the answer hold either, it returns -1 and the caller asks such a
// regex instead.
Napi::Value FindLiteralIgnoringCase(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  FindArgs args;
  if (!ReadFindArgs(info, TRAWL_FIND_MESSAGES("findLiteralIgnoringCase"), &args)) return env.Undefined();
  // The folded needle and its case bits: on the stack for the needles people type, a call per candidate file.
  std::array<uint8_t, 2 * 256> onStack;
  std::vector<uint8_t> onHeap;
  uint8_t* folded = onStack.data();
  if (args.needle.length > 256) {
    onHeap.resize(2 * args.needle.length);
    folded = onHeap.data();
  }
  uint8_t* bits = folded + args.needle.length;
  bool foldsOutsideAscii = false;
  for (size_t i = 0; i < args.needle.length; i++) {
    const uint8_t byte = args.needle.data[i];
    if (byte >= 0x80) {
      Napi::RangeError::New(env, "findLiteralIgnoringCase: needle must be ASCII").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    const uint8_t lower = (byte >= 'A' && byte <= 'Z') ? byte | 0x20 : byte;
    const bool letter = lower >= 'a' && lower <= 'z';
    folded[i] = lower;
    bits[i] = letter ? 0x20 : 0;
    foldsOutsideAscii = foldsOutsideAscii || lower == 'k' || lower == 's';
  }
  const auto needle = trawl::WithRarestPair(trawl::FoldedNeedle{folded, bits, args.needle.length});
  const size_t count = FindAll(args, needle);
  if (foldsOutsideAscii) {
    // A match through U+212A or U+017F is at most 3 bytes per needle byte, so when out filled up, one that
    // would start before the last occurrence found has its special character (up to 3 bytes) within
    // 3 × needle + 2 bytes of it; otherwise the whole rest of the haystack decides.
    size_t decides = args.haystack.length;
    if (count == args.outLength && count > 0) decides = std::min(decides, size_t{args.out[count - 1]} + 3 * args.needle.length + 2);
    const uint8_t* begin = args.haystack.data + args.from;
    const uint8_t* end = args.haystack.data + decides;
    if (HoldsFoldingOutsideAscii(begin, end)) return Napi::Number::New(env, -1);
  }
  return Napi::Number::New(env, static_cast<double>(count));
}

// CRC-32C (Castagnoli), as the state log's records carry it: the SSE4.2
// instruction when the CPU has it, else a table (both give the same value).
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t crc, const uint8_t* data, size_t length) {
  uint64_t value = crc;
  for (; length >= 8; data += 8, length -= 8) {
    uint64_t word;
    memcpy(&word, data, 8);
    value = _mm_crc32_u64(value, word);
  }
  uint32_t narrow = static_cast<uint32_t>(value);
  for (; length > 0; data++, length--) narrow = _mm_crc32_u8(narrow, *data);
  return narrow;
}

uint32_t Crc32cSoftware(uint32_t crc, const uint8_t* data, size_t length) {
  static const auto table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t entry = i;
      for (int bit = 0; bit < 8; bit++) entry = (entry >> 1) ^ (0x82F63B78u & (0u - (entry & 1u)));
      entries[i] = entry;
    }
    return entries;
  }();
  for (size_t i = 0; i < length; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// crc32c(bytes, initial = 0) -> CRC-32C of bytes, continuing from `initial`.
Napi::Value Crc32c(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView bytes = TypedArg(info, 0, napi_uint8_array, "crc32c: bytes (Uint8Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  int64_t initial = 0;
  if (info.Length() > 1 && !info[1].IsUndefined() && !IntegerArg(info, 1, "crc32c: initial", &initial)) return env.Undefined();
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  uint32_t crc = ~static_cast<uint32_t>(initial);
  crc = sse42 ? Crc32cHardware(crc, bytes.data, bytes.length) : Crc32cSoftware(crc, bytes.data, bytes.length);
  return Napi::Number::New(env, static_cast<double>(~crc));
}

size_t VarintLength(uint32_t value) {
  return value < (1u << 7) ? 1 : value < (1u << 14) ? 2 : value < (1u << 21) ? 3 : value < (1u << 28) ? 4 : 5;
}

// buildPostings(trigrams, firstPair) -> {keys, offsets, postings}.
// trigrams holds each document's distinct trigrams with their next-byte masks
// (as collectTrigrams writes them), document after document; firstPair[d] is
// where document d's run starts. The result is the posting index of
// docs/index-format.md (CTRK/CTRP): keys ascending, offsets with one extra end
// entry, postings the concatenated ascending lists (per document: its gap - 1
// as a varint, then its mask byte).
Napi::Value BuildPostings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TypedView pairsView = TypedArg(info, 0, napi_uint32_array, "buildPostings: trigrams (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  TypedView firstView = TypedArg(info, 1, napi_uint32_array, "buildPostings: firstPair (Uint32Array)");
  if (env.IsExceptionPending()) return env.Undefined();
  const uint32_t* pairs = reinterpret_cast<const uint32_t*>(pairsView.data);
  const uint32_t* firstPair = reinterpret_cast<const uint32_t*>(firstView.data);
  size_t pairCount = pairsView.length;
  size_t documentCount = firstView.length;
  for (size_t d = 0; d < documentCount; d++) {
    size_t end = d + 1 < documentCount ? firstPair[d + 1] : pairCount;
    if (firstPair[d] > end || end > pairCount) {
      Napi::RangeError::New(env, "buildPostings: firstPair is not ascending within trigrams").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  // Counting sort by trigram; cursor first counts, then holds write positions.
  // calloc, not new[](): the 64 MiB table comes from mmap already zeroed, so only the pages of trigrams
  // that occur are touched. Zeroing all of it faulted in 16K pages per call: 200 ms on this VM, three calls
  // per shard: 0.6 s of the 1.5 s that re-indexing a 200-file repository took.
  std::unique_ptr<uint32_t[], decltype(&free)> cursor(static_cast<uint32_t*>(calloc(kTrigramSpace, sizeof(uint32_t))), &free);
  if (!cursor) {
    Napi::Error::New(env, "buildPostings: out of memory for the trigram table").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::vector<uint32_t> keys;
  for (size_t i = 0; i < pairCount; i++) {
    uint32_t trigram = pairs[i] & (kTrigramSpace - 1);
    if (cursor[trigram]++ == 0) keys.push_back(trigram);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> starts(keys.size() + 1);
  uint32_t position = 0;
  for (size_t k = 0; k < keys.size(); k++) {
    uint32_t count = cursor[keys[k]];
    starts[k] = position;
    cursor[keys[k]] = position;
    position += count;
  }
  starts[keys.size()] = position;
  std::vector<uint32_t> documents(pairCount);
  std::vector<uint8_t> nextMasks(pairCount);
  for (size_t d = 0; d < documentCount; d++) {
    size_t end = d + 1 < documentCount ? firstPair[d + 1] : pairCount;
    for (size_t i = firstPair[d]; i < end; i++) {
      uint32_t slot = cursor[pairs[i] & (kTrigramSpace - 1)]++;
      documents[slot] = static_cast<uint32_t>(d);
      nextMasks[slot] = static_cast<uint8_t>(pairs[i] >> 24);
    }
  }
  Napi::Uint32Array keyArray = Napi::Uint32Array::New(env, keys.size());
  Napi::Uint32Array offsets = Napi::Uint32Array::New(env, keys.size() + 1);
  uint64_t bytes = 0;
  for (size_t k = 0; k < keys.size(); k++) {
    keyArray[k] = keys[k];
    offsets[k] = static_cast<uint32_t>(bytes);
    int64_t previous = -1;
    for (uint32_t i = starts[k]; i < starts[k + 1]; i++) {
      bytes += VarintLength(static_cast<uint32_t>(documents[i] - previous - 1)) + 1;
      previous = documents[i];
    }
    if (bytes > 0xffffffffu) {
      Napi::RangeError::New(env, "buildPostings: postings exceed 4 GiB").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  offsets[keys.size()] = static_cast<uint32_t>(bytes);
  Napi::Buffer<uint8_t> postings = Napi::Buffer<uint8_t>::New(env, static_cast<size_t>(bytes));
  uint8_t* out = postings.Data();
  for (size_t k = 0; k < keys.size(); k++) {
    int64_t previous = -1;
    for (uint32_t i = starts[k]; i < starts[k + 1]; i++) {
      uint32_t value = static_cast<uint32_t>(documents[i] - previous - 1);
      previous = documents[i];
      while (value >= 0x80) {
        *out++ = static_cast<uint8_t>((value & 0x7f) | 0x80);
        value >>= 7;
      }
      *out++ = static_cast<uint8_t>(value);
      *out++ = nextMasks[i];
    }
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("keys", keyArray);
  result.Set("offsets", offsets);
  result.Set("postings", postings);
  return result;
}

// Statuses the decoders return instead of a count (the JavaScript wrapper names them).
constexpr int kEndsEarly = -1, kTooLong = -2, kOverflow = -3, kOutFull = -4;

// Reads a posting list (docs/index-format.md, CTRP): ascending values stored
// as gap - 1 varints, each followed by a mask byte, bounds-checked against `stop`.
class PostingReader {
 public:
  PostingReader(const uint8_t* at, const uint8_t* stop) : at_(at), stop_(stop) {}

  bool AtEnd() const { return at_ >= stop_; }
  int status() const { return status_; }

  // The next value and its mask byte; false, with status()
  // set, when the stream ends early, a varint is overlong or a value passes 2^32 - 1.
  inline bool Next(uint32_t* value, uint8_t* mask) {
    if (at_ >= stop_) return Fail(kEndsEarly);
    uint64_t gap = *at_++;
    if (gap >= 0x80) {
      gap &= 0x7f;
      for (int shift = 7;; shift += 7) {
        if (shift > 28) return Fail(kTooLong);
        if (at_ >= stop_) return Fail(kEndsEarly);
        uint8_t byte = *at_++;
        gap |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if (byte < 0x80) break;
      }
    }
    previous_ += static_cast<int64_t>(gap) + 1;
    if (previous_ > 0xffffffffLL) return Fail(kOverflow);
    if (at_ >= stop_) return Fail(kEndsEarly);
    *mask = *at_++;
    *value = static_cast<uint32_t>(previous_);
    return true;
  }

 private:
  bool Fail(int status) {
    status_ = status;
    return false;
  }

  const uint8_t* at_;
  const uint8_t* const stop_;
  int64_t previous_ = -1;
  int status_ = 0;
};

// What a decoder calls its stream arguments in errors (literals: no string is built per call).
struct StreamArgNames {
  const char* bytes;
  const char* start;
  const char* end;
  const char* outOfBounds;
};

// The stream bytes[start, end) of a decoder's arguments; on a bad argument an
// exception is pending (an empty stream may have null data).
TypedView StreamArg(const Napi::CallbackInfo& info, const StreamArgNames& names) {
  TypedView bytes = TypedArg(info, 0, napi_uint8_array, names.bytes);
  if (info.Env().IsExceptionPending()) return {nullptr, 0};
  int64_t start, end;
  if (!IntegerArg(info, 1, names.start, &start) || !IntegerArg(info, 2, names.end, &end)) return {nullptr, 0};
  if (start < 0 || end < start || static_cast<uint64_t>(end) > bytes.length) {
    Napi::RangeError::New(info.Env(), names.outOfBounds).ThrowAsJavaScriptException();
    return {nullptr, 0};
  }
  return {bytes.data + start, static_cast<size_t>(end - start)};
}

// What a posting-list decoder calls its arguments in errors.
struct PostingArgNames {
  StreamArgNames stream;
  const char* need;
  const char* needNotByte;
  const char* values;
};

// The arguments both posting-list decoders start with: the stream
// bytes[start, end), `need` (the mask bits a posting must have: a byte) and a
// Uint32Array. False, with an exception pending, on a bad argument.
struct PostingArgs {
  TypedView stream;
  uint8_t required;
  TypedView values;
};

bool ReadPostingArgs(const Napi::CallbackInfo& info, const PostingArgNames& names, PostingArgs* args) {
  Napi::Env env = info.Env();
  args->stream = StreamArg(info, names.stream);
  if (env.IsExceptionPending()) return false;
  int64_t need;
  if (!IntegerArg(info, 3, names.need, &need)) return false;
  if (need < 0 || need > 0xff) {
    Napi::RangeError::New(env, names.needNotByte).ThrowAsJavaScriptException();
    return false;
  }
  args->required = static_cast<uint8_t>(need);
  args->values = TypedArg(info, 4, napi_uint32_array, names.values);
  return !env.IsExceptionPending();
}

// decodePostings(bytes, start, end, need, out) -> n or a status < 0.
// Decodes the posting list in bytes[start, end) into out, keeping only the
// values whose mask holds every bit of need.
Napi::Value DecodePostings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PostingArgs args;
  if (!ReadPostingArgs(info,
                       {{"decodePostings: bytes (Uint8Array)", "decodePostings: start", "decodePostings: end",
                         "decodePostings: start..end must lie within bytes"},
                        "decodePostings: need",
                        "decodePostings: need must be a byte",
                        "decodePostings: out (Uint32Array)"},
                       &args)) {
    return env.Undefined();
  }
  PostingReader reader(args.stream.data, args.stream.data + args.stream.length);
  uint32_t* out = reinterpret_cast<uint32_t*>(args.values.data);
  const size_t capacity = args.values.length;
  const uint8_t required = args.required;
  size_t emitted = 0;
  while (!reader.AtEnd()) {
    uint32_t value;
    uint8_t mask;
    if (!reader.Next(&value, &mask)) return Napi::Number::New(env, reader.status());
    if ((mask & required) != required) continue;
    if (emitted == capacity) return Napi::Number::New(env, kOutFull);
    out[emitted++] = value;
  }
  return Napi::Number::New(env, static_cast<double>(emitted));
}

// intersectPostings(bytes, start, end, need, candidates, length) -> n or a status < 0.
// Keeps, in place at the front of candidates[0, length) (ascending), the
// values of the masked posting list in bytes[start, end) whose mask holds
// every bit of need, and returns how many it kept. Decoding stops after the
// last candidate, so the rest of the list is not checked.
Napi::Value IntersectPostings(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PostingArgs args;
  if (!ReadPostingArgs(info,
                       {{"intersectPostings: bytes (Uint8Array)", "intersectPostings: start", "intersectPostings: end",
                         "intersectPostings: start..end must lie within bytes"},
                        "intersectPostings: need",
                        "intersectPostings: need must be a byte",
                        "intersectPostings: candidates (Uint32Array)"},
                       &args)) {
    return env.Undefined();
  }
  int64_t length;
  if (!IntegerArg(info, 5, "intersectPostings: length", &length)) return env.Undefined();
  if (length < 0 || static_cast<uint64_t>(length) > args.values.length) {
    Napi::RangeError::New(env, "intersectPostings: length must lie within candidates").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  PostingReader reader(args.stream.data, args.stream.data + args.stream.length);
  uint32_t* candidates = reinterpret_cast<uint32_t*>(args.values.data);
  const uint8_t required = args.required;
  size_t kept = 0;
  size_t next = 0;  // the first candidate not yet passed
  while (next < static_cast<size_t>(length) && !reader.AtEnd()) {
    uint32_t value;
    uint8_t mask;
    if (!reader.Next(&value, &mask)) return Napi::Number::New(env, reader.status());
    while (next < static_cast<size_t>(length) && candidates[next] < value) next++;
    if (next < static_cast<size_t>(length) && candidates[next] == value) {
      if ((mask & required) == required) candidates[kept++] = value;
      next++;
    }
  }
  return Napi::Number::New(env, static_cast<double>(kept));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  mapping_guard::Install();
  // Static memory shared by every thread's view, never freed: no finalizer.
  Napi::ArrayBuffer faults = Napi::ArrayBuffer::New(env, mapping_guard::FaultFlags(), mapping_guard::kSlots);
  exports.Set("mappingFaults", Napi::Uint8Array::New(env, mapping_guard::kSlots, faults, 0));
  Napi::ArrayBuffer notes = Napi::ArrayBuffer::New(env, mappingNotes, sizeof mappingNotes);
  exports.Set("mappingNotes", Napi::Uint32Array::New(env, mapping_guard::kSlots, notes, 0));
  exports.Set("buildPostings", Napi::Function::New(env, BuildPostings, "buildPostings"));
  exports.Set("collectTrigrams", Napi::Function::New(env, CollectTrigrams, "collectTrigrams"));
  exports.Set("uniteTrigrams", Napi::Function::New(env, UniteTrigrams, "uniteTrigrams"));
  exports.Set("decodePostings", Napi::Function::New(env, DecodePostings, "decodePostings"));
  exports.Set("intersectPostings", Napi::Function::New(env, IntersectPostings, "intersectPostings"));
  exports.Set("crc32c", Napi::Function::New(env, Crc32c, "crc32c"));
  exports.Set("findLiteral", Napi::Function::New(env, FindLiteral, "findLiteral"));
  exports.Set("findLiteralIgnoringCase", Napi::Function::New(env, FindLiteralIgnoringCase, "findLiteralIgnoringCase"));
  exports.Set("mmapFile", Napi::Function::New(env, MmapFile, "mmapFile"));
  exports.Set("madvise", Napi::Function::New(env, Madvise, "madvise"));
  exports.Set("tryLockExclusive", Napi::Function::New(env, TryLockExclusive, "tryLockExclusive"));
  exports.Set("sdNotify", Napi::Function::New(env, SdNotify, "sdNotify"));
  trawl::RegisterRegex(env, exports);
  trawl::RegisterResponse(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(trawl_native, Init)
