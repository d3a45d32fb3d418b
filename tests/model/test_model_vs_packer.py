"""The model's memory view equals what the packer (`fanns.images.ivfpq`) really lays out:
bytes on the busiest PQ channel (capacity check) and beats per list (bandwidth model)."""

import numpy as np
import pytest

from fanns.images import ivfpq as ivfpq_images
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq import stages as stage_model
from fanns.model.ivfpq.pinned import pinned_design

CASES = [
    ("u55c", 32, 8, (4, 2)),
    ("u55c", 32, 8, (7, 3)),
    ("u55c", 32, 4, (5, 1)),
    ("u250", 32, 8, (11, 2)),  # io + 2 PQ channels + LUT centroids: the 4 DDR4 channels
    ("zcu104", 64, 32, (5, 2)),
]


@pytest.mark.parametrize("board,d,m,pq", CASES, ids=str)
def test_channel_bytes_and_list_beats_match_the_images(board, d, m, pq):
    data = random_index(d=d, m=m)
    design = pinned_design(data, random_format(d, m), board=board, nprobe=3, k=7, pq=pq)
    images = ivfpq_images.pack(design, data)
    st = design.stages.pq_dist
    sizes = np.diff(data.offsets)
    busiest = max(st.pes_per_channel())
    biggest = max(img.nbytes for img in images.by_use("pq_codes"))
    assert biggest == stage_model.index_bytes_per_channel(m, sizes, st.pes, busiest, st.port_bits)
    packing = stage_model.Packing(m, st.port_bits)
    for _, layout in ivfpq_images.pq_layouts(design):
        for n in sizes:
            assert layout.list_beats(int(n)) == len(layout.channel_pes) * packing.beats(int(n), st.pes)
            assert len(layout.schedule(layout.share_items(int(n)))) == layout.list_beats(int(n))
