// Substring search for literal queries and byte counting for line numbers,
// shared by the SSE2 code in addon.cc and response.cc and the AVX2 code in find-avx2.cc
// (compiled with -mavx2, called only when the CPU has AVX2).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "byte-frequencies.h"

namespace trawl {

// A needle compared byte for byte.
struct ExactNeedle {
  static constexpr bool kFolded = false;
  const uint8_t* bytes;
  size_t length;
  // The positions of the two bytes FindWith filters on: WithRarestPair sets them (left at 0, the first
  // byte alone is the filter).
  size_t one = 0;
  size_t two = 0;
  uint8_t Bits(size_t) const { return 0; }
  uint8_t Byte(size_t i) const { return bytes[i]; }
  bool Equal(const uint8_t* at, size_t i, size_t n) const { return memcmp(at + i, bytes + i, n) == 0; }
};

// A needle whose ASCII letters match either case: `folded` is the needle with
// its letters lower-cased, `bits` 0x20 at each letter and 0 elsewhere, so a
// byte b matches needle byte i when (b | bits[i]) == folded[i] (for a letter,
// exactly its two cases).
struct FoldedNeedle {
  static constexpr bool kFolded = true;
  const uint8_t* folded;
  const uint8_t* bits;
  size_t length;
  size_t one = 0;
  size_t two = 0;
  uint8_t Bits(size_t i) const { return bits[i]; }
  uint8_t Byte(size_t i) const { return folded[i]; }
  bool Equal(const uint8_t* at, size_t i, size_t n) const {
    for (size_t end = i + n; i < end; i++) {
      if ((at[i] | bits[i]) != folded[i]) return false;
    }
    return true;
  }
};

// How often needle byte i occurs in source code (byte-frequencies.h); for a letter of a folded needle,
// both its cases.
template <typename Needle>
inline uint32_t FrequencyAt(const Needle& needle, size_t i) {
  const uint8_t byte = needle.Byte(i);
  return kByteFrequency[byte] + (needle.Bits(i) != 0 ? kByteFrequency[byte & ~0x20] : 0);
}

// `needle` filtered on its two rarest bytes in source code (one < two): FindWith compares them at every
// position, so that as few positions as can be pass to a whole comparison.
template <typename Needle>
inline Needle WithRarestPair(Needle needle) {
  if (needle.length < 2) return needle;
  size_t rarest = 0;
  for (size_t i = 1; i < needle.length; i++) {
    if (FrequencyAt(needle, i) < FrequencyAt(needle, rarest)) rarest = i;
  }
  size_t next = rarest == 0 ? 1 : 0;
  for (size_t i = 0; i < needle.length; i++) {
    if (i != rarest && FrequencyAt(needle, i) < FrequencyAt(needle, next)) next = i;
  }
  needle.one = std::min(rarest, next);
  needle.two = std::max(rarest, next);
  return needle;
}

// The first occurrence of needle (length >= 2) in [at, end), or nullptr.
// Muła's "generic SIMD" substring search, filtering on the needle's bytes at
// `one` and `two` (WithRarestPair): compare them at Lanes::kWidth positions at
// once, compare the whole needle only where both agree.
template <typename Lanes, typename Needle>
inline const uint8_t* FindWith(const uint8_t* at, const uint8_t* end, const Needle& needle) {
  const size_t length = needle.length;
  const size_t one = needle.one;
  const size_t two = needle.two;
  const auto oneByte = Lanes::Splat(static_cast<char>(needle.Byte(one)));
  const auto twoByte = Lanes::Splat(static_cast<char>(needle.Byte(two)));
  const auto oneBits = Lanes::Splat(static_cast<char>(needle.Bits(one)));
  const auto twoBits = Lanes::Splat(static_cast<char>(needle.Bits(two)));
  for (; static_cast<size_t>(end - at) >= length - 1 + Lanes::kWidth; at += Lanes::kWidth) {
    auto atOne = Lanes::Load(at + one);
    auto atTwo = Lanes::Load(at + two);
    if constexpr (Needle::kFolded) {
      atOne = Lanes::Or(atOne, oneBits);
      atTwo = Lanes::Or(atTwo, twoBits);
    }
    uint32_t candidates = Lanes::BothEqual(atOne, oneByte, atTwo, twoByte);
    while (candidates != 0) {
      const uint8_t* start = at + __builtin_ctz(candidates);
      if (needle.Equal(start, 0, length)) return start;
      candidates &= candidates - 1;
    }
  }
  for (; static_cast<size_t>(end - at) >= length; at++) {
    if (needle.Equal(at, 0, length)) return at;
  }
  return nullptr;
}

// How many bytes of [at, end) equal `byte`: one compare, movemask and
// popcount per Lanes::kWidth bytes.
template <typename Lanes>
inline size_t CountWith(const uint8_t* at, const uint8_t* end, uint8_t byte) {
  const auto wanted = Lanes::Splat(static_cast<char>(byte));
  size_t count = 0;
  for (; static_cast<size_t>(end - at) >= Lanes::kWidth; at += Lanes::kWidth) {
    count += static_cast<size_t>(__builtin_popcount(Lanes::Equal(Lanes::Load(at), wanted)));
  }
  for (; at < end; at++) count += *at == byte;
  return count;
}

// Whether [at, end) holds the UTF-8 of U+212A (E2 84 AA) or U+017F (C5 BF), the two characters outside
// ASCII that Unicode case folding equates with ASCII letters: one pass for both, filtering on each one's
// first two bytes.
template <typename Lanes>
inline bool HoldsFoldingOutsideAsciiWith(const uint8_t* at, const uint8_t* end) {
  const auto kelvinLead = Lanes::Splat('\xe2');
  const auto kelvinNext = Lanes::Splat('\x84');
  const auto longSLead = Lanes::Splat('\xc5');
  const auto longSNext = Lanes::Splat('\xbf');
  for (; static_cast<size_t>(end - at) >= 2 + Lanes::kWidth; at += Lanes::kWidth) {
    const auto lead = Lanes::Load(at);
    const auto next = Lanes::Load(at + 1);
    uint32_t candidates = Lanes::BothEqual(lead, kelvinLead, next, kelvinNext) | Lanes::BothEqual(lead, longSLead, next, longSNext);
    while (candidates != 0) {
      const uint8_t* start = at + __builtin_ctz(candidates);
      if (start[0] == 0xc5 || start[2] == 0xaa) return true;
      candidates &= candidates - 1;
    }
  }
  for (; at < end; at++) {
    if (end - at >= 2 && at[0] == 0xc5 && at[1] == 0xbf) return true;
    if (end - at >= 3 && at[0] == 0xe2 && at[1] == 0x84 && at[2] == 0xaa) return true;
  }
  return false;
}

struct Sse2Lanes {
  static constexpr size_t kWidth = 16;
  static __m128i Splat(char byte) { return _mm_set1_epi8(byte); }
  static __m128i Load(const uint8_t* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); }
  static __m128i Or(__m128i a, __m128i b) { return _mm_or_si128(a, b); }
  static uint32_t BothEqual(__m128i a, __m128i x, __m128i b, __m128i y) {
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, x), _mm_cmpeq_epi8(b, y))));
  }
  static uint32_t Equal(__m128i a, __m128i x) { return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, x))); }
};

// Whether this CPU has AVX2, asked once: the *Avx2 functions below are called only when it does. Defined in
// addon.cc, not here, so that no copy of it is compiled with -mavx2.
bool HasAvx2();

// Defined in find-avx2.cc; call only when HasAvx2().
const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const ExactNeedle& needle);
const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const FoldedNeedle& needle);
size_t CountAvx2(const uint8_t* at, const uint8_t* end, uint8_t byte);
bool HoldsFoldingOutsideAsciiAvx2(const uint8_t* at, const uint8_t* end);

}  // namespace trawl
