// C-simulation driver of hls/opq.h:  tb_opq X A Y LAST NQ
// X: NQ*TB_D int32, A: TB_D*TB_D int32 (16-bit values); Y receives NQ*TB_D int32, LAST NQ*(TB_D/TB_W) uint8.
// TB_STREAM=1 streams the matrix (opq_stream: the whole matrix again for every query).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "opq.h"

static int16_t matrix[TB_D][TB_D];

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s X A Y LAST NQ\n", argv[0]);
    return 2;
  }
  const size_t nq = size_t(std::atol(argv[5]));
  const auto xs = load<int32_t>(argv[1], nq * TB_D);
  const auto a = load<int32_t>(argv[2], size_t(TB_D) * TB_D);
  for (int r = 0; r < TB_D; ++r)
    for (int k = 0; k < TB_D; ++k) matrix[r][k] = int16_t(a[size_t(r) * TB_D + k]);
  hls::stream<fanns::VecWord<int32_t, TB_W>> x("x");
  for (size_t w = 0; w < nq * (TB_D / TB_W); ++w) {
    fanns::VecWord<int32_t, TB_W> word;
    for (int i = 0; i < TB_W; ++i) word.e[i] = xs[w * TB_W + i];
    x.write(word);
  }
  hls::stream<fanns::RotWord<int32_t, TB_W>> y("y");
#if TB_STREAM
  hls::stream<fanns::MatWord<TB_W>> rows("rows");
  for (size_t t = 0; t < nq; ++t)
    for (int r = 0; r < TB_D; ++r)
      for (int k = 0; k < TB_D / TB_W; ++k) {
        fanns::MatWord<TB_W> word;
        for (int i = 0; i < TB_W; ++i) word.e[i] = matrix[r][k * TB_W + i];
        rows.write(word);
      }
  fanns::opq_stream<int32_t, TB_D, TB_W, TB_VEC_BITS, TB_FRAC>(x, rows, y, uint32_t(nq));
  if (!rows.empty()) return 1;
#else
  fanns::opq<int32_t, TB_D, TB_W, TB_VEC_BITS, TB_FRAC>(x, matrix, y, uint32_t(nq));
#endif
  std::vector<int32_t> out;
  std::vector<uint8_t> last;
  while (!y.empty()) {
    const fanns::RotWord<int32_t, TB_W> word = y.read();
    out.insert(out.end(), word.e, word.e + TB_W);
    last.push_back(word.last);
  }
  if (!x.empty() || out.size() != nq * TB_D) {
    std::fprintf(stderr, "streams not drained\n");
    return 1;
  }
  save(argv[3], out);
  save(argv[4], last);
  return 0;
}
