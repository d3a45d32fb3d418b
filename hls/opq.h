// OPQ rotation PE (Stage OPQ): same behaviour as fanns/pe/opq.py.
// Per query: read D/W words of x, then for every row i of the on-chip 16-bit matrix A
// y_i = sat_sym((sum_k A[i][k] * x_k + 2^(FRAC-1)) >> FRAC, VEC_BITS) (arithmetic shift), emitted
// W elements per output word, `last` on the query's final word.
#ifndef FANNS_OPQ_H
#define FANNS_OPQ_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

template <typename T, int W>
struct RotWord {
  T e[W];
  bool last;
};

template <typename T, int D, int W, int VEC_BITS, int FRAC>
void opq(hls::stream<VecWord<T, W>>& x, const int16_t a[D][D], hls::stream<RotWord<T, W>>& y, uint32_t nq) {
  static_assert(D % W == 0, "W must divide D");
  constexpr int WORDS = D / W;
  for (uint32_t t = 0; t < nq; ++t) {
    T xv[D];
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = xv cyclic factor = W)
    for (int k = 0; k < WORDS; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const VecWord<T, W> word = x.read();
      for (int i = 0; i < W; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        xv[k * W + i] = word.e[i];
      }
    }
    RotWord<T, W> out;
    for (int r = 0; r < D; ++r) {
      int64_t acc = 0;
      for (int k = 0; k < WORDS; ++k) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        for (int i = 0; i < W; ++i) {
          FANNS_PRAGMA(HLS UNROLL)
          acc += int64_t(a[r][k * W + i]) * int64_t(xv[k * W + i]);
        }
      }
      // >> of a negative int64 is an arithmetic shift (floor) in C++20 and in g++/Vitis before it.
      out.e[r % W] = T(sat_signed((acc + (int64_t(1) << (FRAC - 1))) >> FRAC, VEC_BITS));
      if (r % W == W - 1) {
        out.last = r == D - 1;
        y.write(out);
      }
    }
  }
}

}  // namespace fanns

#endif  // FANNS_OPQ_H
