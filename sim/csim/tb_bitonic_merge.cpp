// C-simulation driver of hls/bitonic_merge.h: tb_bitonic_merge A.bin B.bin OUT.bin N
// A and B hold N ascending arrays of TB_L uint64 keys each; OUT receives the N merged arrays.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "bitonic_merge.h"

static void push(hls::stream<fanns::KeyVec<TB_L>>& s, const std::vector<uint64_t>& keys, uint32_t n) {
  for (uint32_t v = 0; v < n; ++v) {
    fanns::KeyVec<TB_L> vec;
    for (int i = 0; i < TB_L; ++i) vec.k[i] = keys[size_t(v) * TB_L + i];
    s.write(vec);
  }
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s A B OUT N\n", argv[0]);
    return 2;
  }
  const uint32_t n = uint32_t(std::atoi(argv[4]));
  hls::stream<fanns::KeyVec<TB_L>> a("a"), b("b"), out("out");
  push(a, load<uint64_t>(argv[1], size_t(n) * TB_L), n);
  push(b, load<uint64_t>(argv[2], size_t(n) * TB_L), n);
  fanns::bitonic_merge<TB_L>(a, b, out, n);
  std::vector<uint64_t> merged(size_t(n) * TB_L);
  for (uint32_t v = 0; v < n; ++v) {
    const fanns::KeyVec<TB_L> vec = out.read();
    for (int i = 0; i < TB_L; ++i) merged[size_t(v) * TB_L + i] = vec.k[i];
  }
  save(argv[3], merged);
  return 0;
}
