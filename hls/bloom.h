// Bloom filter PE (graph search): visited-node filter with H MurmurHash2 units over H banks.
// Same behaviour as fanns/pe/bloom.py: unit i hashes the 32-bit id with seed
// SEED + i*0x9E3779B9, takes the low log2(BANK_BITS) bits as the bit index in its own bank of
// BANK_BITS bits (BANK_BITS/W words of W bits); an id is "maybe visited" when all H bits were set
// before it, and all H bits are set afterwards (test-and-set). clear() zeroes every word
// (BANK_BITS/W iterations, all banks in parallel).
#ifndef FANNS_BLOOM_H
#define FANNS_BLOOM_H

#include "fanns_hls.h"

namespace fanns {

constexpr uint32_t kMurmurM = 0x5bd1e995u;

// MurmurHash2 of the 4 little-endian bytes of `id`.
inline uint32_t murmur2_u32(uint32_t id, uint32_t seed) {
  uint32_t k = id * kMurmurM;
  k ^= k >> 24;
  k *= kMurmurM;
  uint32_t h = ((seed ^ 4u) * kMurmurM) ^ k;
  h ^= h >> 13;
  h *= kMurmurM;
  h ^= h >> 15;
  return h;
}

struct BloomIn {
  uint32_t id;
  bool last;
};

struct BloomOut {
  uint32_t id;
  bool visited;
  bool last;
};

template <int H, int BANK_BITS, int W, uint32_t SEED = 0>
class BloomFilter {
  static_assert((BANK_BITS & (BANK_BITS - 1)) == 0, "BANK_BITS must be a power of two");
  static_assert(W == 8 || W == 16 || W == 32 || W == 64, "W must be 8, 16, 32 or 64");
  static_assert(BANK_BITS >= 2 * W, "a bank holds at least two words");
  static constexpr int kDepth = BANK_BITS / W;

 public:
  BloomFilter() { clear(); }

  void clear() {
    for (int a = 0; a < kDepth; ++a) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      for (int u = 0; u < H; ++u) {
        FANNS_PRAGMA(HLS UNROLL)
        bits_[u][a] = 0;
      }
    }
  }

  bool test_and_set(uint32_t id) {
    bool visited = true;
    for (int u = 0; u < H; ++u) {
      FANNS_PRAGMA(HLS UNROLL)
      const uint32_t idx = murmur2_u32(id, SEED + uint32_t(u) * 0x9E3779B9u) & uint32_t(BANK_BITS - 1);
      const uint64_t mask = uint64_t(1) << (idx % W);
      const uint64_t word = bits_[u][idx / W];
      visited = visited && (word & mask) != 0;
      bits_[u][idx / W] = word | mask;
    }
    return visited;
  }

 private:
  uint64_t bits_[H][kDepth];
};

// The PE's stream behaviour: one id per iteration; after a query's last id, clear the filter.
template <int H, int BANK_BITS, int W, uint32_t SEED = 0>
void bloom(BloomFilter<H, BANK_BITS, W, SEED>& filter, hls::stream<BloomIn>& in, hls::stream<BloomOut>& out, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const BloomIn x = in.read();
    out.write(BloomOut{x.id, filter.test_and_set(x.id), x.last});
    if (x.last) filter.clear();
  }
}

}  // namespace fanns

#endif  // FANNS_BLOOM_H
