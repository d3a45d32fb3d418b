// The coupled PQDist-SelK recurrence of fanns/model/ivfpq/selk.py (`recurrence`), compiled.
//
// Why: the DSE runs the recurrence for every (PQDist PEs, buffering) option over every sample
// query and every probed cell; at nprobe in the hundreds the numpy version spent minutes per
// workload on array temporaries. Every (config, lane) pair is an independent scalar machine, so
// here each is run on its own over the rounds and cells, with the same float64 operations in the
// same order as the Python specification (tests/model/test_selk_native.py checks the two agree
// bit for bit).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct Inputs {
  int configs, width, nq, cells;
  const double *n, *chan;
  const int64_t* feed_of;
  const double *lead, *timed, *floor_, *held;
  int rounds, lanes;
  const int64_t* order;
  int banks;
  double ksub, depth, keys, chain_fifo;
  int lut_pes;
  double lut_ii, lut_latency, arrival;
  size_t fifo_luts;
  std::vector<double> total, cum;  // per query: its items, and items before each cell
};

constexpr int BLOCK = 8;
// Lanes run together: their machines are independent, so interleaving them hides the latency
// of each one's chain of maxima (and lets the compiler use vector instructions).

// The machines of config `cf` for lanes ln0 .. ln0 + BLOCK - 1 (those below `in.lanes`) over all
// rounds: writes their columns of `out`; false on a bad query index. Arrays are [PE][lane].
bool run_block(const Inputs& in, int cf, int ln0, double* out) {
  const int width = in.width, banks = in.banks, cells = in.cells, nq = in.nq;
  const int live = std::min(BLOCK, in.lanes - ln0);
  using Row = std::array<double, BLOCK>;
  std::vector<Row> ld(width), ss(width), release(width), behind(width);
  std::vector<Row> se(static_cast<size_t>(banks) * width);  // ring of the last `banks` cells' scan ends
  const int lut_pes = std::max(in.lut_pes, 1);
  const int fifo = std::max<int>(static_cast<int>(in.fifo_luts), 1);
  std::vector<Row> built(lut_pes), loaded(static_cast<size_t>(lut_pes) * fifo);  // loaded: a ring per PE
  std::vector<int> held_luts(lut_pes, 0), oldest(lut_pes, 0);  // the same for every lane
  std::vector<double> pos(width), rst(width), due(width), own(width);
  for (int x = 0; x < width; ++x) {
    const double* t = in.timed + (static_cast<size_t>(x) * in.configs + cf) * 4;
    pos[x] = t[0];
    rst[x] = t[1];
    due[x] = t[2];
    own[x] = t[3];
    ld[x].fill(0.0);
  }
  for (Row& r : built) r.fill(in.lut_latency - in.lut_ii);
  Row start{}, fed{}, ss_max{}, items{}, last{};
  std::array<int64_t, BLOCK> q{};
  const double lead = in.lead[cf];
  const double* chan_rows = in.chan + static_cast<size_t>(in.feed_of[cf]) * nq * cells;
  int64_t k = 0;
  int slot = 0, prev_slot = 0, p = 0;  // k % banks, (k - 1) % banks, k % lut_pes
  for (int r = 0; r < in.rounds; ++r) {
    for (int b = 0; b < BLOCK; ++b) {
      q[b] = in.order[static_cast<size_t>(r) * in.lanes + ln0 + std::min(b, live - 1)];  // pads repeat a lane
      if (q[b] < 0 || q[b] >= nq) return false;
    }
    for (int x = 0; x < width; ++x)
      for (int b = 0; b < BLOCK; ++b) release[x][b] = start[b] + rst[x];
    for (int c = 0; c < cells; ++c) {
      Row* row = se.data() + static_cast<size_t>(slot) * width;  // cell k - banks, then cell k
      const Row* prev = se.data() + static_cast<size_t>(prev_slot) * width;  // cell k - 1
      for (int x = 0; x < width; ++x)
        for (int b = 0; b < BLOCK; ++b) ld[x][b] = (k >= banks ? std::max(ld[x][b], row[x][b] + 1.0) : ld[x][b]) + in.ksub;
      if (in.lut_pes) {
        Row& bp = built[p];
        const Row& first = loaded[static_cast<size_t>(p) * fifo + oldest[p]];
        const double arrived = r * in.arrival + in.lut_latency;
        for (int b = 0; b < BLOCK; ++b) {
          bp[b] = std::max(bp[b] + in.lut_ii, arrived);
          if (held_luts[p] == fifo) bp[b] = std::max(bp[b], first[b] + 1.0);
          ld[0][b] = std::max(ld[0][b], bp[b] + 1.0);
        }
      }
      if (width > 1) {  // `chain`
        for (int x = 1; x < width; ++x)
          for (int b = 0; b < BLOCK; ++b) ld[x][b] = std::max(ld[x][b], ld[x - 1][b]);
        for (int x = 0; x < width; ++x)
          for (int b = 0; b < BLOCK; ++b) behind[x][b] = ld[x][b] - in.chain_fifo * pos[x];
        for (int x = width - 2; x >= 0; --x)
          for (int b = 0; b < BLOCK; ++b) behind[x][b] = std::max(behind[x][b], behind[x + 1][b]);
        for (int x = 0; x < width; ++x)
          for (int b = 0; b < BLOCK; ++b) ld[x][b] = std::max(ld[x][b], behind[x][b] + in.chain_fifo * pos[x]);
      }
      if (in.lut_pes) {  // the FIFO of this LUT's PE: drop the oldest when full, keep this one
        if (held_luts[p] == fifo) oldest[p] = oldest[p] + 1 == fifo ? 0 : oldest[p] + 1;
        else ++held_luts[p];
        const int newest = (oldest[p] + held_luts[p] - 1) % fifo;
        loaded[static_cast<size_t>(p) * fifo + newest] = ld[0];
      }
      ss_max.fill(-INFINITY);
      for (int x = 0; x < width; ++x)
        for (int b = 0; b < BLOCK; ++b) {
          ss[x][b] = k == 0 ? ld[x][b] : std::max(ld[x][b], prev[x][b] + 1.0);
          ss_max[b] = std::max(ss_max[b], ss[x][b]);
        }
      for (int b = 0; b < BLOCK; ++b) {
        const size_t at = static_cast<size_t>(q[b]) * cells + c;
        items[b] = in.n[at];
        last[b] = in.cum[at] + items[b] - 1.0;
        fed[b] = std::max(fed[b], ss_max[b] - lead) + chan_rows[at];
      }
      for (int x = 0; x < width; ++x)
        for (int b = 0; b < BLOCK; ++b) {
          const double hold = last[b] >= in.keys ? release[x][b] - in.keys + last[b] : -INFINITY;
          row[x][b] = std::max(std::max(ss[x][b] + items[b] - 1.0, hold), fed[b]);
        }
      ++k;
      prev_slot = slot;
      slot = slot + 1 == banks ? 0 : slot + 1;
      if (in.lut_pes) p = p + 1 == in.lut_pes ? 0 : p + 1;
    }
    const Row* last_cell = se.data() + static_cast<size_t>(prev_slot) * width;
    for (int b = 0; b < BLOCK; ++b) {
      double next = start[b] + in.floor_[cf];
      const double fed_held = in.held[static_cast<size_t>(cf) * nq + q[b]];
      for (int x = 0; x < width; ++x) {
        const double taken = start[b] + own[x] + in.total[q[b]] - 1.0;  // from the stream's own restart
        const double end = std::max(std::max(last_cell[x][b] + in.depth + 1.0, taken), release[x][b] + fed_held - 1.0);
        next = std::max(next, end - due[x]);
      }
      start[b] = next;
    }
    for (int b = 0; b < live; ++b) out[(static_cast<size_t>(r) * in.configs + cf) * in.lanes + ln0 + b] = start[b];
  }
  return true;
}

}  // namespace

