// The processes of the IVF-PQ accelerator that are not PEs of the library: memory readers and
// writers, width adapters, the probe dispatcher of BuildLUT, the LUT collector, the per-PE code
// unpackers and the probe fan-out (docs/ivfpq_architecture.md). A generated kernel
// (templates/hls/kernel.cpp.j2) instantiates them, with the PEs, inside one dataflow region.
//
// Memory is seen as arrays of port-wide beats (`Beat<BYTES>`); every layout here is the one
// written by fanns/images/ivfpq.py (the one packer shared with the RTL accelerator). Every
// process handles all `nq` queries of one kernel call, so the same source runs as a dataflow
// region under Vitis and as sequential calls in C simulation.
#ifndef FANNS_IVFPQ_KERNEL_H
#define FANNS_IVFPQ_KERNEL_H

#include "build_lut.h"
#include "fanns_arith.h"
#include "fanns_hls.h"
#include "opq.h"
#include "pq_decode.h"
#include "systolic_pq.h"

namespace fanns {

// One memory beat: BYTES bytes, little endian (byte i is bits 8i..8i+7 of w[i / 8]).
template <int BYTES>
struct Beat {
  uint64_t w[BYTES / 8];
};

template <int BYTES>
inline uint8_t beat_byte(const Beat<BYTES>& b, int i) {
  return uint8_t(b.w[i / 8] >> (8 * (i % 8)));
}

template <int BYTES>
inline uint32_t beat_u32(const Beat<BYTES>& b, int i) {
  return uint32_t(b.w[i / 2] >> (32 * (i % 2)));
}

// Signed vector element i of a beat, stored in EB bytes (2: int16, 4: int32).
template <typename T, int EB, int BYTES>
inline T beat_elem(const Beat<BYTES>& b, int i) {
  static_assert(EB == 2 || EB == 4, "elements are int16 or int32");
  constexpr int PER = 8 / EB;
  const uint64_t raw = b.w[i / PER] >> (8 * EB * (i % PER));
  return EB == 2 ? T(int16_t(uint16_t(raw))) : T(int32_t(uint32_t(raw)));
}

// Element i of an array of EB-byte elements stored contiguously in beats (the ROM images).
template <typename T, int EB, int BYTES>
inline T elem_at(const Beat<BYTES>* mem, uint32_t i) {
  return beat_elem<T, EB, BYTES>(mem[i / (BYTES / EB)], int(i % (BYTES / EB)));
}

// -- host I/O -------------------------------------------------------------------------------------
// Reads each query (D elements, padded to whole beats) and emits it as D/W words of W lanes.
template <typename T, int EB, int D, int W, int BYTES>
void read_queries(const Beat<BYTES>* mem, hls::stream<VecWord<T, W>>& out, uint32_t nq) {
  constexpr int PER_BEAT = BYTES / EB;
  constexpr int QBEATS = (D + PER_BEAT - 1) / PER_BEAT;
  for (uint32_t t = 0; t < nq; ++t) {
    T q[D];
    for (int b = 0; b < QBEATS; ++b) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const Beat<BYTES> beat = mem[t * QBEATS + b];
      for (int i = 0; i < PER_BEAT; ++i) {
        FANNS_PRAGMA(HLS UNROLL)
        if (b * PER_BEAT + i < D) q[b * PER_BEAT + i] = beat_elem<T, EB, BYTES>(beat, i);
      }
    }
    for (int k = 0; k < D / W; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      VecWord<T, W> word;
      for (int i = 0; i < W; ++i) word.e[i] = q[k * W + i];
      out.write(word);
    }
  }
}

// Writes the S result keys of each query (ascending) as whole beats.
template <int S, int BYTES>
void write_results(hls::stream<KeyItem>& in, Beat<BYTES>* mem, uint32_t nq) {
  constexpr int PER_BEAT = BYTES / 8;
  constexpr int RBEATS = (S + PER_BEAT - 1) / PER_BEAT;
  for (uint32_t t = 0; t < nq; ++t) {
    for (int b = 0; b < RBEATS; ++b) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      Beat<BYTES> beat;
      for (int i = 0; i < PER_BEAT; ++i) {
        beat.w[i] = b * PER_BEAT + i < S ? in.read().key : 0;
      }
      mem[t * RBEATS + b] = beat;
    }
  }
}

