// Substring search for literal queries and byte counting for line numbers,
// shared by the SSE2 code in addon.cc and response.cc and the AVX2 code in find-avx2.cc
// (compiled with -mavx2, called only when the CPU has AVX2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

namespace trawl {

// A needle compared byte for byte.
struct ExactNeedle {
  static constexpr bool kFolded = false;
  const uint8_t* bytes;
  size_t length;
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
  uint8_t Bits(size_t i) const { return bits[i]; }
  uint8_t Byte(size_t i) const { return folded[i]; }
  bool Equal(const uint8_t* at, size_t i, size_t n) const {
    for (size_t end = i + n; i < end; i++) {
      if ((at[i] | bits[i]) != folded[i]) return false;
    }
    return true;
  }
};

// The first occurrence of needle (length >= 2) in [at, end), or nullptr.
// Muła's "generic SIMD" substring search: compare the needle's first and last
// bytes at Lanes::kWidth positions at once, compare the rest only where both
// agree. Measured on Linux driver headers: ~2x glibc memmem with SSE2, ~1.3x
// more with AVX2.
template <typename Lanes, typename Needle>
inline const uint8_t* FindWith(const uint8_t* at, const uint8_t* end, const Needle& needle) {
  const size_t length = needle.length;
  const auto first = Lanes::Splat(static_cast<char>(needle.Byte(0)));
  const auto last = Lanes::Splat(static_cast<char>(needle.Byte(length - 1)));
  const auto firstBits = Lanes::Splat(static_cast<char>(needle.Bits(0)));
  const auto lastBits = Lanes::Splat(static_cast<char>(needle.Bits(length - 1)));
  for (; static_cast<size_t>(end - at) >= length - 1 + Lanes::kWidth; at += Lanes::kWidth) {
    auto head = Lanes::Load(at);
    auto tail = Lanes::Load(at + length - 1);
    if constexpr (Needle::kFolded) {
      head = Lanes::Or(head, firstBits);
      tail = Lanes::Or(tail, lastBits);
    }
    uint32_t candidates = Lanes::BothEqual(head, first, tail, last);
    while (candidates != 0) {
      const uint8_t* start = at + __builtin_ctz(candidates);
      if (needle.Equal(start, 1, length - 2)) return start;
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

// Defined in find-avx2.cc; call only when __builtin_cpu_supports("avx2").
const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const ExactNeedle& needle);
const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const FoldedNeedle& needle);
size_t CountAvx2(const uint8_t* at, const uint8_t* end, uint8_t byte);

}  // namespace trawl
