// Compiled face of the graph traversal reference (fanns/index/graph_traversal.py) and of the Falcon
// cycle-level model (fanns/model/graph/qpp.py), for sweeping many queries and configurations.
// Both Python modules are the specification; tests check this file against them query by query
// (ids, distances, hops, visited, Bloom false positives, modelled cycles).
//
// Built by fanns.model.graph.fast with the project's g++ flags; the Bloom hash is hls/bloom.h's.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "bloom.h"

namespace {

constexpr uint64_t kInfKey = ~uint64_t(0);
constexpr int64_t kNever = -1000000000LL;

struct Graph {
  int32_t n, max_degree, d, entry, narrow;
  const int32_t* nbrs;
  const int32_t* degree;
  const int16_t* vecs;
};

struct Config {
  int32_t l, k, mg, mc, cand_cap;
  int32_t bloom_h, bloom_bank_bits, bfc_units;
  uint32_t bloom_seed;
};

// Timing parameters of one QPP, in the order of QppConfig.timing().
enum TimingField {
  kUnits, kLat, kWindow, kLanes, kRowBeats, kRowTime, kVBeats, kVTime, kWords, kCLat, kBLat, kBClear, kCand, kLMax, kL, kK,
  kFields
};
constexpr int64_t kReaderCycles = 4;  // falcon_model.READER_CYCLES
constexpr int64_t kRateScale = 64;  // falcon_model.RATE_SCALE: channel time in 1/64 cycle

struct Trace {
  std::vector<int64_t> group_parent, group_cands, group_checks;
  std::vector<int32_t> cand_node, cand_degree;
  std::vector<int32_t> check_node, check_cand;
  std::vector<uint8_t> check_new, new_kept;
  void clear() {
    group_parent.clear();
    group_cands.assign(1, 0);
    group_checks.assign(1, 0);
    cand_node.clear();
    cand_degree.clear();
    check_node.clear();
    check_cand.clear();
    check_new.clear();
    new_kept.clear();
  }
};

struct Searcher {
  const Graph& g;
  const Config& cfg;
  std::vector<uint32_t> stamp;
  uint32_t epoch = 0;
  std::vector<std::vector<uint64_t>> bloom;  // per BFC unit: bloom_h banks of bank_bits/64 words
  int64_t fp = 0, hops = 0, checks = 0, visited = 0;
  Trace trace;
  std::vector<uint64_t> ids_buf;
  std::vector<uint64_t> C, R, tmp;

  Searcher(const Graph& graph, const Config& config) : g(graph), cfg(config), stamp(graph.n, 0) {
    if (cfg.bloom_h > 0) bloom.assign(cfg.bfc_units, std::vector<uint64_t>(size_t(cfg.bloom_h) * bank_words(), 0));
  }

  size_t bank_words() const { return size_t(cfg.bloom_bank_bits + 63) / 64; }

  // Exact squared L2. `narrow` (set when d * max|diff|^2 < 2^31, e.g. 8-bit data) lets the
  // compiler vectorise the loop in 32-bit lanes; the sum is the same integer either way.
  int64_t l2(const int16_t* q, int32_t node) const {
    const int16_t* x = g.vecs + size_t(node) * g.d;
    if (g.narrow) {
      int32_t s = 0;
      for (int j = 0; j < g.d; ++j) {
        const int32_t diff = int32_t(x[j]) - int32_t(q[j]);
        s += diff * diff;
      }
      return s;
    }
    int64_t s = 0;
    for (int j = 0; j < g.d; ++j) {
      const int64_t diff = int64_t(x[j]) - int64_t(q[j]);
      s += diff * diff;
    }
    return s;
  }

  // Test-and-set one id; returns true when the id is reported not visited.
  bool check(uint32_t id) {
    const bool truly_new = stamp[id] != epoch;
    stamp[id] = epoch;
    if (cfg.bloom_h == 0) return truly_new;
    std::vector<uint64_t>& words = bloom[id % uint32_t(cfg.bfc_units)];
    bool reported = true;
    for (int u = 0; u < cfg.bloom_h; ++u) {
      const uint32_t idx = fanns::murmur2_u32(id, cfg.bloom_seed + uint32_t(u) * 0x9E3779B9u) & uint32_t(cfg.bloom_bank_bits - 1);
      uint64_t& w = words[u * bank_words() + idx / 64];
      const uint64_t mask = uint64_t(1) << (idx % 64);
      reported = reported && (w & mask);
      w |= mask;
    }
    if (reported && truly_new) ++fp;
    return !reported;
  }

