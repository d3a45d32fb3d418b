"""What `fanns rag` prints: the pipeline with every retrieval option, as JSON and as tables.

The JSON document (`document`) holds every figure the tables show and more (each stage's batch
time, cost and throughput); infinite waits (an offered load beyond a stage's throughput) are
written as null. Deterministic: the same description and designs give the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import replace

from rich.console import Console
from rich.table import Table

from fanns.model.ivfpq.rag.pipeline import Pipeline, comparison
from fanns.model.ivfpq.rag.retrieval import Units
from fanns.model.ivfpq.rag.schema import RagSpec


def finite(value):
    """`value` with every infinite or NaN float replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def outcomes(spec: RagSpec, units: dict[str, Units], counts: dict[str, int | None] | None = None):
    """(pipeline, {option: outcome}) with each option's given count (None: equal throughput)."""
    pipe = Pipeline(spec)
    given = counts if counts is not None else {o.name: o.count for o in spec.retrieval.hardware}
    return pipe, {name: pipe.outcome(u, given.get(name)) for name, u in units.items()}


def document(spec: RagSpec, units: dict[str, Units], counts: dict[str, int | None] | None = None) -> dict:
    """The whole answer for one description (see the module docstring)."""
    pipe, outs = outcomes(spec, units, counts)
    s = spec
    return finite(
        {
            "name": s.name,
            "llm": vars(s.llm),
            "sequence": vars(s.sequence),
            "retrieval": {
                "per_request": s.retrieval.per_request,
                "queries": s.retrieval.queries,
                "retrieved_tokens": s.retrieval.retrieved_tokens,
                "database": vars(s.retrieval.database),
            },
            "inference": {
                "accelerator": vars(s.inference.accelerator),
                "chips": s.inference.chips,
                "per_host": s.inference.per_host,
                "allocation": pipe.chips,
                "groups": {k: w.group for k, w in pipe.work.items()},
            },
            "batch": s.batch,
            "load": s.load,
            "inference_rps": pipe.capacity,
            "load_rps": pipe.load_rps,
            "options": [o.as_dict() for o in outs.values()],
            "comparison": comparison(pipe, outs, units),
        }
    )


def seconds(x: float | None) -> str:
    """A duration in the unit that reads best."""
    if x is None or not math.isfinite(x):
        return "saturated"
    if x >= 1:
        return f"{x:,.2f} s"
    if x >= 1e-3:
        return f"{1e3 * x:,.2f} ms"
    return f"{1e6 * x:,.1f} us"


def count_text(n: int | None, kind: str) -> str:
    if n is None:
        return "no count"
    unit = "board" if kind == "fpga" else "CPU server"
    return f"{n:,} {unit}{'s' if n != 1 else ''}"


def comparison_lines(doc: dict) -> list[str]:
    """'u55c: 24 boards replace 310 CPU servers at equal throughput ...' per compared option."""
    kinds = {o["option"]: o["kind"] for o in doc["options"]}
    out = []
    for c in doc["comparison"]:
        name, ref = c["option"], c["reference"]
        line = (
            f"{name}: {count_text(c['units'], kinds[name])} {'replaces' if c['units'] == 1 else 'replace'} "
            f"{count_text(c['reference_units'], kinds[ref])} "
            f"({ref}) at equal throughput ({c['rps']:,.1f} requests/s): TTFT {seconds(c['ttft_seconds'])} vs "
            f"{seconds(c['reference_ttft_seconds'])}."
        )
        same = c["same_ttft"]
        slower, need = same["slower"], same["slower_units"]
        target = seconds(same["target_seconds"])
        if need is None:
            line += f" No count of {slower} reaches {same['faster']}'s TTFT of {target} (its retrieval latency floor)."
        else:
            line += f" At the same TTFT ({target}): {count_text(need, kinds[slower])} of {slower}."
        out.append(line)
    return out


def load_text(doc: dict) -> str:
    """The offered load: `load: 0` means batches arrive whole (no wait to fill them)."""
    capacity = f"the inference stages' {doc['inference_rps']:,.2f} requests/s"
    if not doc["load"]:
        return f"no offered load (each batch arrives whole; {capacity})"
    return f"offered load {doc['load_rps']:,.2f} requests/s ({100 * doc['load']:.0f} % of {capacity})"


