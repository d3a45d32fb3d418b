// Hierarchical priority queue, HPQ (FANNS 6.4.1.2), and its approximate variant AHPQ (ChamVS
// 4.4.2.2): the S smallest keys of Z streams. Same behaviour as fanns/pe/hpq.py: item k of a
// query on stream j goes to level-1 queue 2j + (k % 2); each level-1 queue keeps its S1 smallest
// keys (S1 = S: exact HPQ; S1 < S: AHPQ); the level-2 queue collects queues 0 .. 2Z-1, S1 keys
// each, and emits the S smallest ascending.
#ifndef FANNS_HPQ_H
#define FANNS_HPQ_H

#include "fanns_hls.h"
#include "systolic_pq.h"

namespace fanns {

// One query: reads every stream up to its `last` item, writes S keys (`last` on the S-th).
template <int Z, int S, int S1, int KEY_BITS>
void hpq(hls::stream<KeyItem> in[Z], hls::stream<KeyItem>& out) {
  static_assert(S1 >= 1 && S1 <= S, "level-1 length S1 must be 1..S");
  uint64_t l1[2 * Z][S1];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = l1 complete dim = 0)
  for (int k = 0; k < 2 * Z; ++k) {
    FANNS_PRAGMA(HLS UNROLL)
    pq_clear<S1, KEY_BITS>(l1[k]);
  }
  bool done[Z];
  bool odd[Z];
  int open = Z;
  for (int j = 0; j < Z; ++j) {
    FANNS_PRAGMA(HLS UNROLL)
    done[j] = false;
    odd[j] = false;
  }
  // Level 1: every stream delivers one item per iteration (each queue gets one every two).
  while (open > 0) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    for (int j = 0; j < Z; ++j) {
      FANNS_PRAGMA(HLS UNROLL)
      if (!done[j]) {
        const KeyItem item = in[j].read();
        pq_replace<S1>(l1[2 * j + (odd[j] ? 1 : 0)], item.key);
        odd[j] = !odd[j];
        if (item.last) {
          done[j] = true;
          --open;
        }
      }
    }
  }
  // Level 2: settle, then collect every level-1 queue in order.
  uint64_t l2[S];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = l2 complete)
  pq_clear<S, KEY_BITS>(l2);
  for (int k = 0; k < 2 * Z; ++k) {
    pq_settle<S1>(l1[k]);
    for (int c = 0; c < S1; ++c) {
      FANNS_PRAGMA(HLS PIPELINE II = 2)
      pq_replace<S>(l2, pq_pop<S1, KEY_BITS>(l1[k]));
    }
  }
  pq_settle<S>(l2);
  for (int i = 0; i < S; ++i) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    out.write(KeyItem{pq_pop<S, KEY_BITS>(l2), i == S - 1});
  }
}

}  // namespace fanns

#endif  // FANNS_HPQ_H
