"""The longest combinational path of a whole IVF-PQ accelerator does not grow with its PE and stream
counts (`fanns.hdl.verilog.comb_path`).

Why: a path that grows with a count breaks at some count the DSE offers. The IVFDist array's ready
once rippled back through every PE: at 256 PEs a 1,046-net path, deeper than Amaranth's recursive
loop check can walk (issue 46: `fanns generate-rtl` ended in a RecursionError), and a path no clock
survives. Two designs that differ only in every count (IVFDist PEs = SelCells streams, BuildLUT PEs,
PQDist PEs = SelK streams, PQ channels) must have paths of the same length.

The path is measured on the flat design even while the design is being converted with its PEs and
FIFOs as modules of their own (`fanns.hdl.modules.ModuleLibrary`): the ripple ran through the PEs'
module instances, which would otherwise cut it.
"""

from fanns.arch.ivfpq.hw import IvfPqHw
from fanns.arch.ivfpq.top import IvfPqAccelerator
from fanns.boards import load_board
from fanns.hdl.modules import ModuleLibrary
from fanns.hdl.verilog import comb_path, to_verilog
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design

SMALL = {"ivf": (2, 4, "bram"), "lut": (2, 4, "bram"), "pq": (2, 1)}
LARGE = {"ivf": (6, 4, "bram"), "lut": (5, 4, "bram"), "pq": (6, 3)}


def _path(counts: dict):
    """HSMPQG in both selection stages: it holds an HPQ (AHPQ is an HPQ with shorter queues)."""
    data = random_index(nlist=32, n=900, d=32, m=8)
    design = pinned_design(data, random_format(32, 8), nprobe=1, k=1, sel_cells="hsmpqg", sel_k="hsmpqg", **counts)
    return comb_path(IvfPqAccelerator(IvfPqHw.from_design(design, load_board("u55c"))))


def test_longest_combinational_path_does_not_grow_with_the_counts():
    small = _path(SMALL)
    with ModuleLibrary(to_verilog):  # as while a kernel is converted: measured flat all the same
        large = _path(LARGE)
    assert large.nets == small.nets, f"{small.nets} -> {large.nets} nets; along {large.where()}"
    assert small.nets < 100  # a few FIFOs' and forks' handshakes