// The S results of each query (ascending). mode 0: SelK's, passed on. mode 1 (step-wise,
// docs/stepwise.md): merged with the host's S seed keys (ascending, the result layout: the keys
// an earlier step returned), the S smallest of both, ascending. Keys are unique (the host scans
// a cell once), so this is the top-S over every cell the query scanned so far.
template <int S, int BYTES>
void merge_seeds(hls::stream<KeyItem>& in, const Beat<BYTES>* seeds, hls::stream<KeyItem>& out, uint32_t nq, uint32_t mode) {
  constexpr int PER_BEAT = BYTES / 8;
  constexpr int RBEATS = (S + PER_BEAT - 1) / PER_BEAT;
  for (uint32_t t = 0; t < nq; ++t) {
    uint64_t a[S], b[S];
    for (int i = 0; i < S; ++i) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      a[i] = in.read().key;
    }
    for (int i = 0; i < S && mode; ++i) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      b[i] = seeds[t * RBEATS + i / PER_BEAT].w[i % PER_BEAT];
    }
    int ia = 0, ib = 0;
    for (int i = 0; i < S; ++i) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const bool take_a = !mode || a[ia] <= b[ib];  // neither list runs out: S taken from 2S
      out.write(KeyItem{take_a ? a[ia] : b[ib], i == S - 1});
      if (take_a) ++ia; else ++ib;
    }
  }
}

// -- width adapters -------------------------------------------------------------------------------
// One query of D elements from words of WI lanes (any word type with `.e[WI]`) to words of WO.
template <typename T, int D, int WI, int WO, typename IN>
void regroup(hls::stream<IN>& in, hls::stream<VecWord<T, WO>>& out, uint32_t nq) {
  static_assert(D % WI == 0 && D % WO == 0, "lanes must divide D");
  for (uint32_t t = 0; t < nq; ++t) {
    T q[D];
    for (int k = 0; k < D / WI; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const IN word = in.read();
      for (int i = 0; i < WI; ++i) q[k * WI + i] = word.e[i];
    }
    for (int k = 0; k < D / WO; ++k) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      VecWord<T, WO> word;
      for (int i = 0; i < WO; ++i) word.e[i] = q[k * WO + i];
      out.write(word);
    }
  }
}

// -- Stage IVFDist: streamed centroids ------------------------------------------------------------
// Reads a centroid channel once per query and deals its words to the channel's P PEs: for every
// centroid index c, word k and PE j with more than c centroids (chunk[j]), the next W elements.
template <typename T, int EB, int D, int W, int BYTES, int P>
void read_ivf_centroids(const Beat<BYTES>* mem, hls::stream<VecWord<T, W>> out[P], const int chunk[P], uint32_t nq) {
  constexpr int PER_BEAT = BYTES / EB;
  int most = 0;
  for (int j = 0; j < P; ++j) most = chunk[j] > most ? chunk[j] : most;
  for (uint32_t t = 0; t < nq; ++t) {
    uint32_t elem = 0;
    Beat<BYTES> beat = {};
    for (int c = 0; c < most; ++c) {
      for (int k = 0; k < D / W; ++k) {
        for (int j = 0; j < P; ++j) {
          FANNS_PRAGMA(HLS PIPELINE II = 1)
          if (c < chunk[j]) {
            VecWord<T, W> word;
            for (int i = 0; i < W; ++i) {
              if (elem % PER_BEAT == 0) beat = mem[elem / PER_BEAT];
              word.e[i] = beat_elem<T, EB, BYTES>(beat, int(elem % PER_BEAT));
              ++elem;
            }
            out[j].write(word);
          }
        }
      }
    }
  }
}

// -- Stage OPQ: a streamed matrix ------------------------------------------------------------------
// Reads the matrix image (D x D int16, row-major, contiguous in beats) once per query as its
// D * D / W row words of W elements, the order opq_stream takes them.
template <int D, int W, int BYTES>
void read_opq_matrix(const Beat<BYTES>* mem, hls::stream<MatWord<W>>& out, uint32_t nq) {
  constexpr int PER_BEAT = BYTES / 2;
  for (uint32_t t = 0; t < nq; ++t) {
    Beat<BYTES> beat = {};
    for (uint32_t w = 0; w < uint32_t(D) * (D / W); ++w) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      MatWord<W> word;
      for (int i = 0; i < W; ++i) {
        const uint32_t elem = w * W + uint32_t(i);
        if (elem % PER_BEAT == 0) beat = mem[elem / PER_BEAT];
        word.e[i] = beat_elem<int16_t, 2, BYTES>(beat, int(elem % PER_BEAT));
      }
      out.write(word);
    }
  }
}

