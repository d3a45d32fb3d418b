// Types and integer helpers shared by the fanns arithmetic PE headers (the formats of
// fanns/numerics.py).
#ifndef FANNS_ARITH_H
#define FANNS_ARITH_H

#include <cstdint>

namespace fanns {

// One stream word of W vector elements.
template <typename T, int W>
struct VecWord {
  T e[W];
};

// A selection key leaving a PE; `last` marks the final key of a query.
struct KeyOut {
  uint64_t key;
  bool last;
};

// ceil(log2 n) for n >= 1: the extra bits a sum of n terms needs.
constexpr int clog2(int n) { return n <= 1 ? 0 : 1 + clog2((n + 1) / 2); }

// The all-ones key of `bits` bits (empty queue slots, padding).
constexpr uint64_t all_ones(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

// Unsigned saturation to `bits` bits of a non-negative value.
inline uint64_t sat_unsigned(uint64_t x, int bits) { return x > all_ones(bits) ? all_ones(bits) : x; }

// Symmetric signed saturation to `bits` bits: [-(2^(bits-1) - 1), 2^(bits-1) - 1].
inline int64_t sat_signed(int64_t x, int bits) {
  const int64_t lim = (int64_t(1) << (bits - 1)) - 1;
  return x > lim ? lim : (x < -lim ? -lim : x);
}

}  // namespace fanns

#endif  // FANNS_ARITH_H
