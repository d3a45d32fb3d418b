// Systolic priority queue, replace-only (FANNS 6.4.1.1): the S smallest keys of each query.
// Same behaviour as fanns/pe/systolic_pq.py and the same register array and schedule as
// fanns/engines/systolic.py: r[0] holds the largest kept key; a replace is `r[0] = min(r[0], key)`
// with the odd compare-swap pairs, then the even pairs (II = 2); after the query's last key,
// S-1 alternating phases sort the array, and the keys leave ascending from r[S-1].
// Keys are KEY_BITS-bit selection keys ((dist << 32) | id) in a uint64_t; the sentinel is all ones.
#ifndef FANNS_SYSTOLIC_PQ_H
#define FANNS_SYSTOLIC_PQ_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

// One item of a key stream: a selection key and the end-of-query flag (the same type the
// distance PEs emit, so their outputs feed a selection PE directly).
using KeyItem = KeyOut;

template <int KEY_BITS>
constexpr uint64_t key_sentinel() {
  static_assert(KEY_BITS >= 1 && KEY_BITS <= 64, "KEY_BITS must be 1..64");
  return KEY_BITS == 64 ? ~uint64_t(0) : (uint64_t(1) << KEY_BITS) - 1;
}

// The register array r[0..S-1] with its compare-swap units. Callers declare `uint64_t r[S]` and
// partition it completely (FANNS_PRAGMA(HLS ARRAY_PARTITION variable = r complete)).
template <int S>
inline void pq_swap_pairs(uint64_t r[S], int first) {
  for (int i = first; i + 1 < S; i += 2) {
    FANNS_PRAGMA(HLS UNROLL)
    if (r[i] < r[i + 1]) {
      const uint64_t t = r[i];
      r[i] = r[i + 1];
      r[i + 1] = t;
    }
  }
}

template <int S, int KEY_BITS>
inline void pq_clear(uint64_t r[S]) {
  for (int i = 0; i < S; ++i) {
    FANNS_PRAGMA(HLS UNROLL)
    r[i] = key_sentinel<KEY_BITS>();
  }
}

// One replace: the insert cycle (replace r[0], odd pairs) and the even cycle that follows.
template <int S>
inline void pq_replace(uint64_t r[S], uint64_t key) {
  if (key < r[0]) r[0] = key;
  pq_swap_pairs<S>(r, 1);
  pq_swap_pairs<S>(r, 0);
}

// Sorts the array after the last replace: S-1 more alternating phases, odd first.
template <int S>
inline void pq_settle(uint64_t r[S]) {
  for (int t = 0; t + 1 < S; ++t) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    pq_swap_pairs<S>(r, (t + 1) % 2);
  }
}

// Emits the smallest key r[S-1] of a settled array and shifts a sentinel in at r[0].
template <int S, int KEY_BITS>
inline uint64_t pq_pop(uint64_t r[S]) {
  const uint64_t out = r[S - 1];
  for (int i = S - 1; i > 0; --i) {
    FANNS_PRAGMA(HLS UNROLL)
    r[i] = r[i - 1];
  }
  r[0] = key_sentinel<KEY_BITS>();
  return out;
}

// One query: reads keys until `last`, writes the S smallest ascending (`last` on the S-th).
template <int S, int KEY_BITS>
void systolic_pq(hls::stream<KeyItem>& in, hls::stream<KeyItem>& out) {
  uint64_t r[S];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = r complete)
  pq_clear<S, KEY_BITS>(r);
  for (bool last = false; !last;) {
    FANNS_PRAGMA(HLS PIPELINE II = 2)
    const KeyItem item = in.read();
    pq_replace<S>(r, item.key);
    last = item.last;
  }
  pq_settle<S>(r);
  for (int i = 0; i < S; ++i) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    out.write(KeyItem{pq_pop<S, KEY_BITS>(r), i == S - 1});
  }
}

}  // namespace fanns

#endif  // FANNS_SYSTOLIC_PQ_H
