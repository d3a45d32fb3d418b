// LUT construction PE (Stage BuildLUT): same behaviour as fanns/pe/build_lut.py.
// Per probe: read D/W words {q, c, last}, keep the residual r = q - c, then for every code j the
// M entries sat((sum over the sub-space of (r - C[i][j])^2) >> SHIFT, LUT_BITS) as one output
// word (entry i = sub-space i), `last` on word 255 of a probe flagged last.
// The codebook is an on-chip array of 256 rows; row j = [C[0][j], ..., C[M-1][j]] (D elements).
// ROWS < 256: the PE holds only that many rows (one of 256/ROWS PEs building a LUT together,
// each every (256/ROWS)-th row) and writes ROWS words per probe.
#ifndef FANNS_BUILD_LUT_H
#define FANNS_BUILD_LUT_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

template <typename T, int W>
struct ProbeWord {
  T q[W];
  T c[W];
  bool last;
};

template <int M>
struct LutOut {
  uint32_t e[M];
  bool last;
};

template <typename T, int D, int M, int W, int SHIFT, int LUT_BITS, int ROWS = 256>
void build_lut(hls::stream<ProbeWord<T, W>>& x, const T codebook[ROWS][D], hls::stream<LutOut<M>>& out, uint32_t nprobes) {
  static_assert(D % M == 0 && D % W == 0, "M and W must divide D");
  static_assert(ROWS >= 1 && 256 % ROWS == 0, "ROWS must divide 256");
  constexpr int DSUB = D / M;
  constexpr int WORDS = D / W;
  for (uint32_t p = 0; p < nprobes; ++p) {
    int64_t r[D];
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = r complete)
    bool last = false;
    for (int k = 0; k < WORDS; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const ProbeWord<T, W> word = x.read();
      for (int i = 0; i < W; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        r[k * W + i] = int64_t(word.q[i]) - int64_t(word.c[i]);
      }
      last = word.last;
    }
    for (int j = 0; j < ROWS; ++j) {
      FANNS_PRAGMA(HLS PIPELINE II = WORDS)
      LutOut<M> word;
      for (int s = 0; s < M; ++s) {
        FANNS_PRAGMA(HLS UNROLL)
        uint64_t acc = 0;
        for (int e = 0; e < DSUB; ++e) {
          FANNS_PRAGMA(HLS UNROLL)
          const int64_t diff = r[s * DSUB + e] - int64_t(codebook[j][s * DSUB + e]);
          acc += uint64_t(diff * diff);
        }
        word.e[s] = uint32_t(sat_unsigned(acc >> SHIFT, LUT_BITS));
      }
      word.last = last && j == ROWS - 1;
      out.write(word);
    }
  }
}

}  // namespace fanns

#endif  // FANNS_BUILD_LUT_H
