"""Lookahead prefetch of host-memory IVF lists into HBM (issue 49, docs/host_tier.md): the hit rate
vs prefetch budget measured on builtin:text-384 draft/final query pairs beside TeleRAG's published
hit rates, and the modelled QPS and latency vs prefetch budget (the time the LLM leaves) of a
RAG-sized index larger than the card on the U55C.

    PYTHONPATH=. python benchmarks/host_tier.py [--json benchmarks/results/host_tier.json]
        [--profile fanns/model/ivfpq/text_hit_profile.json]

1. Measured: builtin:text-384 (104,698 x 384 LSA sentence vectors, 1,000 held-out queries as the
   final queries), IVF1024 by faiss k-means (20 iterations, seed 1), nprobe 32; the drafts are
   `fanns.datasets.query_pairs.draft_queries` at the mix calibrated to TeleRAG's mean coverage
   (run again here). Per budget (in multiples of the bytes a final query probes, so budgets compare
   across index sizes), the prefetch set is the draft's nearest cells as far as whole lists fit;
   hit rate = share of the final's probed cells (and bytes) cached. TeleRAG's budgets are put on the
   same scale by its index: 61 GB, nprobe 256 of 4,096 lists, so a query probes ~3.8 GB.
2. Modelled: 200M x 768-d, IVF16384,PQ96 (20 GB: larger than the U55C's 16 GB HBM), nprobe 32,
   K 10; list sizes log-normal with the imbalance factor measured on the text set's IVF1024 lists
   (its skew profile) and size-biased probes (`synthetic_workload`). The PEs and channels are the
   DSE's best U55C design for it (the DSE keeps an index larger than the card in host memory and
   chooses the stages as for one that fits: `fanns.model.ivfpq.host_cache`). Every list is in
   host memory (board file `host`: 12 GB/s, 1 us, read through every PQ channel's own host port of
   the PQ width, all sharing the link: min(12 GB/s, channels x port bytes x 140 MHz),
   `skew.host_bandwidth`, for the search's reads and the prefetch copies alike); the
   cache is the design's PQ channels' HBM (channels x 0.5 GB). Each query's cached cells follow
   the text set's measured hit rate per probe rank at the same budget ratio (seeded draws);
   budget = min(B x t_LLM, cache) (TeleRAG Eq. 3). Pure model arithmetic and seeded draws: the
   figures do not depend on the machine.

`--profile` writes part 1's per-rank hit profile, the one the DSE applies to an index without
pairs of its own (`fanns.model.ivfpq.host_cache.text_profile`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import faiss
import numpy as np
from record import command_line, replace_block, write_result

from fanns.boards import load_board
from fanns.datasets import query_pairs as qp
from fanns.datasets.builtins import load_builtin
from fanns.model.ivfpq import dse, prefetch, prefetch_model
from fanns.model.ivfpq.workload import synthetic_workload

NLIST, NPROBE, M_TEXT = 1024, 32, 48
RATIOS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0)
BUDGET_RATIOS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
T_LLM_MS = (0.0, 2.0, 5.0, 10.0, 20.0)
T_SIZING_MS = (2.0, 5.0, 20.0, 100.0)
CACHE_RATIOS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0)
RAG = dict(n=2 * 10**8, d=768, m=96, nlist=16384, nprobe=NPROBE, k=10)
GB = 1e9
README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK_START = "<!-- prefetch figures, from benchmarks/results/host_tier.json (benchmarks/host_tier.py) -->"
BLOCK_END = "<!-- end of the prefetch figures -->"


def text_hits() -> dict:
    """Part 1 (see the module docstring)."""
    ds = load_builtin("text-384")
    base = np.ascontiguousarray(ds.base, dtype=np.float32)
    km = faiss.Kmeans(base.shape[1], NLIST, niter=20, seed=1, verbose=False)
    km.train(base)
    sizes = np.bincount(km.index.search(base, 1)[1].ravel(), minlength=NLIST).astype(np.int64)
    mix, cov = qp.calibrate_mix(ds.queries, km.centroids, NPROBE, steps=12)
    drafts, finals = qp.draft_queries(ds.queries, qp.TEXT_MIX, qp.TEXT_NOISE), qp.normalize_rows(ds.queries)
    final_cells = qp.nearest_cells(finals, km.centroids, NPROBE)
    draft_order = qp.nearest_cells(drafts, km.centroids, NLIST)
    coverage = float(qp.coverage(draft_order[:, :NPROBE], final_cells).mean())
    nbytes = sizes * (M_TEXT + 4)
    probed = float(nbytes[final_cells].sum(1).mean())
    budgets = np.array(RATIOS) * probed
    cold = prefetch.cold_hits(draft_order, final_cells, nbytes, budgets)
    per_rank = prefetch_model.hit_profile(draft_order, final_cells, nbytes, RATIOS).per_rank  # [ratios, rank]
    ring = []
    for r in (1.0, 2.0, 4.0):
        for cap in (1, 8):
            h = prefetch.ring_hits(draft_order, final_cells, nbytes, r * probed, int(cap * r * probed))
            ring.append(
                {
                    "ratio": r,
                    "cache_over_budget": cap,
                    "cell_hit": round(float(h["cells"].mean()), 4),
                    "sent_over_budget": round(float(h["transferred"].mean() / (r * probed)), 4),
                }
            )
    imbalance = float(NLIST * (sizes.astype(np.float64) ** 2).sum() / sizes.sum() ** 2)
    return {
        "calibrated_mix": mix,
        "calibrated_coverage": round(cov, 4),
        "mix": qp.TEXT_MIX,
        "coverage": round(coverage, 4),
        "imbalance": round(imbalance, 4),
        "probed_bytes": round(probed, 1),
        "cold": [
            {"ratio": r, "cell_hit": round(float(c), 4), "byte_hit": round(float(b), 4)}
            for r, c, b in zip(RATIOS, cold["cells"].mean(1), cold["bytes"].mean(1))
        ],
        "per_rank": per_rank.round(4).tolist(),
        "ring": ring,
    }


def telerag_rows() -> list[dict]:
    probed = prefetch.TELERAG_INDEX_GB * prefetch.TELERAG_PROBED_SHARE
    return [
        {"pipeline": p, "gpu": g, "budget_gb": b, "ratio": round(b / probed, 3), "hit": h}
        for p, g, b, h in prefetch.TELERAG_TABLE4
    ]


def rag_model(text: dict) -> dict:
    """Part 2 (see the module docstring)."""
    w = synthetic_workload(**RAG, opq=False, queries=1000, imbalance=text["imbalance"], seed=1)
    board = load_board("u55c")
    outcome = dse.run([w], board, "synthetic", board.clock_mhz, top=1)
    p = outcome.best
    model = prefetch_model.PrefetchModel(
        p, board, prefetch_model.HitProfile(np.array(RATIOS), np.array(text["per_rank"]))
    )
    probed, st = model.probed, p.stages.pq_dist

    def run(budget: float, t_llm_s: float) -> dict:
        out = model.at(budget, t_llm_s)
        return {"budget_gb": round(out.pop("budget_bytes") / GB, 4), **out}

    curve = []
    for r in BUDGET_RATIOS:  # each budget hidden exactly by the LLM: t_LLM = b_p / B (TeleRAG Eq. 3)
        t = r * probed / model.link.bandwidth_bps
        curve.append({"t_llm_ms": round(t * 1e3, 3), **run(r * probed, t)})
    late = [{"t_llm_ms": t, **run(2.0 * probed, t / 1e3)} for t in T_LLM_MS]  # a 2x budget, LLM shorter or longer
    sizing = []
    for t in T_SIZING_MS:
        c = model.cache_curve(t / 1e3, CACHE_RATIOS)
        rows = [
            {
                "cache_bytes": r["cache_bytes"],
                "budget_gb": round(r["budget_bytes"] / GB, 4),
                **{k: r[k] for k in ("cell_hit", "latency_mean_us", "qps")},
            }
            for r in c["curve"]
        ]
        sizing.append({"t_llm_ms": t, "curve": rows, "chosen_gb": c["chosen_bytes"] / GB})
    group = next(g for g in board.memory if g.kind == st.memory)
    return {
        "index": f"{RAG['n'] // 10**6}M x {RAG['d']}-d IVF{RAG['nlist']},PQ{RAG['m']} "
        f"nprobe {RAG['nprobe']} K {RAG['k']}",
        "index_gb": round(float(model.list_bytes.sum()) / GB, 2),
        "hbm_gb": round(group.count * group.capacity_bytes / GB, 2),
        "design": f"{st.pes} PQDist PEs on {st.channels} {st.memory} channels, {st.port_bits}-bit, "
        f"{p.ctx.clock_mhz:g} MHz",
        "cache_max_gb": round(model.cache_max / GB, 2),
        "probed_mb": round(probed / 1e6, 2),
        "link_gbps": model.link.bandwidth_bps / GB,
        "all_in_host": model.baseline(False),
        "all_in_hbm": model.baseline(True),
        "curve": curve,
        "late": late,
        "sizing": sizing,
        "dse_choice": {
            k: outcome.host_tier[k] for k in ("llm_ms", "cache_bytes", "budget_bytes", "cell_hit", "with_prefetch")
        },
    }


def write_profile(path: str, text: dict) -> None:
    """Part 1's per-rank hit profile as the DSE reads it (`fanns.model.ivfpq.host_cache.PROFILE_FILE`)."""
    data = {
        "source": (
            "benchmarks/host_tier.py part 1 (builtin:text-384, IVF1024 by faiss k-means seed 1, nprobe 32, "
            "drafts at TeleRAG's mean coverage 79 %): per probe rank, the share of final queries whose cell a "
            "per-query cache holds, at budgets `ratios` x a final query's mean probed bytes "
            "(fanns.model.ivfpq.prefetch_model.hit_profile); written by "
            "`python benchmarks/host_tier.py --profile fanns/model/ivfpq/text_hit_profile.json`"
        ),
        "ratios": list(RATIOS),
        "per_rank": text["per_rank"],
    }
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def readme_row(figures: dict) -> list[tuple[str, str]]:
    """The README figures rows of this benchmark's recorded `figures` (`benchmarks/readme_figures.py`)."""
    text, rag = figures["text"], figures["rag"]
    hits = {r["ratio"]: r["cell_hit"] for r in text["cold"]}
    tele = ", ".join(
        f"{r['budget_gb']:g} GB ({r['ratio']:.2f}x) {100 * r['hit']:.0f} %" for r in figures["telerag"][6:]
    )
    pts = [r for r in rag["curve"] if r["ratio"] in (0.5, 1.0, 2.0)]
    return [
        (
            "Lookahead prefetch (docs/host_tier.md): cluster hit rate vs budget (multiples of a query's probed bytes), "
            "builtin:text-384 draft/final pairs (IVF1024, nprobe 32) beside TeleRAG Table 4 (RTX 4090, NQ)",
            f"measured 0.5x {100 * hits[0.5]:.0f} %, 1x {100 * hits[1.0]:.0f} %, 2x {100 * hits[2.0]:.0f} %, "
            f"4x {100 * hits[4.0]:.0f} %; TeleRAG {tele}",
        ),
        (
            f"Modelled U55C, {rag['index']} ({rag['index_gb']:g} GB, lists in host memory over PCIe): "
            "QPS and mean retrieval latency after the LLM vs prefetch budget b_p, the LLM leaving t_LLM = b_p / B",
            f"no prefetch {rag['all_in_host']['qps']:,.0f} QPS / {rag['all_in_host']['latency_mean_us']:,.0f} us; "
            + "; ".join(
                f"{r['budget_gb'] * 1e3:,.0f} MB ({r['t_llm_ms']:.1f} ms, hit {100 * r['cell_hit']:.0f} %): "
                f"{r['qps']:,.0f} QPS / {r['latency_mean_us']:,.0f} us"
                for r in pts
            )
            + f"; all in HBM {rag['all_in_hbm']['qps']:,.0f} QPS / {rag['all_in_hbm']['latency_mean_us']:,.0f} us",
        ),
    ]


