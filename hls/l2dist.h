// L2 distance PE (graph search): squared L2 of streamed database vectors to one query.
// Same behaviour as fanns/pe/l2dist.py: exact integer arithmetic, W elements per word,
// D/W words per vector, one 64-bit distance per vector.
#ifndef FANNS_L2DIST_H
#define FANNS_L2DIST_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

// Distances of `n` vectors arriving on `x` (D/W words each) to `query`.
template <typename T, int D, int W>
void l2dist(const T query[D], hls::stream<VecWord<T, W>>& x, hls::stream<uint64_t>& dist, uint32_t n) {
  static_assert(D % W == 0, "W must divide D");
  constexpr int WORDS = D / W;
  for (uint32_t v = 0; v < n; ++v) {
    uint64_t acc = 0;
    for (int k = 0; k < WORDS; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const VecWord<T, W> word = x.read();
      uint64_t sum = 0;
      for (int i = 0; i < W; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        const int64_t diff = int64_t(word.e[i]) - int64_t(query[k * W + i]);
        sum += uint64_t(diff * diff);
      }
      acc += sum;
    }
    dist.write(acc);
  }
}

}  // namespace fanns

#endif  // FANNS_L2DIST_H
