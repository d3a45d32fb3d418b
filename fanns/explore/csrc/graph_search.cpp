// Compiled face of the graph traversal reference (fanns/explore/traversal.py) and of the Falcon
// cycle-level model (fanns/arch/falcon_model.py), for sweeping many queries and configurations.
// Both Python modules are the specification; tests check this file against them query by query
// (ids, distances, hops, visited, Bloom false positives, modelled cycles).
//
// Built by fanns.explore.fast with the project's g++ flags; the Bloom hash is hls/bloom.h's.
#include <algorithm>
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

// Timing parameters of one QPP (derived in Python from QppConfig), then R+1 list-fetch beats.
enum TimingField { kUnits, kLat, kWindow, kVBeats, kCII, kCLat, kQLoad, kBLat, kBGap, kSort, kInsII, kPop, kSync, kK, kFields };

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

// The recurrences of fanns/arch/falcon_model.py::simulate, statement for statement.
void simulate(const Trace& tr, const int64_t* p, const int64_t* list_beats, int64_t* latency, int64_t* occupancy) {
  const int64_t units = p[kUnits], lat = p[kLat], window = p[kWindow], vbeats = p[kVBeats];
  const int64_t c_ii = p[kCII], c_lat = p[kCLat], qload = p[kQLoad], b_lat = p[kBLat];
  const size_t G = tr.group_parent.size();
  std::vector<int64_t> launch(G, 0), sync_done(G, 0);
  std::vector<std::vector<size_t>> children(G);
  for (size_t g = 1; g < G; ++g) children[size_t(tr.group_parent[g])].push_back(g);
  int64_t list_issue_prev = kNever, list_beats_prev = 0;
  std::vector<int64_t> list_done_hist, disp_hist, list_done(tr.cand_node.size(), 0);
  std::vector<int64_t> bloom_prev(units, kNever), vf_issue_prev(units, kNever), comp_prev(units, kNever);
  std::vector<std::vector<int64_t>> vf_done_hist(units);
  int64_t ins_free = 0, last_bloom_in = 0;
  size_t kept_pos = 0;
  std::vector<std::pair<int64_t, int64_t>> arrivals;
  for (size_t g = 0; g < G; ++g) {
    const int64_t t_g = launch[g];
    int64_t group_done = t_g;
    for (int64_t c = tr.group_cands[g]; c < tr.group_cands[g + 1]; ++c) {
      const int64_t beats = list_beats[tr.cand_degree[c]];
      int64_t issue = std::max(t_g, list_issue_prev + list_beats_prev);
      if (int64_t(list_done_hist.size()) >= window) issue = std::max(issue, list_done_hist[list_done_hist.size() - window]);
      const int64_t done = issue + lat + beats;
      list_issue_prev = issue;
      list_beats_prev = beats;
      list_done_hist.push_back(done);
      list_done[c] = done;
      group_done = std::max(group_done, done);
    }
    arrivals.clear();
    for (int64_t i = tr.group_checks[g]; i < tr.group_checks[g + 1]; ++i) {
      const int64_t owner = tr.check_cand[i];
      const int64_t ready = owner < 0 ? t_g : list_done[owner];
      const int64_t disp = int64_t(disp_hist.size()) < units ? ready : std::max(ready, disp_hist[disp_hist.size() - units] + 1);
      disp_hist.push_back(disp);
      const int64_t u = int64_t(tr.check_node[i]) % units;
      const int64_t b_in = std::max(disp + 1, bloom_prev[u] + 1);
      bloom_prev[u] = b_in;
      last_bloom_in = std::max(last_bloom_in, b_in);
      const int64_t b_out = b_in + b_lat;
      group_done = std::max(group_done, b_out);
      if (!tr.check_new[i]) continue;
      int64_t issue = std::max(b_out, vf_issue_prev[u] + vbeats);
      std::vector<int64_t>& hist = vf_done_hist[u];
      if (int64_t(hist.size()) >= window) issue = std::max(issue, hist[hist.size() - window]);
      vf_issue_prev[u] = issue;
      const int64_t arrived = issue + lat + vbeats;
      hist.push_back(arrived);
      const int64_t start = std::max(std::max(arrived, comp_prev[u] + c_ii), qload);
      comp_prev[u] = start;
      arrivals.emplace_back(start + c_lat, int64_t(arrivals.size()));
    }
    const size_t kept0 = kept_pos;
    kept_pos += arrivals.size();
    const int64_t gate = g ? sync_done[g - 1] : 0;
    ins_free = std::max(ins_free, gate);
    int64_t last_kept = kNever;
    std::sort(arrivals.begin(), arrivals.end());
    for (const auto& a : arrivals) {
      const bool kept = tr.new_kept[kept0 + size_t(a.second)] != 0;
      const int64_t start = std::max(a.first, ins_free);
      ins_free = start + (kept ? p[kInsII] : 1);
      if (kept) last_kept = ins_free;
    }
    group_done = std::max(std::max(group_done, ins_free), gate);
    const int64_t ready = last_kept == kNever ? group_done : std::max(group_done, last_kept + p[kSort]);
    int64_t t = ready + p[kSync];
    for (size_t child : children[g]) {
      t += p[kPop] * (tr.group_cands[child + 1] - tr.group_cands[child]);
      launch[child] = t;
    }
    sync_done[g] = t;
  }
  *latency = sync_done[G - 1] + p[kK];
  *occupancy = std::max(*latency, last_bloom_in + p[kBGap]);
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
  const size_t stride = size_t(kFields) + size_t(max_degree) + 1;
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
        simulate(s.trace, p, p + kFields, o, o + 1);
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