// -- Stage SelCells -> BuildLUT, PQDist -----------------------------------------------------------
// A slot of a host cell list that names no cell (step-wise mode, docs/stepwise.md).
constexpr uint32_t NO_CELL = 0xFFFFFFFFu;

// The NPROBE cells of each query to every consumer: out[0] is BuildLUT's dispatcher, out[1..] the
// PQ-code readers. mode 0: the cells SelCells selected (keys (dist << 32) | cell, nearest first).
// mode 1 (step-wise): the host's cell list instead (NPROBE uint32 per query, whole beats), in
// its order, SelCells' choice being drained; a slot naming no cell (NO_CELL, or any id >= NLIST)
// becomes an empty list for the readers (NO_CELL) and cell 0 for the dispatcher (a LUT that no
// code reads), so every stage still sees NPROBE probes per query.
template <int NOUT, int NPROBE, int NLIST, int BYTES>
void probe_fanout(hls::stream<KeyItem>& in, const Beat<BYTES>* cells, hls::stream<uint32_t> out[NOUT], uint32_t nq, uint32_t mode) {
  constexpr int PER_BEAT = BYTES / 4;
  constexpr int CBEATS = (NPROBE + PER_BEAT - 1) / PER_BEAT;
  for (uint32_t t = 0; t < nq; ++t) {
    Beat<BYTES> beat = {};
    for (int j = 0; j < NPROBE; ++j) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const uint32_t chosen = uint32_t(in.read().key);
      if (mode && j % PER_BEAT == 0) beat = cells[t * CBEATS + j / PER_BEAT];
      const uint32_t given = beat_u32(beat, j % PER_BEAT);
      const uint32_t cell = !mode ? chosen : given < uint32_t(NLIST) ? given : NO_CELL;
      out[0].write(cell == NO_CELL ? 0u : cell);
      for (int o = 1; o < NOUT; ++o) {
        FANNS_PRAGMA(HLS UNROLL)
        out[o].write(cell);
      }
    }
  }
}

// -- Stage BuildLUT -------------------------------------------------------------------------------
// The D/W probe words {q, c} of one probe to one BuildLUT PE.
template <typename T, int D, int W>
void send_probe(const T q[D], const T c[D], hls::stream<ProbeWord<T, W>>& out, bool last) {
  for (int k = 0; k < D / W; ++k) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    ProbeWord<T, W> word;
    for (int i = 0; i < W; ++i) {
      word.q[i] = q[k * W + i];
      word.c[i] = c[k * W + i];
    }
    word.last = last && k == D / W - 1;
    out.write(word);
  }
}

template <typename T, int D, int WQ>
void receive_query(hls::stream<VecWord<T, WQ>>& in, T q[D]) {
  for (int k = 0; k < D / WQ; ++k) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const VecWord<T, WQ> word = in.read();
    for (int i = 0; i < WQ; ++i) q[k * WQ + i] = word.e[i];
  }
}

// The probes go to the BuildLUT PEs in turn, across queries, with the query and the cell's
// centroid, here from the on-chip copy of all centroids (NLIST * D / W words of W lanes). The P
// PEs work in groups of WAYS (the LUT words a beat PQDist loads), PE r of a group building the
// rows j = r mod WAYS of every LUT: the k-th probe of the run goes to every PE of group k mod
// (P / WAYS), so the groups are busy with P / WAYS / NPROBE queries when they outnumber NPROBE.
template <typename T, int D, int W, int WAYS>
void send_probe_group(const T q[D], const T c[D], hls::stream<ProbeWord<T, W>> out[], int group, bool last) {
  for (int r = 0; r < WAYS; ++r) send_probe<T, D, W>(q, c, out[group * WAYS + r], last);
}

template <typename T, int D, int WQ, int W, int P, int WAYS, int NPROBE, int NLIST>
void dispatch_probes(hls::stream<VecWord<T, WQ>>& query, hls::stream<uint32_t>& cells, const VecWord<T, W> cent[NLIST * (D / W)],
                     hls::stream<ProbeWord<T, W>> out[P], uint32_t nq) {
  static_assert(P % WAYS == 0, "the BuildLUT PEs come in groups of WAYS");
  int p = 0;
  for (uint32_t t = 0; t < nq; ++t) {
    T q[D];
    receive_query<T, D, WQ>(query, q);
    for (int j = 0; j < NPROBE; ++j) {
      const uint32_t cell = cells.read();
      T c[D];
      for (int k = 0; k < D / W; ++k) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        for (int i = 0; i < W; ++i) c[k * W + i] = cent[cell * (D / W) + k].e[i];
      }
      send_probe_group<T, D, W, WAYS>(q, c, out, p, j == NPROBE - 1);
      p = p == P / WAYS - 1 ? 0 : p + 1;
    }
  }
}

