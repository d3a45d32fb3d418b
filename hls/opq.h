// OPQ rotation PE (Stage OPQ): same behaviour as fanns/pe/opq.py.
// Per query: read D/W words of x, then for every row i of the 16-bit matrix A
// y_i = sat_sym((sum_k A[i][k] * x_k + 2^(FRAC-1)) >> FRAC, VEC_BITS) (arithmetic shift), emitted
// W elements per output word, `last` on the query's final word. The matrix sits on chip (opq) or
// arrives again for every query, row by row, D/W words of W elements a row (opq_stream).
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

// W elements of one matrix row (a streamed matrix's word).
template <int W>
struct MatWord {
  int16_t e[W];
};

template <typename T, int D, int W>
void opq_read_query(hls::stream<VecWord<T, W>>& x, T xv[D]) {
  for (int k = 0; k < D / W; ++k) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const VecWord<T, W> word = x.read();
    for (int i = 0; i < W; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      xv[k * W + i] = word.e[i];
    }
  }
}

// Row r's rounded, saturated result into the output word; the word leaves on its W-th element.
template <typename T, int D, int W, int VEC_BITS, int FRAC>
void opq_emit(int64_t acc, int r, RotWord<T, W>& out, hls::stream<RotWord<T, W>>& y) {
  // >> of a negative int64 is an arithmetic shift (floor) in C++20 and in g++/Vitis before it.
  out.e[r % W] = T(sat_signed((acc + (int64_t(1) << (FRAC - 1))) >> FRAC, VEC_BITS));
  if (r % W == W - 1) {
    out.last = r == D - 1;
    y.write(out);
  }
}

// One query: its D/W words from x, then row r's dot product with it from the words row(r, k).
template <typename T, int D, int W, int VEC_BITS, int FRAC, typename Rows>
void opq_query(hls::stream<VecWord<T, W>>& x, Rows row, hls::stream<RotWord<T, W>>& y) {
  T xv[D];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = xv cyclic factor = W)
  opq_read_query<T, D, W>(x, xv);
  RotWord<T, W> out;
  for (int r = 0; r < D; ++r) {
    int64_t acc = 0;
    for (int k = 0; k < D / W; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const MatWord<W> word = row(r, k);
      for (int i = 0; i < W; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        acc += int64_t(word.e[i]) * int64_t(xv[k * W + i]);
      }
    }
    opq_emit<T, D, W, VEC_BITS, FRAC>(acc, r, out, y);
  }
}

template <typename T, int D, int W, int VEC_BITS, int FRAC>
void opq(hls::stream<VecWord<T, W>>& x, const int16_t a[D][D], hls::stream<RotWord<T, W>>& y, uint32_t nq) {
  static_assert(D % W == 0, "W must divide D");
  const auto on_chip = [&](int r, int k) {
    MatWord<W> word;
    for (int i = 0; i < W; ++i) word.e[i] = a[r][k * W + i];
    return word;
  };
  for (uint32_t t = 0; t < nq; ++t) opq_query<T, D, W, VEC_BITS, FRAC>(x, on_chip, y);
}

template <typename T, int D, int W, int VEC_BITS, int FRAC>
void opq_stream(hls::stream<VecWord<T, W>>& x, hls::stream<MatWord<W>>& a, hls::stream<RotWord<T, W>>& y,
                uint32_t nq) {
  static_assert(D % W == 0, "W must divide D");
  const auto streamed = [&](int, int) { return a.read(); };
  for (uint32_t t = 0; t < nq; ++t) opq_query<T, D, W, VEC_BITS, FRAC>(x, streamed, y);
}

}  // namespace fanns

#endif  // FANNS_OPQ_H
