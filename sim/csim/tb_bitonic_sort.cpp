// C-simulation driver of hls/bitonic_sort.h: tb_bitonic_sort IN.bin OUT.bin N
// IN holds N*TB_L uint64 keys (N vectors), OUT receives the N sorted vectors.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "bitonic_sort.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IN OUT N\n", argv[0]);
    return 2;
  }
  const uint32_t n = uint32_t(std::atoi(argv[3]));
  const auto keys = load<uint64_t>(argv[1], size_t(n) * TB_L);
  hls::stream<fanns::KeyVec<TB_L>> in("in"), out("out");
  for (uint32_t v = 0; v < n; ++v) {
    fanns::KeyVec<TB_L> vec;
    for (int i = 0; i < TB_L; ++i) vec.k[i] = keys[size_t(v) * TB_L + i];
    in.write(vec);
  }
  fanns::bitonic_sort<TB_L>(in, out, n);
  std::vector<uint64_t> sorted(size_t(n) * TB_L);
  for (uint32_t v = 0; v < n; ++v) {
    const fanns::KeyVec<TB_L> vec = out.read();
    for (int i = 0; i < TB_L; ++i) sorted[size_t(v) * TB_L + i] = vec.k[i];
  }
  save(argv[2], sorted);
  return 0;
}