def readme_block(rec: dict) -> str:
    """The README's table of a recorded run (`results/host_tier.json`): the modelled RAG-sized index
    on the U55C, QPS and latency vs prefetch budget, beside TeleRAG's published hit rates."""
    rag, m = rec["figures"]["rag"], rec["machine"]
    rows = [("none", "-", "0 %", rag["all_in_host"])]
    rows += [
        (
            f"{r['budget_gb'] * 1e3:,.0f} MB ({r['ratio']:g}x)",
            f"{r['t_llm_ms']:.1f} ms",
            f"{100 * r['cell_hit']:.0f} %",
            r,
        )
        for r in rag["curve"]
        if r["ratio"] > 0
    ]
    rows.append(("all lists in HBM (a card that holds them)", "-", "100 %", rag["all_in_hbm"]))
    tele = "; ".join(
        f"{r['gpu']} {r['pipeline']} {r['ratio']:.2f}x {100 * r['hit']:.0f} %" for r in rec["figures"]["telerag"]
    )
    return "\n".join(
        [
            BLOCK_START,
            f"Modelled: {rag['index']} ({rag['index_gb']:g} GB of lists, more than the U55C's {rag['hbm_gb']:g} GB "
            f"of HBM) in host memory, read over PCIe at {rag['link_gbps']:g} GB/s; {rag['design']}; a query "
            f"probes {rag['probed_mb']:g} MB. The budget b_p is in multiples of that; the LLM leaves "
            "t_LLM = b_p / B, the time that hides it; cell hits are the builtin:text-384 draft/final pairs' "
            "(docs/host_tier.md).",
            "",
            "| prefetch budget b_p | t_LLM | cell hits | QPS | mean latency after the LLM |",
            "|---|---|---|---|---|",
            *(f"| {b} | {t} | {h} | {r['qps']:,.0f} | {r['latency_mean_us']:,.0f} us |" for b, t, h, r in rows),
            "",
            f"TeleRAG's measured cluster hit rates (Table 4, NQ; budget over its 3.8 GB a query): {tele}.",
            f"(recorded at {rec['commit'][:10]} on {rec['date'][:10]}: {m['cpu']}, {m['cores']} cores, load "
            f"{m['load_average_1min']})",
            BLOCK_END,
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON (benchmarks/record.py)")
    ap.add_argument("--profile", metavar="PATH", help="also write the text set's per-rank hit profile (the DSE's)")
    ap.add_argument(
        "--write-readme", action="store_true", help="put the recorded figures into README.md's table (needs --json)"
    )
    args = ap.parse_args()
    if args.write_readme and not args.json:
        ap.error("--write-readme needs --json (the README quotes the recorded run)")
    start = time.process_time()
    text = text_hits()
    print(
        f"1. builtin:text-384 IVF{NLIST} nprobe {NPROBE}: drafts at mix {text['mix']} (calibrated again: "
        f"{text['calibrated_mix']} -> coverage {text['calibrated_coverage']}); coverage of the final's cells "
        f"{100 * text['coverage']:.1f} %; a query probes {text['probed_bytes'] / 1e3:.1f} kB (PQ{M_TEXT} + ids); "
        f"list imbalance {text['imbalance']:.3f}"
    )
    print("   budget/probed   cell hit   byte hit")
    for r in text["cold"]:
        print(f"   {r['ratio']:12.2f}x {100 * r['cell_hit']:8.1f} % {100 * r['byte_hit']:8.1f} %")
    print("   shared ring cache (queries in their set order):")
    for r in text["ring"]:
        print(
            f"   budget {r['ratio']:g}x, cache {r['cache_over_budget']}x budget: cell hit {100 * r['cell_hit']:.1f} %, "
            f"sent {100 * r['sent_over_budget']:.0f} % of the budget"
        )
    tele = telerag_rows()
    print("   TeleRAG Table 4 (NQ, nprobe 256 of 4096, 61 GB): pipeline GPU budget (ratio) hit")
    for r in tele:
        print(
            f"   {r['pipeline']:6s} {r['gpu']:8s} {r['budget_gb']:5.2f} GB ({r['ratio']:.2f}x) {100 * r['hit']:.1f} %"
        )
    rag = rag_model(text)
    print(
        f"2. U55C model, {rag['index']}: {rag['index_gb']} GB of lists (HBM {rag['hbm_gb']} GB) in host memory "
        f"over {rag['link_gbps']:g} GB/s; {rag['design']}; cache up to {rag['cache_max_gb']} GB; "
        f"a query probes {rag['probed_mb']} MB"
    )
    for name in ("all_in_host", "all_in_hbm"):
        r = rag[name]
        print(
            f"   {name:12s} {r['qps']:9,.0f} QPS  mean {r['latency_mean_us']:9,.1f} us  "
            f"P99 {r['latency_p99_us']:9,.1f} us"
        )
    head = "   budget GB  ratio  t_LLM ms  cell hit       QPS   mean us    P99 us   wait us  link-bound"
    for title, key in (
        ("per budget, the LLM leaving exactly the time to hide it (t_LLM = b_p / B):", "curve"),
        ("a 2x budget when the LLM leaves less or more time:", "late"),
    ):
        print("   " + title)
        print(head)
        for r in rag[key]:
            print(
                f"   {r['budget_gb']:9.3f} {r['ratio']:6.2f} {r['t_llm_ms']:9.2f} {100 * r['cell_hit']:7.1f} % "
                f"{r['qps']:9,.0f} {r['latency_mean_us']:9,.1f} {r['latency_p99_us']:9,.1f} {r['wait_mean_us']:9,.1f}"
                f"  {r['link_bound']}"
            )
    for s in rag["sizing"]:
        pts = ", ".join(f"{r['cache_bytes'] / GB:.3g} GB {r['latency_mean_us']:,.0f} us" for r in s["curve"])
        print(f"   cache sizing at t_LLM {s['t_llm_ms']:g} ms: {pts} -> chosen {s['chosen_gb']:.3g} GB")
    c = rag["dse_choice"]
    print(
        f"   fanns dse's choice at its default t_LLM {c['llm_ms']:g} ms: cache {c['cache_bytes'] / GB:.3g} GB, "
        f"budget {c['budget_bytes'] / GB:.3g} GB, cell hit {100 * c['cell_hit']:.1f} %, "
        f"{c['with_prefetch']['qps']:,.0f} QPS / {c['with_prefetch']['latency_mean_us']:,.1f} us"
    )
    if args.profile:
        write_profile(args.profile, text)
    cpu = time.process_time() - start
    print(f"{cpu:.1f} s of CPU")
    write_result(
        args.json,
        "host_tier",
        command_line(),
        {"text": text, "telerag": tele, "rag": rag, "cpu_seconds": round(cpu, 1)},
    )
    if args.write_readme:
        block = readme_block(json.loads(Path(args.json).read_text()))
        README.write_text(replace_block(README.read_text(), BLOCK_START, BLOCK_END, block))


if __name__ == "__main__":
    main()
