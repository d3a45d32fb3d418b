// C-simulation driver of hls/ivf_dist.h:
//   tb_ivf_dist QUERIES CENTROIDS KEYS LAST FWD NQ ID_BASE
// QUERIES: NQ*TB_D int32, CENTROIDS: TB_NLIST*TB_D int32; KEYS receives NQ*TB_NLIST uint64, LAST
// NQ*TB_NLIST uint8, FWD the NQ*TB_D forwarded query elements (int32). TB_STREAM=1 streams the
// centroids, 0 keeps them in an on-chip array.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "ivf_dist.h"

using Word = fanns::VecWord<int32_t, TB_W>;
constexpr int WORDS = TB_D / TB_W;

static void to_words(const std::vector<int32_t>& flat, size_t vectors, hls::stream<Word>& out) {
  for (size_t w = 0; w < vectors * WORDS; ++w) {
    Word word;
    for (int i = 0; i < TB_W; ++i) word.e[i] = flat[w * TB_W + i];
    out.write(word);
  }
}

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s QUERIES CENTROIDS KEYS LAST FWD NQ ID_BASE\n", argv[0]);
    return 2;
  }
  const uint32_t nq = uint32_t(std::atoi(argv[6]));
  const uint32_t id_base = uint32_t(std::atol(argv[7]));
  const auto queries = load<int32_t>(argv[1], size_t(nq) * TB_D);
  const auto cents = load<int32_t>(argv[2], size_t(TB_NLIST) * TB_D);
  hls::stream<Word> q("q"), q_fwd("q_fwd");
  to_words(queries, nq, q);
  hls::stream<fanns::KeyOut> keys("keys");
#if TB_STREAM
  hls::stream<Word> cstream("centroids");
  for (uint32_t t = 0; t < nq; ++t) to_words(cents, TB_NLIST, cstream);
  fanns::ivf_dist_stream<int32_t, TB_D, TB_W, TB_NLIST, TB_SHIFT, TB_DIST_BITS>(q, q_fwd, cstream, keys, id_base, nq);
  if (!cstream.empty()) return 1;
#else
  std::vector<Word> carray(size_t(TB_NLIST) * WORDS);
  for (size_t w = 0; w < carray.size(); ++w)
    for (int i = 0; i < TB_W; ++i) carray[w].e[i] = cents[w * TB_W + i];
  fanns::ivf_dist<int32_t, TB_D, TB_W, TB_NLIST, TB_SHIFT, TB_DIST_BITS>(q, q_fwd, carray.data(), keys, id_base, nq);
#endif
  std::vector<uint64_t> out(size_t(nq) * TB_NLIST);
  std::vector<uint8_t> last(out.size());
  for (size_t t = 0; t < out.size(); ++t) {
    const fanns::KeyOut k = keys.read();
    out[t] = k.key;
    last[t] = k.last;
  }
  std::vector<int32_t> fwd;
  while (!q_fwd.empty()) {
    const Word word = q_fwd.read();
    fwd.insert(fwd.end(), word.e, word.e + TB_W);
  }
  if (!q.empty() || !keys.empty() || fwd.size() != queries.size()) {
    std::fprintf(stderr, "streams not drained\n");
    return 1;
  }
  save(argv[3], out);
  save(argv[4], last);
  save(argv[5], fwd);
  return 0;
}
