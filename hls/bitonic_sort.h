// Bitonic sorting network (fanns/pe/bitonic_sort.py): one L-wide key vector per cycle, sorted
// ascending by Batcher's network of log2(L)*(1+log2(L))/2 compare-exchange stages. Keys are
// selection keys held in uint64_t (key_bits <= 64 wide, so the order is the same as the RTL's).
#ifndef FANNS_BITONIC_SORT_H
#define FANNS_BITONIC_SORT_H

#include "fanns_hls.h"

namespace fanns {

template <int L>
struct KeyVec {
  uint64_t k[L];
};

// Afterwards x <= y when `ascending`, x >= y otherwise.
inline void compare_exchange(uint64_t& x, uint64_t& y, bool ascending) {
  if ((x > y) == ascending) {
    const uint64_t t = x;
    x = y;
    y = t;
  }
}

// Sorts v ascending in place; fully unrolled, one network stage per (size, stride) pair.
template <int L>
void bitonic_sort_network(uint64_t v[L]) {
  static_assert(L >= 1 && (L & (L - 1)) == 0, "L must be a power of two");
  for (int size = 2; size <= L; size <<= 1) {
    FANNS_PRAGMA(HLS UNROLL)
    for (int stride = size / 2; stride > 0; stride >>= 1) {
      FANNS_PRAGMA(HLS UNROLL)
      for (int i = 0; i < L; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        const int j = i ^ stride;
        if (j > i) compare_exchange(v[i], v[j], (i & size) == 0);
      }
    }
  }
}

// Sorts `n` vectors from `in` to `out`, one per cycle.
template <int L>
void bitonic_sort(hls::stream<KeyVec<L>>& in, hls::stream<KeyVec<L>>& out, uint32_t n) {
  for (uint32_t t = 0; t < n; ++t) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    KeyVec<L> v = in.read();
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = v.k complete)
    bitonic_sort_network<L>(v.k);
    out.write(v);
  }
}

}  // namespace fanns

#endif  // FANNS_BITONIC_SORT_H
