// PQ decode / ADC unit (Stage PQDist): same behaviour as fanns/pe/pq_decode.py.
// Per cell: read the 256 LUT words (word j = entry j of every sub-space), W words a beat (beat b
// holds words b*W .. b*W + W-1), into M column arrays, each split cyclically into W banks so the
// W words of a beat are written in one cycle; then scan the cell's items until `last_cell`:
// key = (sum of the M looked-up entries << 32) | id, or the all-ones sentinel for a padding
// item; `last` = last_query.
// This HLS version loads and scans one after the other (the single-buffer schedule of the RTL).
// The overload with `lut_fwd` is the PE inside the PQDist 1-D array (it forwards every LUT word).
#ifndef FANNS_PQ_DECODE_H
#define FANNS_PQ_DECODE_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

constexpr int PQ_KSUB = 256;

// One beat of the LUT stream: W LUT words, word r = entry (b*W + r) of every sub-space.
template <int M, int W = 1>
struct LutWord {
  uint32_t e[W][M];
};

template <int M>
struct CodeItem {
  uint8_t code[M];
  uint32_t id;
  bool pad;
  bool last_cell;
  bool last_query;
};

// Scans one cell's items against the loaded table until `last_cell`.
template <int M, int LUT_BITS>
void pq_scan_cell(const uint32_t table[M][PQ_KSUB], hls::stream<CodeItem<M>>& codes, hls::stream<KeyOut>& out) {
  constexpr int DIST_BITS = LUT_BITS + clog2(M);
  constexpr uint64_t SENTINEL = all_ones(DIST_BITS + 32);
  static_assert(DIST_BITS + 32 <= 64, "distance and id must fit a 64-bit key");
  bool last_cell = false;
  while (!last_cell) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const CodeItem<M> item = codes.read();
    uint64_t dist = 0;
    for (int i = 0; i < M; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      dist += table[i][item.code[i]];
    }
    out.write(KeyOut{item.pad ? SENTINEL : (dist << 32) | item.id, item.last_query});
    last_cell = item.last_cell;
  }
}

// Stores one beat (W words) of a LUT at beat b.
template <int M, int W>
void pq_store_beat(uint32_t table[M][PQ_KSUB], const LutWord<M, W>& beat, int b) {
  for (int r = 0; r < W; ++r) {
    FANNS_PRAGMA(HLS UNROLL)
    for (int i = 0; i < M; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      table[i][b * W + r] = beat.e[r][i];
    }
  }
}

template <int M, int LUT_BITS, int W = 1>
void pq_decode(hls::stream<LutWord<M, W>>& lut, hls::stream<CodeItem<M>>& codes, hls::stream<KeyOut>& out,
               uint32_t ncells) {
  static_assert(W >= 1 && PQ_KSUB % W == 0, "W must divide 256");
  uint32_t table[M][PQ_KSUB];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = table complete dim = 1)
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = table cyclic factor = W dim = 2)
  for (uint32_t c = 0; c < ncells; ++c) {
    for (int b = 0; b < PQ_KSUB / W; ++b) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      pq_store_beat<M, W>(table, lut.read(), b);
    }
    pq_scan_cell<M, LUT_BITS>(table, codes, out);
  }
}

// The same PE inside a 1-D array (FANNS 6.4.2.2): every LUT word is also passed on to the next
// PE on `lut_fwd` as it is loaded, so one LUT stream reaches all PEs without a broadcast.
template <int M, int LUT_BITS, int W = 1>
void pq_decode(hls::stream<LutWord<M, W>>& lut, hls::stream<LutWord<M, W>>& lut_fwd, hls::stream<CodeItem<M>>& codes,
               hls::stream<KeyOut>& out, uint32_t ncells) {
  static_assert(W >= 1 && PQ_KSUB % W == 0, "W must divide 256");
  uint32_t table[M][PQ_KSUB];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = table complete dim = 1)
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = table cyclic factor = W dim = 2)
  for (uint32_t c = 0; c < ncells; ++c) {
    for (int b = 0; b < PQ_KSUB / W; ++b) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const LutWord<M, W> beat = lut.read();
      lut_fwd.write(beat);
      pq_store_beat<M, W>(table, beat, b);
    }
    pq_scan_cell<M, LUT_BITS>(table, codes, out);
  }
}

}  // namespace fanns

#endif  // FANNS_PQ_DECODE_H