// The same, with the cell's centroid fetched from memory (cell by cell, padded to whole beats).
template <typename T, int EB, int D, int WQ, int W, int P, int WAYS, int NPROBE, int BYTES>
void dispatch_probes_mem(hls::stream<VecWord<T, WQ>>& query, hls::stream<uint32_t>& cells, const Beat<BYTES>* mem,
                         hls::stream<ProbeWord<T, W>> out[P], uint32_t nq) {
  static_assert(P % WAYS == 0, "the BuildLUT PEs come in groups of WAYS");
  constexpr int PER_BEAT = BYTES / EB;
  constexpr int CBEATS = (D + PER_BEAT - 1) / PER_BEAT;
  int p = 0;
  for (uint32_t t = 0; t < nq; ++t) {
    T q[D];
    receive_query<T, D, WQ>(query, q);
    for (int j = 0; j < NPROBE; ++j) {
      const uint32_t cell = cells.read();
      T c[D];
      for (int b = 0; b < CBEATS; ++b) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        const Beat<BYTES> beat = mem[cell * CBEATS + b];
        for (int i = 0; i < PER_BEAT; ++i) {
          if (b * PER_BEAT + i < D) c[b * PER_BEAT + i] = beat_elem<T, EB, BYTES>(beat, i);
        }
      }
      send_probe_group<T, D, W, WAYS>(q, c, out, p, j == NPROBE - 1);
      p = p == P / WAYS - 1 ? 0 : p + 1;
    }
  }
}

// Collects the LUTs in probe order, from the groups in the dispatchers' turn (the k-th LUT of
// the run from group k mod (P / WAYS)), into the head of the PQDist 1-D array: a beat of WAYS
// words takes word r from PE r of the group.
template <int M, int P, int WAYS, int NPROBE>
void collect_luts(hls::stream<LutOut<M>> in[P], hls::stream<LutWord<M, WAYS>>& out, uint32_t nq) {
  int g = 0;
  for (uint32_t t = 0; t < nq; ++t) {
    for (int j = 0; j < NPROBE; ++j) {
      for (int b = 0; b < PQ_KSUB / WAYS; ++b) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        LutWord<M, WAYS> beat;
        for (int r = 0; r < WAYS; ++r) {
          const LutOut<M> word = in[g * WAYS + r].read();
          for (int i = 0; i < M; ++i) beat.e[r][i] = word.e[i];
        }
        out.write(beat);
      }
      g = g == P / WAYS - 1 ? 0 : g + 1;
    }
  }
}

// -- Stage PQDist: code readers and unpackers ----------------------------------------------------
// A probed list as one PE's unpacker sees it: items of its share (0: empty list) and whether it
// is the query's last probe.
struct ListTask {
  uint32_t items;
  bool last;
};

// The unit/id-beat pattern of a PQ channel (memimage.PqLayout, channel_feeder.codes_per_unit):
// IPU codes per unit of BPU beats (a code wider than a beat fills BPU beats of its own, zero
// padded; narrow codes fill a beat up to IPB codes), IPB ids per id beat; the list table has
// TABLE_WORDS uint32 per cell.
template <int M, int BYTES>
struct PqPattern {
  static constexpr int IPB = BYTES / 4;
  static constexpr int IPU = BYTES / M > IPB ? IPB : (BYTES / M > 0 ? BYTES / M : 1);
  static constexpr int BPU = (M + BYTES - 1) / BYTES;
  static constexpr int TABLE_WORDS = 4;
  // id beats PE q receives right before its unit u: those whose first item lies in unit u
  static uint32_t ids_before(uint32_t unit, uint32_t share) {
    const uint32_t id_beats = (share + IPB - 1) / IPB;
    uint32_t n = 0;
    for (uint32_t j = (unit * IPU + IPB - 1) / IPB; j < id_beats && j * IPB / IPU == unit; ++j) ++n;
    return n;
  }
};

