"""Every buffer lands in the bank the project assigns it — connectivity.cfg (HLS) or rtl/ports.json
(RTL) — in the plan every backend executes, in the model's device memory after a load, and in
the placement the pynq backend would execute on a board (checked without one: the overlay's
memory names are the input). The HLS register map is the Vitis s_axilite layout."""

import json
import re
import sys
import types

import numpy as np
import pytest

import fanns.driver
from fanns.codegen.ivfpq.hls import TestQueries, generate_hls
from fanns.codegen.ivfpq.rtl import generate_rtl
from fanns.driver.ivfpq.accelerator import Accelerator
from fanns.driver.ivfpq.plan import Interface
from fanns.driver.ivfpq.project import Project
from fanns.driver.ivfpq.pynq_backend import PynqBackend, placement
from fanns.driver.project import Bank
from fanns.driver.pynq_overlay import place
from fanns.errors import FannsError
from fanns.index.ivfpq_synthetic import random_format, random_index
from fanns.model.ivfpq.pinned import pinned_design


def connectivity_banks(project):
    """kernel argument -> (memory, channel), read straight from connectivity.cfg."""
    text = (project / "connectivity.cfg").read_text()
    out = {}
    for arg, mem, ch in re.findall(r"^sp=fanns_ivfpq_1\.(\w+):(HBM|DDR)\[(\d+)\]$", text, re.M):
        out[arg] = ({"HBM": "hbm", "DDR": "ddr4"}[mem], int(ch))
    return out


def port_banks(project):
    """buffer -> (memory, channel) from ports.json: the I/O port serves ROM images and I/O buffers
    (with the step-wise mode's cell lists and seeds)."""
    ports = json.loads((project / "rtl" / "ports.json").read_text())["ports"]
    manifest = json.loads((project / "images" / "manifest.json").read_text())
    io = ports["m_axi_io"]
    out = {name: (io["memory"], io["channel"]) for name in ("queries", "results", "cells", "seeds")}
    for img in manifest["images"]:
        port = ports["m_axi_io"] if img["use"] == "rom" else ports[f"m_axi_pq{img['name'].rsplit('_', 1)[1]}"]
        out[img["name"]] = (port["memory"], port["channel"])
    return out


@pytest.mark.parametrize("kind", ["hls", "rtl"])
def test_buffers_land_in_the_assigned_banks(projects, kind):
    folder = getattr(projects, kind)
    expected = connectivity_banks(folder) if kind == "hls" else port_banks(folder)
    acc = fanns.driver.open(folder, batch=8)
    planned = {buf.name: (buf.bank.memory, buf.bank.channel) for buf, _ in acc.plan()}
    assert planned == expected
    assert len(set(expected.values())) > 1  # the design spreads its buffers over several channels
    acc.load()
    dev = acc.backend
    for name, (memory, channel) in expected.items():
        addr = acc.addresses[name]
        assert (Bank(memory, channel), addr) in dev.memory  # allocated in that bank
        assert dev.decode(acc.iface.address_register(name)) == addr  # and its register points there
        assert addr % 4096 == 0 and addr > 0
    images = {img.name: img.data for img in acc.project.images.images}
    for name, data in images.items():
        assert dev.memory[(Bank(*expected[name]), acc.addresses[name])].view(np.uint8)[: len(data)].tobytes() == data


def test_images_on_ports_of_their_own_land_in_their_channels(tmp_path):
    """BuildLUT's fetched centroids (`m_axi_lutc`) and a streamed OPQ matrix (`m_axi_opq`): each
    image in its port's channel, its register (`lutc_addr`, `opq_addr`) pointing at it."""
    data = random_index(nlist=12, n=900, d=32, m=8, opq=True)
    design = pinned_design(
        data, random_format(32, 8), nprobe=3, k=5, lut=(2, 16, "memory"), pq=(3, 2), opq_storage="stream"
    )
    test = TestQueries(np.zeros((2, 32), np.float32), np.zeros((2, 5), np.int64))
    generate_rtl(design, data, test, tmp_path / "p")
    ports = json.loads((tmp_path / "p" / "rtl" / "ports.json").read_text())["ports"]
    acc = fanns.driver.open(tmp_path / "p", batch=4)
    planned = {buf.name: buf.bank for buf, _ in acc.plan()}
    acc.load()
    for image, port, register in (
        ("lut_centroids", "m_axi_lutc", "lutc_addr"),
        ("opq_matrix", "m_axi_opq", "opq_addr"),
    ):
        bank = Bank(ports[port]["memory"], ports[port]["channel"])
        assert planned[image] == bank and bank.channel > 0
        assert acc.iface.address_register(image) == register
        assert acc.backend.decode(register) == acc.addresses[image]
        assert (bank, acc.addresses[image]) in acc.backend.memory


