// C-simulation driver of hls/hpq.h, and of hls/hsmpqg.h when TB_HSMPQG is defined (same streams,
// same contract): tb_hpq SIZES.bin KEYS.bin OUT.bin Q
// SIZES holds Q*TB_Z uint32 (items per query and stream, query-major), KEYS the keys in the same
// order (uint64, concatenated); OUT receives Q*TB_S uint64 keys. Checks `last` flags itself.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#ifdef TB_HSMPQG
#include "hsmpqg.h"
#define TB_KERNEL fanns::hsmpqg<TB_Z, TB_S, TB_KEY_BITS>
#else
#include "hpq.h"
#define TB_KERNEL fanns::hpq<TB_Z, TB_S, TB_S1, TB_KEY_BITS>
#endif

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SIZES KEYS OUT Q\n", argv[0]);
    return 2;
  }
  const size_t nq = size_t(std::atoi(argv[4]));
  const auto sizes = load<uint32_t>(argv[1], nq * TB_Z);
  size_t total = 0;
  for (uint32_t n : sizes) total += n;
  const auto keys = load<uint64_t>(argv[2], total);
  std::vector<uint64_t> result;
  size_t pos = 0;
  for (size_t q = 0; q < nq; ++q) {
    hls::stream<fanns::KeyItem> in[TB_Z];
    hls::stream<fanns::KeyItem> out("out");
    for (int j = 0; j < TB_Z; ++j) {
      const uint32_t n = sizes[q * TB_Z + j];
      for (uint32_t k = 0; k < n; ++k, ++pos) in[j].write(fanns::KeyItem{keys[pos], k + 1 == n});
    }
    TB_KERNEL(in, out);
    for (int i = 0; i < TB_S; ++i) {
      const fanns::KeyItem item = out.read();
      if (item.last != (i == TB_S - 1)) {
        std::fprintf(stderr, "query %zu: wrong last flag on output %d\n", q, i);
        return 1;
      }
      result.push_back(item.key);
    }
    for (int j = 0; j < TB_Z; ++j)
      if (!in[j].empty()) {
        std::fprintf(stderr, "query %zu: stream %d not drained\n", q, j);
        return 1;
      }
  }
  save(argv[3], result);
  return 0;
}