// One probed list to the channel's P PEs: its task to every unpacker, then its beats from `src`
// at `addr` in the order of memimage.PqLayout.schedule.
template <int M, int BYTES, int P>
void deal_list(const Beat<BYTES>* src, uint32_t addr, uint32_t share, bool last, hls::stream<ListTask> tasks[P],
               hls::stream<Beat<BYTES>> beats[P]) {
  typedef PqPattern<M, BYTES> Pat;
  for (int q = 0; q < P; ++q) {
    FANNS_PRAGMA(HLS UNROLL)
    tasks[q].write(ListTask{share, last});
  }
  const uint32_t units = share / Pat::IPU;
  for (uint32_t u = 0; u < units; ++u) {
    const uint32_t n = Pat::ids_before(u, share) + Pat::BPU;
    for (int q = 0; q < P; ++q) {
      for (uint32_t b = 0; b < n; ++b) {
        FANNS_PRAGMA(HLS PIPELINE II = 1)
        beats[q].write(src[addr++]);
      }
    }
  }
}

// Reads each probed list of its channel (one sequential burst, after its table entry) and deals
// the beats to the channel's P PEs in the order of memimage.PqLayout.schedule.
template <int M, int BYTES, int P, int NPROBE>
void read_codes(const Beat<BYTES>* mem, hls::stream<uint32_t>& cells, hls::stream<ListTask> tasks[P], hls::stream<Beat<BYTES>> beats[P],
                uint32_t nq) {
  typedef PqPattern<M, BYTES> Pat;
  constexpr int WORDS_PER_BEAT = BYTES / 4;
  for (uint32_t t = 0; t < nq; ++t) {
    // the table entries of the query's probes first, so the list bursts follow back to back
    uint32_t start[NPROBE], share[NPROBE];
    for (int j = 0; j < NPROBE; ++j) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const uint32_t cell = cells.read();  // NO_CELL: an unused slot of a host cell list, an empty list
      const uint32_t word = (cell == NO_CELL ? 0u : cell) * Pat::TABLE_WORDS;  // word 0: start beat, word 2: share items
      start[j] = beat_u32(mem[word / WORDS_PER_BEAT], int(word % WORDS_PER_BEAT));
      share[j] = cell == NO_CELL ? 0u : beat_u32(mem[(word + 2) / WORDS_PER_BEAT], int((word + 2) % WORDS_PER_BEAT));
    }
    for (int j = 0; j < NPROBE; ++j) deal_list<M, BYTES, P>(mem, start[j], share[j], j == NPROBE - 1, tasks, beats);
  }
}

// -- host-memory tier (docs/host_tier.md, "The faces") -------------------------------------------
// The lists live in host memory (the PQ-code images, list tables included); each PQ channel holds a
// cache region written only by the prefetch command (mode 2), and one on-chip location table
// (cell -> 0: not cached, else offset in beats + 1; the same offset on every channel) says where.
// A probed cell as a host-memory design's PQ-code readers need it.
struct CachedCell {
  uint32_t cell;    // NO_CELL: no list
  bool hit;         // the cache holds the list
  uint32_t offset;  // where, in beats of every channel's cache region
};

// The probe fan-out's look-up: each probed cell with its location table entry, to every reader.
template <int NOUT, int NPROBE, int NLIST>
void locate_cells(hls::stream<uint32_t>& in, const uint32_t table[NLIST], hls::stream<CachedCell> out[NOUT], uint32_t nq) {
  for (uint32_t i = 0; i < nq * NPROBE; ++i) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    const uint32_t cell = in.read();
    const uint32_t entry = cell < uint32_t(NLIST) ? table[cell] : 0u;
    const CachedCell c{cell, entry != 0, entry - 1};
    for (int o = 0; o < NOUT; ++o) {
      FANNS_PRAGMA(HLS UNROLL)
      out[o].write(c);
    }
  }
}

// read_codes of a host-memory design: the list table from host memory (`mem`) either way, a
// cached list's beats from the channel's cache region at its offset, any other's from host memory.
template <int M, int BYTES, int P, int NPROBE>
void read_codes_cached(const Beat<BYTES>* mem, const Beat<BYTES>* cache, hls::stream<CachedCell>& cells, hls::stream<ListTask> tasks[P],
                       hls::stream<Beat<BYTES>> beats[P], uint32_t nq) {
  typedef PqPattern<M, BYTES> Pat;
  constexpr int WORDS_PER_BEAT = BYTES / 4;
  for (uint32_t t = 0; t < nq; ++t) {
    uint32_t start[NPROBE], share[NPROBE];
    bool hit[NPROBE];
    for (int j = 0; j < NPROBE; ++j) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      const CachedCell c = cells.read();
      const uint32_t word = (c.cell == NO_CELL ? 0u : c.cell) * Pat::TABLE_WORDS;
      const uint32_t first = beat_u32(mem[word / WORDS_PER_BEAT], int(word % WORDS_PER_BEAT));
      start[j] = c.hit ? c.offset : first;
      hit[j] = c.hit;
      share[j] = c.cell == NO_CELL ? 0u : beat_u32(mem[(word + 2) / WORDS_PER_BEAT], int((word + 2) % WORDS_PER_BEAT));
    }
    for (int j = 0; j < NPROBE; ++j) {
      if (hit[j])
        deal_list<M, BYTES, P>(cache, start[j], share[j], j == NPROBE - 1, tasks, beats);
      else
        deal_list<M, BYTES, P>(mem, start[j], share[j], j == NPROBE - 1, tasks, beats);
    }
  }
}

