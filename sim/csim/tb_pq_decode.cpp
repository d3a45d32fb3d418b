// C-simulation driver of hls/pq_decode.h:
//   tb_pq_decode LUTS CODES IDS PAD LAST_CELL LAST_QUERY KEYS LAST NCELLS N
// LUTS: NCELLS*256*TB_M uint32 (word order; TB_W words a beat), CODES: N*TB_M uint8, IDS: N uint32, PAD/LAST_*: N uint8.
// KEYS receives N uint64, LAST N uint8.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "pq_decode.h"

int main(int argc, char** argv) {
  if (argc != 11) {
    std::fprintf(stderr, "usage: %s LUTS CODES IDS PAD LAST_CELL LAST_QUERY KEYS LAST NCELLS N\n", argv[0]);
    return 2;
  }
  const uint32_t ncells = uint32_t(std::atoi(argv[9]));
  const size_t n = size_t(std::atol(argv[10]));
  const auto luts = load<uint32_t>(argv[1], size_t(ncells) * fanns::PQ_KSUB * TB_M);
  const auto codes = load<uint8_t>(argv[2], n * TB_M);
  const auto ids = load<uint32_t>(argv[3], n);
  const auto pad = load<uint8_t>(argv[4], n);
  const auto last_cell = load<uint8_t>(argv[5], n);
  const auto last_query = load<uint8_t>(argv[6], n);
  hls::stream<fanns::LutWord<TB_M, TB_W>> lut("lut");
  for (size_t b = 0; b < size_t(ncells) * fanns::PQ_KSUB / TB_W; ++b) {
    fanns::LutWord<TB_M, TB_W> beat;
    for (int r = 0; r < TB_W; ++r)
      for (int i = 0; i < TB_M; ++i) beat.e[r][i] = luts[(b * TB_W + r) * TB_M + i];
    lut.write(beat);
  }
  hls::stream<fanns::CodeItem<TB_M>> items("codes");
  for (size_t t = 0; t < n; ++t) {
    fanns::CodeItem<TB_M> item;
    for (int i = 0; i < TB_M; ++i) item.code[i] = codes[t * TB_M + i];
    item.id = ids[t];
    item.pad = pad[t] != 0;
    item.last_cell = last_cell[t] != 0;
    item.last_query = last_query[t] != 0;
    items.write(item);
  }
  hls::stream<fanns::KeyOut> out("out");
  fanns::pq_decode<TB_M, TB_LUT_BITS, TB_W>(lut, items, out, ncells);
  std::vector<uint64_t> keys(n);
  std::vector<uint8_t> last(n);
  for (size_t t = 0; t < n; ++t) {
    const fanns::KeyOut k = out.read();
    keys[t] = k.key;
    last[t] = k.last;
  }
  if (!out.empty() || !lut.empty() || !items.empty()) {
    std::fprintf(stderr, "streams not drained\n");
    return 1;
  }
  save(argv[7], keys);
  save(argv[8], last);
  return 0;
}
