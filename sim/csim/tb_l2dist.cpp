// C-simulation driver of hls/l2dist.h: tb_l2dist QUERY.bin VECTORS.bin DIST.bin N
// QUERY holds D elements of TB_ELEM, VECTORS N*D elements, DIST receives N uint64.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "l2dist.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s QUERY VECTORS DIST N\n", argv[0]);
    return 2;
  }
  const uint32_t n = uint32_t(std::atoi(argv[4]));
  const auto q = load<TB_ELEM>(argv[1], TB_D);
  const auto x = load<TB_ELEM>(argv[2], size_t(n) * TB_D);
  hls::stream<fanns::VecWord<TB_ELEM, TB_W>> words("x");
  for (uint32_t v = 0; v < n; ++v)
    for (int k = 0; k < TB_D / TB_W; ++k) {
      fanns::VecWord<TB_ELEM, TB_W> w;
      for (int i = 0; i < TB_W; ++i) w.e[i] = x[size_t(v) * TB_D + k * TB_W + i];
      words.write(w);
    }
  hls::stream<uint64_t> dist("dist");
  fanns::l2dist<TB_ELEM, TB_D, TB_W>(q.data(), words, dist, n);
  std::vector<uint64_t> out(n);
  for (auto& d : out) d = dist.read();
  save(argv[3], out);
  return 0;
}
