// IVF distance PE (Stage IVFDist): same behaviour as fanns/pe/ivf_dist.py.
// Per query: read the D/W query words (forwarding each on q_fwd, the 1-D array chain), then for
// every centroid c the exact squared L2 >> SHIFT, saturated to DIST_BITS, as the key
// (dist << 32) | (id_base + c); `last` on the final centroid. Centroids are an on-chip array
// (ivf_dist) or NLIST*D/W words per query on a stream (ivf_dist_stream).
#ifndef FANNS_IVF_DIST_H
#define FANNS_IVF_DIST_H

#include "fanns_arith.h"
#include "fanns_hls.h"

namespace fanns {

template <typename T, int D, int W>
void ivf_read_query(hls::stream<VecWord<T, W>>& q, hls::stream<VecWord<T, W>>& q_fwd, T query[D]) {
  for (int k = 0; k < D / W; ++k) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const VecWord<T, W> word = q.read();
    q_fwd.write(word);
    for (int i = 0; i < W; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      query[k * W + i] = word.e[i];
    }
  }
}

template <int SHIFT, int DIST_BITS>
KeyOut ivf_key(uint64_t exact, uint32_t id, bool last) {
  return KeyOut{(sat_unsigned(exact >> SHIFT, DIST_BITS) << 32) | id, last};
}

// W lanes of one centroid word against the matching query word.
template <typename T, int W>
uint64_t ivf_word_sq(const VecWord<T, W>& c, const T* qword) {
  uint64_t sum = 0;
  for (int i = 0; i < W; ++i) {
    FANNS_PRAGMA(HLS UNROLL)
    const int64_t diff = int64_t(c.e[i]) - int64_t(qword[i]);
    sum += uint64_t(diff * diff);
  }
  return sum;
}

template <typename T, int D, int W, int NLIST, int SHIFT, int DIST_BITS>
void ivf_dist(hls::stream<VecWord<T, W>>& q, hls::stream<VecWord<T, W>>& q_fwd, const VecWord<T, W> centroids[NLIST * (D / W)],
              hls::stream<KeyOut>& keys, uint32_t id_base, uint32_t nq) {
  static_assert(D % W == 0, "W must divide D");
  for (uint32_t t = 0; t < nq; ++t) {
    T query[D];
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = query cyclic factor = W)
    ivf_read_query<T, D, W>(q, q_fwd, query);
    for (int c = 0; c < NLIST; ++c) {
      uint64_t acc = 0;
      for (int k = 0; k < D / W; ++k) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        acc += ivf_word_sq<T, W>(centroids[c * (D / W) + k], &query[k * W]);
      }
      keys.write(ivf_key<SHIFT, DIST_BITS>(acc, id_base + uint32_t(c), c == NLIST - 1));
    }
  }
}

template <typename T, int D, int W, int NLIST, int SHIFT, int DIST_BITS>
void ivf_dist_stream(hls::stream<VecWord<T, W>>& q, hls::stream<VecWord<T, W>>& q_fwd, hls::stream<VecWord<T, W>>& centroids,
                     hls::stream<KeyOut>& keys, uint32_t id_base, uint32_t nq) {
  static_assert(D % W == 0, "W must divide D");
  for (uint32_t t = 0; t < nq; ++t) {
    T query[D];
    FANNS_PRAGMA(HLS ARRAY_PARTITION variable = query cyclic factor = W)
    ivf_read_query<T, D, W>(q, q_fwd, query);
    for (int c = 0; c < NLIST; ++c) {
      uint64_t acc = 0;
      for (int k = 0; k < D / W; ++k) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        acc += ivf_word_sq<T, W>(centroids.read(), &query[k * W]);
      }
      keys.write(ivf_key<SHIFT, DIST_BITS>(acc, id_base + uint32_t(c), c == NLIST - 1));
    }
  }
}

}  // namespace fanns

#endif  // FANNS_IVF_DIST_H
