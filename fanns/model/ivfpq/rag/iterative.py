"""Decoding with iterative retrievals: how long a sequence takes when it pauses for retrievals
that are batched across the sequences being decoded.

Why a simulation: a sequence that reaches a retrieval point pauses until `retrieval_batch`
paused sequences have gathered, their retrieval (and the prefill of what it returned) is done,
and then resumes. With a retrieval batch close to the decode batch, most slots sit idle waiting
for the last sequences to reach a retrieval point (RAGO section 5.3, its Figure 10: up to 2.77x
the decode time of no retrieval at decode batch 64 and retrieval batch 64). No closed form gives
that wait, so the decode pool is simulated step by step, as the paper describes it: continuous
batching of `decode_batch` slots (a finished sequence's slot takes a new sequence at once); each
sequence makes `retrievals` retrievals at distinct token positions drawn uniformly from
1 .. generated - 1; paused sequences are batched first come, first served; a batch resumes
`delay_steps` decode steps after it formed (0 in RAGO's Figure 10: retrieval and prefill taken
as instantaneous). The result is the mean steps a sequence spends from its first token to its
last, over `generated` (1.0 without retrievals). Deterministic for a seed; the first two pools
of sequences are discarded (every slot starts at token 0 together).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from fanns.errors import FannsError

DEFAULT_SEQUENCES = 2000
"""Sequences measured (after the warm-up) per simulation."""


def _positions(rng: np.random.Generator, retrievals: int, generated: int) -> np.ndarray:
    """Sorted distinct retrieval positions in 1 .. generated - 1, then a sentinel past the end."""
    pts = np.sort(rng.choice(np.arange(1, generated), retrievals, replace=False))
    return np.concatenate([pts, [generated + 1]])


@cache
def slowdown(
    decode_batch: int,
    retrieval_batch: int,
    retrievals: int,
    generated: int,
    delay_steps: float = 0.0,
    sequences: int = DEFAULT_SEQUENCES,
    seed: int = 0,
) -> float:
    """Mean decode steps per generated token of a sequence, relative to no retrieval (>= 1)."""
    if retrievals == 0:
        return 1.0
    if not 1 <= retrieval_batch <= decode_batch:
        raise FannsError(
            f"iterative retrieval batch {retrieval_batch} with decode batch {decode_batch}",
            hint="batch.iterative must be between 1 and the decode batch (paused sequences come from the decode pool)",
        )
    if retrievals >= generated:
        raise FannsError(
            f"{retrievals} retrievals during {generated} generated tokens",
            hint="retrieval.per_request - 1 retrievals happen while decoding, at distinct tokens: fewer than generated",
        )
    rng = np.random.default_rng(seed)
    b = decode_batch
    points = np.stack([_positions(rng, retrievals, generated) for _ in range(b)])
    pos = np.zeros(b, dtype=np.int64)
    nxt = np.zeros(b, dtype=np.int64)  # index of the next retrieval point
    start = np.zeros(b, dtype=np.int64)
    waiting_since = np.full(b, -1, dtype=np.int64)  # step the slot paused at, -1: not waiting for a batch
    resume_at = np.full(b, -1.0)  # step its batch resumes after, -1: not in a batch
    discard, done = 2 * b, []
    step = 0
    while len(done) < sequences + discard:
        # jump to the next event: an active slot reaching its next retrieval point or its last
        # token, or a batch resuming (decode steps between events change nothing else)
        active = (waiting_since < 0) & (resume_at < 0)
        rows = np.nonzero(active)[0]
        target = np.minimum(points[rows, nxt[rows]], generated)
        flying = resume_at[resume_at >= 0]
        dt = min(
            int((target - pos[rows]).min()) if rows.size else 1 << 62,
            int(np.ceil(flying.min() - step)) if flying.size else 1 << 62,
        )
        pos[rows] += dt
        step += dt
        hit = rows[pos[rows] == points[rows, nxt[rows]]]
        nxt[hit] += 1
        waiting_since[hit] = step
        for i in rows[pos[rows] >= generated]:
            done.append(step - start[i])
            pos[i], nxt[i], start[i] = 0, 0, step
            points[i] = _positions(rng, retrievals, generated)
        waiting = np.nonzero(waiting_since >= 0)[0]
        if waiting.size >= retrieval_batch:
            order = waiting[np.argsort(waiting_since[waiting], kind="stable")]
            for j in range(order.size // retrieval_batch):
                chosen = order[j * retrieval_batch : (j + 1) * retrieval_batch]
                waiting_since[chosen] = -1
                resume_at[chosen] = step + delay_steps
        resume_at[(resume_at >= 0) & (resume_at <= step)] = -1.0
    return float(np.mean(done[discard:])) / generated