  // Evaluate a group; returns its new keys (in check order) in `out`.
  void evaluate(const int16_t* q, const std::vector<int32_t>& cands, int64_t parent, bool entry_check, std::vector<uint64_t>& out) {
    out.clear();
    trace.group_parent.push_back(parent);
    const int64_t cand_base = int64_t(trace.cand_node.size());
    auto visit = [&](int32_t id, int32_t owner) {
      const bool fresh = check(uint32_t(id));
      trace.check_node.push_back(id);
      trace.check_cand.push_back(owner);
      trace.check_new.push_back(fresh ? 1 : 0);
      ++checks;
      if (fresh) {
        ++visited;
        out.push_back((uint64_t(l2(q, id)) << 32) | uint64_t(uint32_t(id)));
      }
    };
    if (entry_check) visit(g.entry, -1);
    for (size_t c = 0; c < cands.size(); ++c) {
      const int32_t node = cands[c];
      const int32_t deg = g.degree[node];
      trace.cand_node.push_back(node);
      trace.cand_degree.push_back(deg);
      const int32_t* list = g.nbrs + size_t(node) * g.max_degree;
      for (int32_t j = 0; j < deg; ++j) visit(list[j], int32_t(cand_base + int64_t(c)));
    }
    hops += int64_t(cands.size());
    trace.group_cands.push_back(int64_t(trace.cand_node.size()));
    trace.group_checks.push_back(int64_t(trace.check_node.size()));
  }

  void merge_bounded(std::vector<uint64_t>& queue, const std::vector<uint64_t>& sorted_new, size_t cap) {
    tmp.resize(queue.size() + sorted_new.size());
    std::merge(queue.begin(), queue.end(), sorted_new.begin(), sorted_new.end(), tmp.begin());
    if (tmp.size() > cap) tmp.resize(cap);
    queue.swap(tmp);
  }