def test_hls_register_map_is_the_vitis_layout(projects):
    iface = Interface(Project.open(projects.hls))
    args = [a["name"] for a in json.loads((projects.hls / "fanns_project.json").read_text())["args"]]
    assert args[:2] == ["queries", "results"]
    offsets = {r.name: r.offset for r in iface.regmap.registers}
    assert offsets["ap_start"] == offsets["ap_done"] == 0 and iface.done_mask == 0b10 and iface.start_word == 1
    for i, name in enumerate(args):  # 64-bit pointers: two data words and a reserved word each
        assert offsets[name] == 0x10 + 12 * i
    assert offsets["nq"] == 0x10 + 12 * len(args) and offsets["load"] == offsets["nq"] + 8
    assert iface.encode("results", 0x1_2345_6000) == [(0x1C, 0x2345_6000), (0x20, 1)]
    assert iface.clear_word is None  # ap_done clears on read


def test_rtl_register_values_come_from_the_generated_regmap(projects):
    iface = Interface(Project.open(projects.rtl))
    regmap = json.loads((projects.rtl / "rtl" / "regmap.json").read_text())
    reg = {r["name"]: r for r in regmap["registers"]}
    assert iface.encode("query_addr", 0x3_0000_1000) == [
        (reg["query_addr"]["offset"], 0x1000),
        (reg["query_addr"]["offset"] + 4, 3),
    ]
    assert iface.run_values(7, 2, 5, load=False) == {"nq": 7, "nprobe": 2, "k": 5, "mode": 0}
    assert iface.run_values(7, 2, 5, load=False, mode=1)["mode"] == 1  # a step-wise run
    # the Xilinx RTL-kernel block protocol: start at bit 0, ap_done at bit 1 cleared by reading
    assert iface.control_offset == 0 and iface.start_word == 1 and iface.done_mask == 0b10
    assert iface.clear_word is None and reg["ap_done"]["access"] == "COR"
    args = [r for r in regmap["registers"] if r["offset"] >= 0x10 and r["access"] == "RW"]
    assert [r["name"] for r in args[:6]] == ["nq", "nprobe", "k", "mode", "query_addr", "result_addr"]
    assert [r["offset"] for r in args[:6]] == [0x10, 0x14, 0x18, 0x1C, 0x20, 0x28]
    assert all(r["offset"] % 8 == 0 for r in args if r["width"] == 64)
    assert min(r["offset"] for r in regmap["registers"] if r["access"] == "RO" and r["offset"] >= 0x10) > max(
        r["offset"] for r in args
    )  # status and counters after every kernel argument
    assert iface.cycle_registers == (
        "cycles",
        "load_cycles",
        "first_cycles",
        "last_cycles",
    )


HBM_NAMES = [f"HBM[{i}]" for i in range(32)] + ["PLRAM[0]"]


@pytest.mark.parametrize("kind", ["hls", "rtl"])
def test_pynq_placement_of_an_hbm_board(projects, kind):
    folder = getattr(projects, kind)
    iface = Interface(Project.open(folder))
    expected = connectivity_banks(folder) if kind == "hls" else port_banks(folder)
    assert placement(iface, HBM_NAMES) == {name: f"HBM[{ch}]" for name, (_, ch) in expected.items()}
    older = [f"HBM{i}" for i in range(32)]  # overlays that name the pseudo-channels HBM0..HBM31
    assert placement(iface, older) == {name: f"HBM{ch}" for name, (_, ch) in expected.items()}


