// A two-process dataflow region for the tests of fanns_hls.h's C-simulation modes:
// dataflow_check DEPTH N EXTRA. The producer writes N items to `a`, then one to `b`, then EXTRA
// more to `a`; the consumer reads `b` first, then N items of `a`. With threads, `a` of depth < N
// deadlocks, and EXTRA > 0 leaves data in `a`. Prints the sum, or the error.
#include <cstdio>
#include <cstdlib>

#include "fanns_hls.h"

static void producer(hls::stream<int>& a, hls::stream<int>& b, int n, int extra) {
  for (int i = 0; i < n; ++i) a.write(i);
  b.write(-1);
  for (int i = 0; i < extra; ++i) a.write(0);
}

static void consumer(hls::stream<int>& a, hls::stream<int>& b, int n, long* sum) {
  b.read();
  long s = 0;
  for (int i = 0; i < n; ++i) s += a.read();
  *sum = s;
}

static long region(int depth, int n, int extra) {
  long sum = 0;
  FANNS_DATAFLOW_BEGIN
  hls::stream<int> a;
  FANNS_STREAM_DEPTH(a, depth)
  hls::stream<int> b;
  FANNS_STREAM_DEPTH(b, 2)
  FANNS_PROCESS(producer(a, b, n, extra));
  FANNS_PROCESS(consumer(a, b, n, &sum));
  FANNS_DATAFLOW_END
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  try {
    const long sum = region(std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]));
#ifdef FANNS_CSIM_THREADS
    const std::string left = fanns::csim::take_leftover();
    if (!left.empty()) {
      std::printf("leftover:%s\n", left.c_str());
      return 1;
    }
#endif
    std::printf("sum %ld\n", sum);
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
