// C-simulation driver of hls/systolic_pq.h: tb_systolic_pq SIZES.bin KEYS.bin OUT.bin Q
// SIZES holds Q uint32 query sizes, KEYS their keys (uint64, concatenated); OUT receives Q*TB_S
// uint64 keys. Checks the `last` flags itself (exit 1 if wrong).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "systolic_pq.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SIZES KEYS OUT Q\n", argv[0]);
    return 2;
  }
  const size_t nq = size_t(std::atoi(argv[4]));
  const auto sizes = load<uint32_t>(argv[1], nq);
  size_t total = 0;
  for (uint32_t n : sizes) total += n;
  const auto keys = load<uint64_t>(argv[2], total);
  std::vector<uint64_t> result;
  size_t pos = 0;
  for (size_t q = 0; q < nq; ++q) {
    hls::stream<fanns::KeyItem> in("in"), out("out");
    for (uint32_t k = 0; k < sizes[q]; ++k, ++pos) in.write(fanns::KeyItem{keys[pos], k + 1 == sizes[q]});
    fanns::systolic_pq<TB_S, TB_KEY_BITS>(in, out);
    for (int i = 0; i < TB_S; ++i) {
      const fanns::KeyItem item = out.read();
      if (item.last != (i == TB_S - 1)) {
        std::fprintf(stderr, "query %zu: wrong last flag on output %d\n", q, i);
        return 1;
      }
      result.push_back(item.key);
    }
    if (!out.empty() || !in.empty()) {
      std::fprintf(stderr, "query %zu: streams not drained\n", q);
      return 1;
    }
  }
  save(argv[3], result);
  return 0;
}
