// Graph-search queue (Falcon 7.3.2.1): a bounded systolic priority queue driven by commands.
// Same behaviour as fanns/pe/systolic_queue.py, on the register array of systolic_pq.h:
// INSERT replaces the largest kept key when smaller (bounded to S keys), POP emits the smallest
// (the sentinel when empty), FLUSH emits all S ascending and empties the queue, CLEAR empties it.
// POP and FLUSH first let the array settle (S-1 phases) when keys were inserted since.
#ifndef FANNS_SYSTOLIC_QUEUE_H
#define FANNS_SYSTOLIC_QUEUE_H

#include "fanns_hls.h"
#include "systolic_pq.h"

namespace fanns {

enum QueueOp : uint8_t { QUEUE_INSERT = 0, QUEUE_POP = 1, QUEUE_FLUSH = 2, QUEUE_CLEAR = 3 };

struct QueueCmd {
  uint64_t key;
  uint8_t op;
};

// The largest kept key (the sentinel while fewer than S are held): r[0] after any command.
template <int S>
inline uint64_t pq_worst(const uint64_t r[S]) {
  return r[0];
}

// Executes `n` commands; outputs go to `out` ({key, last}: last on a POP and on a FLUSH's S-th).
template <int S, int KEY_BITS>
void systolic_queue(hls::stream<QueueCmd>& cmd, hls::stream<KeyItem>& out, uint32_t n) {
  uint64_t r[S];
  FANNS_PRAGMA(HLS ARRAY_PARTITION variable = r complete)
  pq_clear<S, KEY_BITS>(r);
  bool unsettled = false;
  for (uint32_t c = 0; c < n; ++c) {
    const QueueCmd command = cmd.read();
    if (command.op == QUEUE_INSERT) {
      pq_replace<S>(r, command.key);
      unsettled = true;
    } else if (command.op == QUEUE_CLEAR) {
      pq_clear<S, KEY_BITS>(r);
      unsettled = false;
    } else {
      if (unsettled) pq_settle<S>(r);
      unsettled = false;
      const int count = command.op == QUEUE_POP ? 1 : S;
      for (int i = 0; i < count; ++i) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        out.write(KeyItem{pq_pop<S, KEY_BITS>(r), command.op == QUEUE_POP || i == S - 1});
      }
    }
  }
}

}  // namespace fanns

#endif  // FANNS_SYSTOLIC_QUEUE_H
