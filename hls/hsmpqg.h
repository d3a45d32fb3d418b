// HSMPQG (fanns/pe/hsmpqg.py, FANNS 6.4.1.2 option 2): the S smallest keys of Z streams. Every
// cycle takes one key from each unfinished stream (finished streams and the dummy inputs of the
// last sorter feed the sentinel), sorts groups of L (the smallest power of two >= S) with bitonic
// networks, merges them down to the L smallest with bitonic partial mergers, and hands the first
// S, one per lane, to an HPQ over S streams (hpq.h), which emits the S smallest of the query.
#ifndef FANNS_HSMPQG_H
#define FANNS_HSMPQG_H

#include "bitonic_merge.h"
#include "hpq.h"

namespace fanns {

// The sorting width L: the smallest power of two >= S.
template <int S>
constexpr int hsmpqg_width() {
  int l = 1;
  while (l < S) l <<= 1;
  return l;
}

// Sort and merge: one cycle's keys of all streams in, its S smallest out (one per lane, ascending).
template <int Z, int S, int KEY_BITS>
void hsmpqg_reduce(hls::stream<KeyItem> in[Z], hls::stream<KeyItem> lanes[S]) {
  constexpr int L = hsmpqg_width<S>();
  constexpr int NS = (Z + L - 1) / L;
  static_assert(S >= 1 && S < Z, "HSMPQG needs 1 <= S < Z (use HPQ otherwise)");
  bool done[Z];
  for (int j = 0; j < Z; ++j) {
    FANNS_PRAGMA(HLS UNROLL)
    done[j] = false;
  }
  for (bool end = false; !end;) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    uint64_t v[NS][L];
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = v complete dim = 0)
    end = true;
    for (int j = 0; j < NS * L; ++j) {
      FANNS_PRAGMA(HLS UNROLL)
      uint64_t key = key_sentinel<KEY_BITS>();
      if (j < Z && !done[j]) {
        const KeyItem item = in[j].read();
        key = item.key;
        done[j] = item.last;
      }
      if (j < Z && !done[j]) end = false;
      v[j / L][j % L] = key;
    }
    for (int c = 0; c < NS; ++c) {
      FANNS_PRAGMA(HLS UNROLL)
      bitonic_sort_network<L>(v[c]);
    }
    for (int count = NS; count > 1; count = (count + 1) / 2) {
      FANNS_PRAGMA(HLS UNROLL)
      for (int g = 0; g < count / 2; ++g) {
        FANNS_PRAGMA(HLS UNROLL)
        uint64_t merged[L];
        bitonic_partial_merge_network<L>(v[2 * g], v[2 * g + 1], merged);
        for (int i = 0; i < L; ++i) v[g][i] = merged[i];
      }
      if (count % 2)
        for (int i = 0; i < L; ++i) v[count / 2][i] = v[count - 1][i];
    }
    for (int k = 0; k < S; ++k) {
      FANNS_PRAGMA(HLS UNROLL)
      lanes[k].write(KeyItem{v[0][k], end});
    }
  }
}

// One query: reads every stream up to its `last` key, writes S keys (`last` on the S-th).
template <int Z, int S, int KEY_BITS>
void hsmpqg(hls::stream<KeyItem> in[Z], hls::stream<KeyItem>& out) {
  FANNS_PRAGMA(HLS DATAFLOW)
  hls::stream<KeyItem> lanes[S];
  hsmpqg_reduce<Z, S, KEY_BITS>(in, lanes);
  hpq<S, S, S, KEY_BITS>(lanes, out);
}

}  // namespace fanns

#endif  // FANNS_HSMPQG_H
