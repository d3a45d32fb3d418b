// C-simulation driver of hls/systolic_queue.h: tb_systolic_queue OPS.bin KEYS.bin OUT.bin N NOUT
// OPS holds N uint8 commands, KEYS their N uint64 keys; OUT receives NOUT (key, last) pairs as
// 2*NOUT uint64 values. Fails if the queue emits a different number of outputs.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tb_io.h"

#include "systolic_queue.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s OPS KEYS OUT N NOUT\n", argv[0]);
    return 2;
  }
  const uint32_t n = uint32_t(std::atoi(argv[4]));
  const size_t nout = size_t(std::atoi(argv[5]));
  const auto ops = load<uint8_t>(argv[1], n);
  const auto keys = load<uint64_t>(argv[2], n);
  hls::stream<fanns::QueueCmd> cmd("cmd");
  hls::stream<fanns::KeyItem> out("out");
  for (uint32_t i = 0; i < n; ++i) cmd.write(fanns::QueueCmd{keys[i], ops[i]});
  fanns::systolic_queue<TB_S, TB_KEY_BITS>(cmd, out, n);
  if (out.size() != nout) {
    std::fprintf(stderr, "%zu outputs, expected %zu\n", out.size(), nout);
    return 1;
  }
  std::vector<uint64_t> result;
  while (!out.empty()) {
    const fanns::KeyItem item = out.read();
    result.push_back(item.key);
    result.push_back(item.last ? 1 : 0);
  }
  save(argv[3], result);
  return 0;
}
