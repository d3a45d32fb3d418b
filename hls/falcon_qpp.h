// The Falcon query processing pipeline (QPP) with Delayed-Synchronization Traversal, as HLS C++
// (thesis ch. 7, Algorithm 2; docs/graph_architecture.md). A generated kernel
// (templates/graph_hls/kernel.cpp.j2) provides the configuration `CFG` (compile-time sizes) and
// the memory view `MEM` (one m_axi port per graph channel) and calls `dst_query` per query.
//
// The result must equal the DST reference (fanns/index/graph_traversal.py, configured by
// fanns/reference/graph.py) bit for bit, so this code follows the reference's order of
// events exactly:
//  * the entry is tested-and-set in the Bloom filter of unit entry % UNITS, its key goes into R,
//    and its neighbour list is evaluated as group 0;
//  * a group is evaluated when it is launched: candidates in key order, each one's neighbours in
//    adjacency order, each id tested-and-set in the Bloom filter of BFC unit id % UNITS (so every
//    unit's filter sees the reference's sequence of ids); unvisited ids get their squared L2;
//  * groups are committed in launch order from a FIFO of at most mg evaluated groups; a commit
//    latches T = Max(R) (the l-th smallest key of R, +infinity while R holds fewer than l) and
//    inserts the group's keys not above T into C (CAND keys) and R (l keys);
//  * after each commit the controller refills to mg groups in flight, popping up to mc keys of C
//    not above Max(R) per group, and stops when no key qualifies. The query ends when no group
//    is in flight; the result is R[:k].
// The RTL overlaps the evaluation of in-flight groups with the commits of earlier ones; this
// kernel evaluates a group at its launch and holds its keys until its commit. Evaluation only
// reads memory and the Bloom filters, which see the same ids in the same order either way, and a
// commit depends only on the group's set of keys and the queues' state, so the results, and the
// hops / checks / visited / groups statistics, are the same.
#ifndef FANNS_FALCON_QPP_H
#define FANNS_FALCON_QPP_H

#include "bloom.h"
#include "fanns_hls.h"

namespace fanns {
namespace falcon {

// One memory beat of BYTES bytes, little endian (byte i is bits 8i..8i+7 of w[i / 8]).
template <int BYTES>
struct Word {
  uint64_t w[BYTES / 8];
};

template <int BYTES>
inline uint32_t word_u32(const Word<BYTES>& b, int i) {
  return uint32_t(b.w[i / 2] >> (32 * (i % 2)));
}

// Vector element i of a beat: EB bytes (1 or 2), signed or unsigned (fanns.numerics.GraphFormat).
template <int EB, bool SIGNED, int BYTES>
inline int32_t word_elem(const Word<BYTES>& b, int i) {
  static_assert(EB == 1 || EB == 2, "graph vector elements are 1 or 2 bytes");
  constexpr int PER = 8 / EB;
  const uint64_t raw = b.w[i / PER] >> (8 * EB * (i % PER));
  if (EB == 1) return SIGNED ? int32_t(int8_t(uint8_t(raw))) : int32_t(uint8_t(raw));
  return SIGNED ? int32_t(int16_t(uint16_t(raw))) : int32_t(uint16_t(raw));
}

constexpr uint64_t kNoKey = ~uint64_t(0);  // an empty slot; also "missing" in the result row

// A bounded ascending queue of keys in a register array (one compare per slot per insert, as the
// systolic queues of Falcon 7.3.2.1): the CAP smallest keys inserted, r[0] the smallest.
template <int CAP>
struct SortedQueue {
  uint64_t r[CAP];
  int size;

  void clear() {
    for (int i = 0; i < CAP; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      r[i] = kNoKey;
    }
    size = 0;
  }

  // Every slot takes its left neighbour, the key or itself: one parallel shift.
  void insert(uint64_t key) {
    for (int i = CAP - 1; i > 0; --i) {
      FANNS_PRAGMA(HLS UNROLL)
      if (r[i - 1] > key) {
        r[i] = r[i - 1];
      } else if (r[i] > key) {
        r[i] = key;
      }
    }
    if (r[0] > key) r[0] = key;
    if (size < CAP) ++size;
  }

