// C-simulation driver of hls/bloom.h: tb_bloom IDS.bin LAST.bin VISITED.bin N
// IDS holds N uint32 node ids, LAST N uint8 end-of-query flags; VISITED receives N uint8 flags.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "tb_io.h"

#include "bloom.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s IDS LAST VISITED N\n", argv[0]);
    return 2;
  }
  const uint32_t n = uint32_t(std::atoi(argv[4]));
  const auto ids = load<uint32_t>(argv[1], n);
  const auto last = load<uint8_t>(argv[2], n);
  using Filter = fanns::BloomFilter<TB_H, TB_BANK_BITS, TB_W, TB_SEED>;
  auto filter = std::make_unique<Filter>();
  hls::stream<fanns::BloomIn> in("in");
  hls::stream<fanns::BloomOut> out("out");
  for (uint32_t i = 0; i < n; ++i) in.write(fanns::BloomIn{ids[i], last[i] != 0});
  fanns::bloom<TB_H, TB_BANK_BITS, TB_W, TB_SEED>(*filter, in, out, n);
  std::vector<uint8_t> visited(n);
  for (uint32_t i = 0; i < n; ++i) {
    const fanns::BloomOut o = out.read();
    if (o.id != ids[i] || o.last != (last[i] != 0)) {
      std::fprintf(stderr, "output %u out of order\n", i);
      return 1;
    }
    visited[i] = o.visited ? 1 : 0;
  }
  save(argv[3], visited);
  return 0;
}