// The prefetch command's copy on one PQ channel: the list of `cell` (its table entry's beats) into
// the cache region at `at`, from host memory (from_host) or from the region at `source` (at <=
// source or no overlap: a forward copy beat by beat is right). A copy past the region's
// `cache_beats` is refused (false; the driver plans within the region).
template <int BYTES>
bool copy_list(const Beat<BYTES>* mem, Beat<BYTES>* cache, uint32_t cache_beats, uint32_t cell, bool from_host, uint32_t at, uint32_t source) {
  constexpr int WORDS_PER_BEAT = BYTES / 4;
  const uint32_t word = cell * PqPattern<1, BYTES>::TABLE_WORDS;  // word 0: start beat, word 1: beats
  const uint32_t start = beat_u32(mem[word / WORDS_PER_BEAT], int(word % WORDS_PER_BEAT));
  const uint32_t n = beat_u32(mem[(word + 1) / WORDS_PER_BEAT], int((word + 1) % WORDS_PER_BEAT));
  if (at + n > cache_beats || (!from_host && source + n > cache_beats)) return false;
  for (uint32_t b = 0; b < n; ++b) {
    FANNS_PRAGMA(HLS PIPELINE II = 1)
    cache[at + b] = from_host ? mem[start + b] : cache[source + b];
  }
  return true;
}

// Turns one PE's beats back into code items {codes, id, pad, last_cell, last_query}: before unit
// u come its id beats (kept in a small ring indexed by item), then the unit's code beats. An
// empty list becomes one padding item.
template <int M, int BYTES>
void unpack_codes(hls::stream<ListTask>& tasks, hls::stream<Beat<BYTES>>& beats, hls::stream<CodeItem<M>>& items, uint32_t nlists) {
  typedef PqPattern<M, BYTES> Pat;
  constexpr int RING = 2 * (Pat::IPB + Pat::IPU);
  constexpr uint32_t PAD_ID = 0xFFFFFFFFu;
  for (uint32_t l = 0; l < nlists; ++l) {
    const ListTask task = tasks.read();
    if (task.items == 0) {
      CodeItem<M> pad;
      for (int i = 0; i < M; ++i) pad.code[i] = 0;
      pad.id = PAD_ID;
      pad.pad = true;
      pad.last_cell = true;
      pad.last_query = task.last;
      items.write(pad);
      continue;
    }
    uint32_t ring[RING];
    uint8_t unit[Pat::IPU * M];
    uint32_t next_id_beat = 0;
    for (uint32_t i = 0; i < task.items; ++i) {
      FANNS_PRAGMA(HLS PIPELINE II = 1)
      if (i % Pat::IPU == 0) {
        const uint32_t u = i / Pat::IPU;
        for (uint32_t n = Pat::ids_before(u, task.items); n > 0; --n, ++next_id_beat) {
          const Beat<BYTES> b = beats.read();
          for (int s = 0; s < Pat::IPB; ++s) ring[(next_id_beat * Pat::IPB + s) % RING] = beat_u32(b, s);
        }
        for (int b = 0; b < Pat::BPU; ++b) {
          const Beat<BYTES> cb = beats.read();
          for (int s = 0; s < BYTES && b * BYTES + s < Pat::IPU * M; ++s) unit[b * BYTES + s] = beat_byte(cb, s);
        }
      }
      CodeItem<M> item;
      for (int s = 0; s < M; ++s) item.code[s] = unit[(i % Pat::IPU) * M + s];
      item.id = ring[i % RING];
      item.pad = item.id == PAD_ID;
      item.last_cell = i + 1 == task.items;
      item.last_query = item.last_cell && task.last;
      items.write(item);
    }
  }
}

}  // namespace fanns

#endif  // FANNS_IVFPQ_KERNEL_H