  // Removes the smallest key.
  void pop() {
    for (int i = 0; i + 1 < CAP; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      r[i] = r[i + 1];
    }
    r[CAP - 1] = kNoKey;
    if (size > 0) --size;
  }
};

// The statistics of one query (the result row's hops, checks, visited, groups).
struct Stats {
  uint32_t hops;
  uint32_t checks;
  uint32_t visited;
  uint32_t groups;
};

// Keys of one evaluated group: up to MC_MAX candidates' neighbours.
template <class CFG>
struct Group {
  uint64_t keys[CFG::MC_MAX * CFG::MAX_DEGREE];
  int n;
};

template <class CFG>
using Bloom = BloomFilter<CFG::BLOOM_H, CFG::BLOOM_BANK_BITS, CFG::BLOOM_W, CFG::BLOOM_SEED>;

// Squared L2 of node `id`'s vector to the query: exact integers, the reference's arithmetic.
template <class CFG, class MEM>
uint64_t node_distance(const MEM& mem, uint32_t id, const int32_t q[CFG::D]) {
  constexpr int PER = CFG::PORT_BYTES / CFG::EB;
  uint64_t acc = 0;
  for (int b = 0; b < CFG::VEC_BEATS; ++b) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const Word<CFG::PORT_BYTES> beat = mem.vector(id, b);
    for (int i = 0; i < PER; ++i) {
      FANNS_PRAGMA(HLS UNROLL)
      const int e = b * PER + i;
      if (e < CFG::D) {
        const int64_t diff = int64_t(word_elem<CFG::EB, CFG::SIGNED>(beat, i)) - int64_t(q[e]);
        acc += uint64_t(diff * diff);
      }
    }
  }
  return acc;
}

// The BFC step of one id: test-and-set in unit id % UNITS's filter; unvisited ids get a key.
template <class CFG, class MEM>
bool check_node(const MEM& mem, Bloom<CFG> bloom[CFG::UNITS], uint32_t id, const int32_t q[CFG::D], uint64_t& key, Stats& s) {
  ++s.checks;
  if (bloom[id % CFG::UNITS].test_and_set(id)) return false;
  ++s.visited;
  key = node_distance<CFG>(mem, id, q) << 32 | id;
  return true;
}

// Evaluates one group: `cands[0..ncand)` (keys, ascending) in order, their neighbour lists in
// adjacency order. Ids beyond the row's degree (padding), and any id >= nodes or degree above
// MAX_DEGREE (only a corrupt image has them), are not checked.
template <class CFG, class MEM>
void evaluate(const MEM& mem, Bloom<CFG> bloom[CFG::UNITS], const uint64_t* cands, int ncand, uint32_t nodes,
              const int32_t q[CFG::D], Group<CFG>& out, Stats& s) {
  constexpr int PER = CFG::PORT_BYTES / 4;
  out.n = 0;
  ++s.groups;
  for (int c = 0; c < ncand; ++c) {
    const uint32_t node = uint32_t(cands[c]);
    ++s.hops;
    uint32_t row[CFG::ADJ_BEATS * PER];
    for (int b = 0; b < CFG::ADJ_BEATS; ++b) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const Word<CFG::PORT_BYTES> beat = mem.adjacency(node, b);
      for (int i = 0; i < PER; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        row[b * PER + i] = word_u32(beat, i);
      }
    }
    const uint32_t degree = row[0] <= uint32_t(CFG::MAX_DEGREE) ? row[0] : 0;
    for (uint32_t j = 0; j < degree; ++j) {
      const uint32_t id = row[1 + j];
      uint64_t key;
      if (id < nodes && check_node<CFG>(mem, bloom, id, q, key, s)) out.keys[out.n++] = key;
    }
  }
}

// One query of DST (the module comment); `result` receives R[:k] ascending, kNoKey past it.
template <class CFG, class MEM>
void dst_query(const MEM& mem, Bloom<CFG> bloom[CFG::UNITS], const int32_t q[CFG::D], uint32_t nodes, uint32_t entry,
               uint32_t l, uint32_t mg, uint32_t mc, uint64_t result[CFG::K_MAX], uint32_t k, Stats& s) {
  static SortedQueue<CFG::CAND> C;
  static SortedQueue<CFG::L_MAX> R;
  static Group<CFG> inflight[CFG::MG_MAX];  // FIFO of evaluated groups waiting for their commit
  for (int u = 0; u < CFG::UNITS; ++u) bloom[u].clear();
  C.clear();
  R.clear();
  s = Stats{0, 0, 0, 0};
  // group 0: the entry (checked, into R) and its neighbour list
  uint64_t entry_key = kNoKey;
  check_node<CFG>(mem, bloom, entry, q, entry_key, s);
  R.insert(entry_key);
  const uint64_t entry_cand = entry;
  evaluate<CFG>(mem, bloom, &entry_cand, 1, nodes, q, inflight[0], s);
  int head = 0, pending = 1;
  while (pending > 0) {
    // commit the oldest group with the threshold of this moment
    const Group<CFG>& g = inflight[head];
    const uint64_t t = R.size >= int(l) ? R.r[l - 1] : kNoKey;
    for (int i = 0; i < g.n; ++i) {
      if (g.keys[i] <= t) {
        C.insert(g.keys[i]);
        R.insert(g.keys[i]);
      }
    }
    head = (head + 1) % CFG::MG_MAX;
    --pending;
    // refill: launch groups of up to mc candidates not above Max(R) while fewer than mg fly
    while (pending < int(mg)) {
      const uint64_t limit = R.size >= int(l) ? R.r[l - 1] : kNoKey;
      uint64_t group[CFG::MC_MAX];
      int take = 0;
      while (take < int(mc) && C.size > 0 && C.r[0] <= limit) {
        group[take++] = C.r[0];
        C.pop();
      }
      if (take == 0) break;
      evaluate<CFG>(mem, bloom, group, take, nodes, q, inflight[(head + pending) % CFG::MG_MAX], s);
      ++pending;
    }
  }
  for (int i = 0; i < CFG::K_MAX; ++i) result[i] = uint32_t(i) < k && i < R.size ? R.r[i] : kNoKey;
}

}  // namespace falcon
}  // namespace fanns

#endif  // FANNS_FALCON_QPP_H