  void search(const int16_t* q, int64_t* out_ids, int64_t* out_dists) {
    if (++epoch == 0) {
      std::fill(stamp.begin(), stamp.end(), 0);
      epoch = 1;
    }
    for (auto& b : bloom) std::fill(b.begin(), b.end(), 0);
    fp = hops = checks = visited = 0;
    trace.clear();
    std::vector<std::vector<uint64_t>> pending;  // FIFO of in-flight groups' keys
    size_t head = 0;
    std::vector<uint64_t> keys;
    std::vector<int32_t> cands{g.entry};
    evaluate(q, cands, -1, true, keys);
    R.assign(1, keys[0]);
    C.clear();
    pending.emplace_back(keys.begin() + 1, keys.end());
    int64_t completed = 0;
    std::vector<uint64_t> kept;
    while (head < pending.size()) {
      std::vector<uint64_t> fresh = std::move(pending[head++]);
      const uint64_t threshold = int32_t(R.size()) == cfg.l ? R.back() : kInfKey;
      if (completed == 0) trace.new_kept.push_back(1);  // the entry's own key, inserted into R
      kept.clear();
      for (uint64_t key : fresh) {
        trace.new_kept.push_back(key <= threshold ? 1 : 0);
        if (key <= threshold) kept.push_back(key);
      }
      std::sort(kept.begin(), kept.end());
      merge_bounded(C, kept, size_t(cfg.cand_cap));
      merge_bounded(R, kept, size_t(cfg.l));
      while (int32_t(pending.size() - head) < cfg.mg) {
        const uint64_t thr = int32_t(R.size()) == cfg.l ? R.back() : kInfKey;
        size_t take = 0;
        while (take < C.size() && int32_t(take) < cfg.mc && C[take] <= thr) ++take;
        if (take == 0) break;
        cands.clear();
        for (size_t i = 0; i < take; ++i) cands.push_back(int32_t(C[i] & 0xFFFFFFFFu));
        C.erase(C.begin(), C.begin() + take);
        evaluate(q, cands, completed, false, keys);
        pending.emplace_back(keys);
      }
      ++completed;
    }
    for (int32_t i = 0; i < cfg.k; ++i) {
      const bool have = size_t(i) < R.size();
      out_ids[i] = have ? int64_t(R[i] & 0xFFFFFFFFu) : -1;
      out_dists[i] = have ? int64_t(R[i] >> 32) : -1;
    }
  }
};

// An axi_reader and its memory port (falcon_model._Reader): beat leave times of one command after another.
// `time` is the read's channel time in 1/kRateScale cycles (falcon_model.RATE_SCALE).
struct Reader {
  int64_t latency, window, load = kNever, r_last = kNever, busy = kNever;
  std::vector<int64_t> lasts;
  Reader(int64_t lat, int64_t win) : latency(lat), window(win) {}
  void read(int64_t cmd, int64_t beats, int64_t time, std::vector<int64_t>& out) {
    int64_t ld = std::max(cmd + 1, load + 1);
    if (int64_t(lasts.size()) >= window) ld = std::max(ld, lasts[lasts.size() - size_t(window)] + 1);
    const int64_t first = std::max(ld + 1 + latency, r_last + 1);
    const int64_t start = std::max(first * kRateScale, busy);
    out.resize(size_t(beats));
    for (int64_t j = 0; j < beats; ++j) out[size_t(j)] = (start + ((j + 1) * time) / beats) / kRateScale - 1;
    busy = start + time;
    load = ld;
    r_last = out.back();
    lasts.push_back(r_last);
    for (auto& t : out) t += kReaderCycles - 2;
  }
};

// One BFC unit's pipeline state (falcon_model._Unit).
struct Unit {
  const int64_t* p;
  Reader reader;
  int64_t front = kNever, merge = kNever, pair = kNever, coll_free = kNever, last_word = kNever, q_loaded;
  std::vector<int64_t> beats;
  Unit(const int64_t* params, int64_t loaded) : p(params), reader(params[kLat], params[kWindow]), q_loaded(loaded) {}
  int64_t distance(int64_t hand) {
    const int64_t first = std::max(std::max(hand + 1, last_word + 1), q_loaded);
    last_word = first + p[kWords] - 1;
    return first + p[kCLat] - 1;
  }
  // kind: 0 check (visited), 1 new, 2 group end; returns the cycle the item reaches the inserter.
  int64_t token(int64_t dispatched, int kind) {
    const int64_t f = std::max(dispatched + 1, front + 1);
    front = f;
    if (kind == 2) {
      merge = std::max(f + 1, merge + 1);
      pair = std::max(merge + 1, pair + 1);
      return pair + 1;
    }
    merge = std::max(f + p[kBLat] - 1, merge + 1);
    if (kind == 0) return kNever;
    reader.read(merge, p[kVBeats], p[kVTime], beats);
    int64_t acc = std::max(beats[0], coll_free);
    for (size_t j = 1; j < beats.size(); ++j) acc = std::max(beats[j], acc + 1);
    const int64_t hand = std::max(acc + 1, last_word);
    coll_free = hand;
    pair = std::max(distance(hand), pair + 1);
    return pair + 1;
  }
  int64_t query_end(int64_t dispatched) {
    const int64_t f = std::max(dispatched + 1, front + 1);
    merge = std::max(f + p[kBLat] - 1, merge + 1);
    const int64_t hand = std::max(merge + 1, last_word);
    pair = std::max(distance(hand), pair + 1);
    return std::max(f + p[kBLat] - 1 + p[kBClear], pair + 1);
  }
};

struct Item {
  int64_t arrive;
  bool kept, entry;
};

// fanns/model/graph/qpp.py::simulate, statement for statement.
void simulate(const Trace& tr, const int64_t* p, int32_t mg, int32_t mc, int64_t* latency, int64_t* occupancy) {
  const int64_t units = p[kUnits], lanes = p[kLanes], lat = p[kLat], row_beats = p[kRowBeats];
  const size_t G = tr.group_parent.size();
  const int64_t q_last = lat + kReaderCycles + (p[kVBeats] - 1);
  const int64_t q_loaded = q_last + 3 + p[kWords];
  std::vector<Unit> uu;
  for (int64_t u = 0; u < units; ++u) uu.emplace_back(p, q_loaded);
  Reader lister(lat, p[kWindow]);
  const int64_t pre = p[kLMax] - p[kL];
  int64_t last_r = pre ? 4 + 2 * (pre - 1) : kNever, last_c = kNever;
  int64_t ins_start = pre ? 2 * pre + 5 : 6;
  std::vector<std::vector<size_t>> children(G);
  for (size_t g = 1; g < G; ++g) children[size_t(tr.group_parent[g])].push_back(g);
  std::vector<std::vector<int64_t>> push_cands(G);
  std::vector<int64_t> push_end(G, 0);
  push_cands[0] = {1, 2};
  push_end[0] = 3;
  int64_t intake = kNever, d_free = kNever, finish = 0, in_flight = 1;
  size_t kept_pos = 0;
  std::vector<std::vector<int64_t>> rows;
  std::vector<int64_t> takes;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> per_unit(static_cast<size_t>(units));
  std::vector<std::vector<Item>> items(static_cast<size_t>(units));
  std::vector<int64_t> rank(static_cast<size_t>(units)), heads(static_cast<size_t>(units)), visible(static_cast<size_t>(units)), new_index;
  std::vector<uint8_t> ended(static_cast<size_t>(units));
  for (size_t g = 0; g < G; ++g) {
    const std::vector<int64_t>& cand_push = push_cands[g];
    const int64_t c0 = tr.group_cands[g], c1 = tr.group_cands[g + 1];
    const bool entry = g == 0;
    rows.clear();
    takes.clear();
    for (size_t i = 0; i < cand_push.size(); ++i) {
      intake = std::max(cand_push[i] + 1, intake + 1);
      takes.push_back(intake);
      if (!(entry && i == 0)) {
        rows.emplace_back();
        lister.read(intake, row_beats, p[kRowTime], rows.back());
      }
    }
    intake = std::max(push_end[g] + 1, intake + 1);
    const int64_t ge_take = intake;
    for (auto& v : per_unit) v.clear();
    const int64_t k0 = tr.group_checks[g], k1 = tr.group_checks[g + 1];
    int64_t k = k0;
    if (entry) {
      const int64_t s = std::max(takes[0] + 1, d_free);
      per_unit[size_t(tr.check_node[size_t(k)] % units)].emplace_back(s, k);
      d_free = s + 1;
      ++k;
    }
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t deg = tr.cand_degree[size_t(c)];
      const std::vector<int64_t>& beats = rows[size_t(c - c0)];
      for (int64_t j = 0; j < row_beats; ++j) {
        const int64_t s = std::max(beats[size_t(j)], d_free);
        const int64_t lo = std::max<int64_t>(0, j * lanes - 1), hi = std::min(deg, (j + 1) * lanes - 1);
        std::fill(rank.begin(), rank.end(), 0);
        for (int64_t pos = lo; pos < hi; ++pos) {
          const size_t u = size_t(tr.check_node[size_t(k + pos)] % units);
          per_unit[u].emplace_back(s + rank[u], k + pos);
          ++rank[u];
        }
        d_free = s + std::max<int64_t>(1, *std::max_element(rank.begin(), rank.end()));
      }
      k += deg;
    }
    const int64_t s_end = std::max(ge_take + 1, d_free);
    d_free = s_end + 1;
    new_index.assign(size_t(k1 - k0), 0);
    int64_t n_new = 0;
    for (int64_t i = k0; i < k1; ++i) {
      new_index[size_t(i - k0)] = n_new;
      n_new += tr.check_new[size_t(i)] ? 1 : 0;
    }
    for (int64_t u = 0; u < units; ++u) {
      std::vector<Item>& seq = items[size_t(u)];
      seq.clear();
      for (const auto& [t, i] : per_unit[size_t(u)]) {
        if (tr.check_new[size_t(i)]) {
          const int64_t arrive = uu[size_t(u)].token(t, 1);
          seq.push_back({arrive, tr.new_kept[kept_pos + size_t(new_index[size_t(i - k0)])] != 0, entry && i == k0});
        } else {
          uu[size_t(u)].token(t, 0);
        }
      }
      seq.push_back({uu[size_t(u)].token(s_end, 2), false, false});
    }
    kept_pos += size_t(n_new);
    // Inserter.
    int64_t t = ins_start;
    std::fill(heads.begin(), heads.end(), 0);
    std::fill(ended.begin(), ended.end(), 0);
    std::fill(visible.begin(), visible.end(), ins_start);
    while (true) {
      bool all = true;
      for (int64_t u = 0; u < units; ++u) {
        const std::vector<Item>& seq = items[size_t(u)];
        if (!ended[size_t(u)] && heads[size_t(u)] == int64_t(seq.size()) - 1 && std::max(seq.back().arrive, visible[size_t(u)]) <= t)
          ended[size_t(u)] = 1;
        all = all && ended[size_t(u)];
      }
      if (all) break;
      int64_t pick = -1;
      for (int64_t u = 0; u < units && pick < 0; ++u) {
        const std::vector<Item>& seq = items[size_t(u)];
        if (!ended[size_t(u)] && heads[size_t(u)] < int64_t(seq.size()) - 1
            && std::max(seq[size_t(heads[size_t(u)])].arrive, visible[size_t(u)]) <= t)
          pick = u;
      }
      if (pick >= 0) {
        const Item& it = items[size_t(pick)][size_t(heads[size_t(pick)])];
        if (it.entry || it.kept) {
          if (t >= last_r + 2 && (it.entry || t >= last_c + 2)) {
            last_r = t;
            if (!it.entry) last_c = t;
            ++heads[size_t(pick)];
            visible[size_t(pick)] = t + 1;
          }
        } else {
          ++heads[size_t(pick)];
          visible[size_t(pick)] = t + 1;
        }
      }
      int64_t nxt = t + 1;
      if (pick < 0) {
        int64_t soonest = INT64_MAX;
        for (int64_t u = 0; u < units; ++u)
          if (!ended[size_t(u)])
            soonest = std::min(soonest, std::max(items[size_t(u)][size_t(heads[size_t(u)])].arrive, visible[size_t(u)]));
        if (soonest != INT64_MAX) nxt = std::max(nxt, soonest);
      }
      t = nxt;
    }
    const int64_t e = t;
    --in_flight;
    // Sync and refill.
    int64_t r = e + 2 + (last_r == e ? 1 : 0);
    const std::vector<size_t>& kids = children[g];
    for (size_t child : kids) {
      const int64_t n = tr.group_cands[child + 1] - tr.group_cands[child];
      const int64_t a0 = std::max(r + 1, last_c + p[kCand]);
      push_cands[child].clear();
      for (int64_t i = 0; i < n; ++i) push_cands[child].push_back(a0 + 1 + i);
      push_end[child] = a0 + mc + 1;
      ++in_flight;
      r = a0 + mc + 2;
    }
    int64_t sync_end;
    if (kids.empty() || (tr.group_cands[kids.back() + 1] - tr.group_cands[kids.back()] == mc && in_flight < mg)) {
      const int64_t a0 = std::max(r + 1, last_c + p[kCand]);
      sync_end = a0 + mc + 1;
    } else {
      sync_end = r + 1;
    }
    if (in_flight == 0) finish = sync_end + 1;
    ins_start = sync_end + 2;
  }
  const int64_t flush = std::max(finish, last_r + p[kLMax]);
  *latency = flush + pre + p[kK];
  const int64_t done = flush + p[kLMax];
  intake = std::max(finish + 1, intake + 1);
  const int64_t s = std::max(intake + 1, d_free);
  int64_t ready = done + 2;
  for (auto& u : uu) ready = std::max(ready, u.query_end(s));
  *occupancy = ready;
}

}  // namespace

