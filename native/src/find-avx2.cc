// The AVX2 instantiations of find.h's templates. This file alone is compiled
// with -mavx2 (binding.gyp); addon.cc calls it only on CPUs with AVX2.
#include "find.h"

namespace trawl {
namespace {

struct Avx2Lanes {
  static constexpr size_t kWidth = 32;
  static __m256i Splat(char byte) { return _mm256_set1_epi8(byte); }
  static __m256i Load(const uint8_t* at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)); }
  static __m256i Or(__m256i a, __m256i b) { return _mm256_or_si256(a, b); }
  static uint32_t BothEqual(__m256i a, __m256i x, __m256i b, __m256i y) {
    return static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, x), _mm256_cmpeq_epi8(b, y))));
  }
  static uint32_t Equal(__m256i a, __m256i x) { return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, x))); }
};

}  // namespace

const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const ExactNeedle& needle) { return FindWith<Avx2Lanes>(at, end, needle); }

const uint8_t* FindAvx2(const uint8_t* at, const uint8_t* end, const FoldedNeedle& needle) { return FindWith<Avx2Lanes>(at, end, needle); }

size_t CountAvx2(const uint8_t* at, const uint8_t* end, uint8_t byte) { return CountWith<Avx2Lanes>(at, end, byte); }

bool HoldsFoldingOutsideAsciiAvx2(const uint8_t* at, const uint8_t* end) { return HoldsFoldingOutsideAsciiWith<Avx2Lanes>(at, end); }

}  // namespace trawl