def print_report(doc: dict, console: Console | None = None) -> None:
    """The summary table, each option's stage table and the comparison sentences."""
    console = console or Console()
    inf = doc["inference"]
    alloc = ", ".join(f"{k} {v} (x{inf['groups'][k]})" for k, v in inf["allocation"].items())
    seq = doc["sequence"]
    console.print(
        f"[bold]{doc['name']}[/bold]: {doc['llm']['name']} on {inf['chips']} {inf['accelerator']['name']} "
        f"({alloc}); prompt {seq['prompt']}, generated {seq['generated']} tokens; "
        f"{doc['retrieval']['per_request']} retrieval(s) x {doc['retrieval']['queries']} query vector(s) a request; "
        f"{load_text(doc)}",
        highlight=False,
    )
    table = Table(title="the pipeline with each retrieval option")
    for col in ("retrieval", "units", "TTFT", "TPOT", "requests/s", "req/s/chip", "bottleneck"):
        table.add_column(col, justify="left" if col in ("retrieval", "bottleneck") else "right")
    table.add_column("retrieval share", justify="right")
    table.add_column("of TTFT", justify="right")
    for o in doc["options"]:
        table.add_row(
            o["option"],
            f"{o['units']:,}",
            seconds(o["ttft_seconds"]),
            seconds(o["tpot_seconds"]),
            f"{o['rps']:,.2f}",
            f"{o['rps_per_chip']:,.3f}",
            o["bottleneck"],
            f"{100 * o['retrieval_share']:.1f} %",
            "-" if o["ttft_retrieval_share"] is None else f"{100 * o['ttft_retrieval_share']:.1f} %",
        )
    console.print(table)
    for o in doc["options"]:
        st = Table(title=f"{o['option']}: stages ({o['retrieval']['model']})")
        for col in ("stage", "hardware", "units", "group", "batch", "batch time", "cost/request", "requests/s", "wait"):
            st.add_column(col, justify="left" if col in ("stage", "hardware") else "right")
        for s in o["stages"]:
            st.add_row(
                s["stage"],
                s["hardware"],
                f"{s['units']:,}",
                str(s["group"]),
                str(s["batch"]),
                seconds(s["batch_seconds"]),
                seconds(s["cost_seconds_per_request"]),
                f"{s['throughput_rps']:,.2f}",
                seconds(s["wait_seconds"]) if s["first_token"] else "-",
            )
        console.print(st)
    for line in comparison_lines(doc):
        console.print(line, highlight=False)
    console.print(
        "retrieval share: time per request normalised by what one host holds "
        f"({inf['per_host']} accelerators, its retrieval unit(s)), as RAGO's breakdowns; "
        "of TTFT: the first retrieval's share of the time to first token (docs/rag.md)",
        highlight=False,
    )


def variants(spec: RagSpec, prompts: tuple[int, ...], frequencies: tuple[int, ...]) -> dict[str, list[RagSpec]]:
    """The description at other prompt lengths and retrieval frequencies (the sweep's RAG grid)."""
    by_prompt = [
        replace(
            spec,
            sequence=replace(spec.sequence, prompt=p, question=min(spec.sequence.question, p)),
            retrieval=replace(spec.retrieval, retrieved_tokens=max(1, p - min(spec.sequence.question, p))),
        )
        for p in prompts
    ]
    by_frequency = [
        replace(spec, retrieval=replace(spec.retrieval, per_request=f))
        for f in frequencies
        if f - 1 < spec.sequence.generated
    ]
    return {"prompt": by_prompt, "frequency": by_frequency}


def grid(spec: RagSpec, units: dict[str, Units], prompts: tuple[int, ...], frequencies: tuple[int, ...]) -> dict:
    """Retrieval share, TTFT and TPOT of every option over the prompt lengths and frequencies,
    each option at its count at equal throughput."""
    out: dict[str, dict] = {}
    for axis, specs in variants(spec, prompts, frequencies).items():
        values = [s.sequence.prompt if axis == "prompt" else s.retrieval.per_request for s in specs]
        rows: dict[str, dict[str, list]] = {name: {"share": [], "ttft": [], "tpot": []} for name in units}
        for s in specs:
            _, outs = outcomes(s, units, {})
            for name, o in outs.items():
                rows[name]["share"].append(o.retrieval_share)
                rows[name]["ttft"].append(o.ttft)
                rows[name]["tpot"].append(o.tpot)
        out[axis] = {"values": values, "options": rows}
    return finite(out)
