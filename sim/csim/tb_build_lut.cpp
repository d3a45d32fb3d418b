// C-simulation driver of hls/build_lut.h:
//   tb_build_lut Q C LAST BOOK LUTS LAST_OUT N
// Q, C: N*TB_D int32 (query and probed centroid per probe), LAST: N uint8, BOOK: TB_M*TB_ROWS*(TB_D/TB_M)
// int32 (numerics layout [m, rows, dsub]); LUTS receives N*TB_ROWS*TB_M uint32, LAST_OUT N*TB_ROWS uint8.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "build_lut.h"

static int32_t codebook[TB_ROWS][TB_D];

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s Q C LAST BOOK LUTS LAST_OUT N\n", argv[0]);
    return 2;
  }
  constexpr int DSUB = TB_D / TB_M;
  const size_t n = size_t(std::atol(argv[7]));
  const auto q = load<int32_t>(argv[1], n * TB_D);
  const auto c = load<int32_t>(argv[2], n * TB_D);
  const auto last = load<uint8_t>(argv[3], n);
  const auto book = load<int32_t>(argv[4], size_t(TB_M) * TB_ROWS * DSUB);
  for (int s = 0; s < TB_M; ++s)
    for (int j = 0; j < TB_ROWS; ++j)
      for (int e = 0; e < DSUB; ++e) codebook[j][s * DSUB + e] = book[(size_t(s) * TB_ROWS + j) * DSUB + e];
  hls::stream<fanns::ProbeWord<int32_t, TB_W>> x("x");
  for (size_t p = 0; p < n; ++p)
    for (int k = 0; k < TB_D / TB_W; ++k) {
      fanns::ProbeWord<int32_t, TB_W> word;
      for (int i = 0; i < TB_W; ++i) {
        word.q[i] = q[p * TB_D + k * TB_W + i];
        word.c[i] = c[p * TB_D + k * TB_W + i];
      }
      word.last = last[p] != 0;
      x.write(word);
    }
  hls::stream<fanns::LutOut<TB_M>> out("out");
  fanns::build_lut<int32_t, TB_D, TB_M, TB_W, TB_SHIFT, TB_LUT_BITS, TB_ROWS>(x, codebook, out, uint32_t(n));
  std::vector<uint32_t> luts(n * TB_ROWS * TB_M);
  std::vector<uint8_t> last_out(n * TB_ROWS);
  for (size_t t = 0; t < n * TB_ROWS; ++t) {
    const fanns::LutOut<TB_M> word = out.read();
    for (int s = 0; s < TB_M; ++s) luts[t * TB_M + s] = word.e[s];
    last_out[t] = word.last;
  }
  if (!x.empty() || !out.empty()) {
    std::fprintf(stderr, "streams not drained\n");
    return 1;
  }
  save(argv[5], luts);
  save(argv[6], last_out);
  return 0;
}