def test_pynq_refuses_a_board_without_the_banks(projects):
    iface = Interface(Project.open(projects.hls))
    needed = sorted({ch for _, ch in connectivity_banks(projects.hls).values()})
    with pytest.raises(FannsError, match=rf"no memory bank .*hbm\[{needed[-1]}\].*it has: bank0, bank1") as err:
        placement(iface, ["bank0", "bank1"])
    assert "u55c" in err.value.hint
    with pytest.raises(FannsError, match=rf"hbm\[{needed[-1]}\]"):
        placement(iface, [f"HBM[{i}]" for i in range(needed[-1])])


def test_pynq_placement_of_a_ddr_board(tmp_path):
    data = random_index(nlist=12, n=900, d=32, m=8)
    design = pinned_design(data, random_format(32, 8), board="u250", nprobe=3, k=5, pq=(4, 2))
    generate_hls(design, data, TestQueries(np.zeros((2, 32), np.float32), np.zeros((2, 5), np.int64)), tmp_path / "p")
    iface = Interface(Project.open(tmp_path / "p"))
    expected = connectivity_banks(tmp_path / "p")
    assert {b.memory for b in iface.banks.values()} == {"ddr4"}
    assert placement(iface, [f"bank{i}" for i in range(4)]) == {name: f"bank{ch}" for name, (_, ch) in expected.items()}
    assert placement(iface, [f"DDR[{i}]" for i in range(4)]) == {
        name: f"DDR[{ch}]" for name, (_, ch) in expected.items()
    }


class FakeOverlay:
    """Stands in for pynq.Overlay to record what the backend does before touching a board."""

    def __init__(self, path, registers):
        self.mem_dict = {name: {} for name in HBM_NAMES}
        self.ip_dict = {"fanns_ivfpq_1": {"registers": registers}}
        self.fanns_ivfpq_1 = types.SimpleNamespace()
        for name in HBM_NAMES:
            setattr(self, re.sub(r"\W", "", name), name)


def test_pynq_backend_allocates_in_the_planned_banks_and_checks_registers(projects, monkeypatch, tmp_path):
    """The backend's own code with a stand-in pynq module: each pynq.allocate gets the target of
    the buffer's bank; an xclbin whose register offsets differ from the plan is refused."""
    iface = Interface(Project.open(projects.hls))
    good = {r.name: {"address_offset": r.offset} for r in iface.regmap.registers if not r.name.startswith("ap_")}
    calls = []

    class FakeBuffer(np.ndarray):
        device_address = 0x1000

    def allocate(shape, dtype, target=None):
        calls.append(target)
        return np.zeros(shape, dtype).view(FakeBuffer)

    xclbin = tmp_path / "k.xclbin"
    xclbin.write_bytes(b"")
    for registers, ok in ((good, True), ({**good, "nq": {"address_offset": 0x100}}, False)):
        fake = types.SimpleNamespace(Overlay=lambda path, regs=registers: FakeOverlay(path, regs), allocate=allocate)
        monkeypatch.setitem(sys.modules, "pynq", fake)
        backend = PynqBackend(bitstream=xclbin)
        if not ok:
            with pytest.raises(FannsError, match="register nq is at 256"):
                Accelerator(Project.open(projects.hls), backend)
            continue
        acc = Accelerator(Project.open(projects.hls), backend, batch=8)
        for buf, _ in acc.plan():
            backend.allocate(buf)
        expected = connectivity_banks(projects.hls)
        assert calls == [f"HBM[{expected[buf.name][1]}]" for buf, _ in acc.plan()]


def test_pynq_places_host_memory_buffers_in_the_overlays_host_bank():
    """A host-memory design's lists (bank HOST[0], docs/host_tier.md) go to the overlay's host
    memory; an overlay without one is refused by name."""
    banks = {"pq_codes_0": Bank("host", 0), "pq_cache_0": Bank("hbm", 0)}
    assert place(banks, ["HBM[0]", "HOST[0]"], "u55c") == {"pq_codes_0": "HOST[0]", "pq_cache_0": "HBM[0]"}
    assert place(banks, ["HBM0", "HOST0"], "u55c") == {"pq_codes_0": "HOST0", "pq_cache_0": "HBM0"}
    with pytest.raises(FannsError, match=r"no memory bank host\[0\] for pq_codes_0"):
        place(banks, ["HBM[0]"], "u55c")
