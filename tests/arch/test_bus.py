"""The AXI burst rule (reference): coverage, 4 KiB boundaries, burst caps, byte enables."""

from hypothesis import given, settings
from hypothesis import strategies as st

from fanns.hdl.bus import AXI_4K, beat_keeps, split_bursts, transfer_beats


@settings(max_examples=400, deadline=None)
@given(
    addr=st.integers(0, 1 << 40),
    nbytes=st.integers(0, 70_000),
    beat_bytes=st.sampled_from([4, 8, 16, 32, 64, 128]),
    max_burst=st.sampled_from([1, 2, 16, 64, 256]),
)
def test_bursts_cover_the_transfer_without_crossing_4k(addr, nbytes, beat_bytes, max_burst):
    bursts = split_bursts(addr, nbytes, beat_bytes, max_burst)
    cur = addr - addr % beat_bytes
    for a, n in bursts:
        assert a == cur and a % beat_bytes == 0
        assert 1 <= n <= min(max_burst, AXI_4K // beat_bytes)
        assert a // AXI_4K == (a + n * beat_bytes - 1) // AXI_4K  # inside one 4 KiB page
        cur += n * beat_bytes
    assert sum(n for _, n in bursts) == transfer_beats(addr, nbytes, beat_bytes)
    keeps = beat_keeps(addr, nbytes, beat_bytes)
    assert len(keeps) == transfer_beats(addr, nbytes, beat_bytes)
    assert sum(bin(k).count("1") for k in keeps) == nbytes
    if keeps:  # the kept bytes are exactly [addr, addr + nbytes)
        base = addr - addr % beat_bytes
        first = next(i for i in range(beat_bytes) if keeps[0] >> i & 1)
        last = max(i for i in range(beat_bytes) if keeps[-1] >> i & 1)
        assert base + first == addr and base + (len(keeps) - 1) * beat_bytes + last == addr + nbytes - 1


def test_bursts_are_as_long_as_allowed():
    assert split_bursts(0, 4096 * 3, 64, 256) == [(0, 64), (4096, 64), (8192, 64)]
    assert split_bursts(4096 - 128, 256, 64, 256) == [(4096 - 128, 2), (4096, 2)]
    assert split_bursts(5, 3, 64, 16) == [(0, 1)]
    assert split_bursts(100, 0, 64, 16) == []
