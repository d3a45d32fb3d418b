// Bitonic partial merger (fanns/pe/bitonic_merge.py): the L smallest keys of two ascending
// L-arrays, ascending. min(a[i], b[L-1-i]) forms a bitonic sequence of the L smallest keys;
// log2(L) half-cleaner stages sort it. One pair of arrays per cycle.
#ifndef FANNS_BITONIC_MERGE_H
#define FANNS_BITONIC_MERGE_H

#include "bitonic_sort.h"

namespace fanns {

template <int L>
void bitonic_partial_merge_network(const uint64_t a[L], const uint64_t b[L], uint64_t out[L]) {
  static_assert(L >= 1 && (L & (L - 1)) == 0, "L must be a power of two");
  for (int i = 0; i < L; ++i) {
    FANNS_PRAGMA(HLS UNROLL)
    out[i] = a[i] < b[L - 1 - i] ? a[i] : b[L - 1 - i];
  }
  for (int stride = L / 2; stride > 0; stride >>= 1) {
    FANNS_PRAGMA(HLS UNROLL)
    for (int i = 0; i < L; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      const int j = i ^ stride;
      if (j > i) compare_exchange(out[i], out[j], true);
    }
  }
}

// Merges `n` pairs of ascending arrays from `a` and `b` into `out`, one pair per cycle.
template <int L>
void bitonic_merge(hls::stream<KeyVec<L>>& a, hls::stream<KeyVec<L>>& b, hls::stream<KeyVec<L>>& out, uint32_t n) {
  for (uint32_t t = 0; t < n; ++t) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const KeyVec<L> x = a.read();
    const KeyVec<L> y = b.read();
    KeyVec<L> z;
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = z.k complete)
    bitonic_partial_merge_network<L>(x.k, y.k, z.k);
    out.write(z);
  }
}

}  // namespace fanns

#endif  // FANNS_BITONIC_MERGE_H