extern "C" {

// Shapes (row-major): n [nq, cells] items per probed cell; chan [feeds, nq, cells] the busiest
// channel's cycles per cell, config c's at row feed_of[c]; lead [configs]; timed [width, configs, 4] (chain position, group
// restart, due, own restart) per timed PE; floor [configs]; held [configs, nq]; order [rounds, lanes] query indices;
// lut [5] = (pes, ii, latency, fifo_luts, arrival), pes = 0 without a LUT source;
// out [rounds, configs, lanes] the level-2 start of every round's query. The (config, lane)
// machines are shared out over `threads` threads, BLOCK lanes of a config at a time. Returns 0, or 1 (bad shape), 2 (bad index).
int fanns_selk_recurrence(int configs, int width, int nq, int cells, const double* n, const double* chan,
                          const int64_t* feed_of, const double* lead, const double* timed, const double* floor_, const double* held,
                          int rounds, int lanes, const int64_t* order, int banks, double ksub, double depth,
                          double keys, double chain_fifo, const double* lut, int threads, double* out) {
  if (configs < 1 || width < 1 || nq < 1 || cells < 1 || banks < 1 || rounds < 1 || lanes < 1) return 1;
  Inputs in{configs, width, nq, cells, n, chan, feed_of, lead, timed, floor_, held, rounds, lanes, order, banks, ksub, depth,
            keys, chain_fifo, static_cast<int>(lut[0]), lut[1], lut[2], lut[4], static_cast<size_t>(lut[3]),
            std::vector<double>(nq), std::vector<double>(static_cast<size_t>(nq) * cells)};
  for (int q = 0; q < nq; ++q) {
    double s = 0.0;
    for (int c = 0; c < cells; ++c) {
      in.cum[static_cast<size_t>(q) * cells + c] = s;
      s += n[static_cast<size_t>(q) * cells + c];
    }
    in.total[q] = s;  // numpy's row sum of small integers: exact, so the order does not matter
  }
  const int64_t blocks = (lanes + BLOCK - 1) / BLOCK, machines = static_cast<int64_t>(configs) * blocks;
  std::atomic<bool> bad{false};
  auto work = [&](int t, int of) {
    for (int64_t i = machines * t / of; i < machines * (t + 1) / of && !bad; ++i)
      if (!run_block(in, static_cast<int>(i / blocks), static_cast<int>(i % blocks) * BLOCK, out)) bad = true;
  };
  const int pool = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, machines)));
  std::vector<std::thread> helpers;
  for (int t = 1; t < pool; ++t) helpers.emplace_back(work, t, pool);
  work(0, pool);
  for (std::thread& h : helpers) h.join();
  return bad ? 2 : 0;
}
}