extern "C" int fanns_graph_search(int32_t n, int32_t max_degree, int32_t d, int32_t entry, int32_t narrow, const int32_t* nbrs,
                                  const int32_t* degree, const int16_t* vecs, int32_t nq, const int16_t* queries,
                                  const int32_t* config, uint32_t bloom_seed, int32_t ntiming, const int64_t* timing,
                                  int32_t threads, int64_t* out_ids, int64_t* out_dists, int64_t* out_stats,
                                  int64_t* out_timing) {
  const Graph g{n, max_degree, d, entry, narrow, nbrs, degree, vecs};
  const Config cfg{config[0], config[1], config[2], config[3], config[4], config[5], config[6], config[7], bloom_seed};
  if (cfg.bloom_h > 0 && (cfg.bloom_bank_bits < 1 || (cfg.bloom_bank_bits & (cfg.bloom_bank_bits - 1)))) return 1;
  const size_t stride = size_t(kFields);
  auto work = [&](int32_t first, int32_t step) {
    Searcher s(g, cfg);
    for (int32_t qi = first; qi < nq; qi += step) {
      s.search(queries + size_t(qi) * d, out_ids + size_t(qi) * cfg.k, out_dists + size_t(qi) * cfg.k);
      int64_t* st = out_stats + size_t(qi) * 5;
      st[0] = s.hops;
      st[1] = s.visited;
      st[2] = s.checks;
      st[3] = s.fp;
      st[4] = int64_t(s.trace.group_parent.size());
      for (int32_t t = 0; t < ntiming; ++t) {
        const int64_t* p = timing + size_t(t) * stride;
        int64_t* o = out_timing + (size_t(qi) * ntiming + t) * 2;
        simulate(s.trace, p, cfg.mg, cfg.mc, o, o + 1);
      }
    }
  };
  threads = std::max(1, std::min(threads, nq));
  std::vector<std::thread> pool;
  for (int32_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (auto& th : pool) th.join();
  return 0;
}
