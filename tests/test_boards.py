"""Board files: every shipped board validates; schema errors name the file and the key."""

import copy

import pytest
import yaml

from fanns.boards import NO_CLOCK_SOURCE, Clock, list_boards, load_board
from fanns.cli import main
from fanns.errors import FannsError
from fanns.pe import registry
from fanns.pe.calibration_table import load_table
from fanns.pe.timing_table import load_timing_table
from fanns.resources import Resources

LATENCY = {"clock_mhz": 450, "page_hit": 48, "page_closed": 55, "page_miss": 62, "source": "a paper"}
REQUIRED_BOARDS = {"u55c", "u280", "u250", "u50", "zcu104", "zcu102", "kv260", "pynq-z2"}


def test_shipped_boards_load_and_are_consistent():
    boards = {b.name: b for b in list_boards()}
    assert REQUIRED_BOARDS <= set(boards)
    for b in boards.values():
        assert b.total.fits(b.device_total)
        assert all(v > 0 for v in (b.total.lut, b.total.ff, b.total.bram18, b.total.dsp)), b.name
        assert b.memory and all(m.count > 0 and m.bandwidth_gbps > 0 for m in b.memory)
        assert any(s.split()[0].startswith(("DS", "UG", "TUL")) for s in b.sources), b.name
    u55c = boards["u55c"]
    assert len(u55c.slrs) == 3
    assert u55c.device_total == Resources(lut=1303680, ff=2607360, bram18=4032, uram=960, dsp=9024)
    hbm = u55c.channels("hbm")[0]
    assert hbm.count == 32 and hbm.count * hbm.capacity_gb == 16
    assert hbm.total_bandwidth_gbps == pytest.approx(460)
    assert u55c.budget(0.6).lut == pytest.approx(0.6 * u55c.total.lut)
    assert boards["pynq-z2"].family == "xc7" and boards["pynq-z2"].pynq


def test_every_shipped_board_family_has_every_pe_calibrated():
    """The DSE prices every PE from its board family's yosys calibration, so a shipped board whose
    family lacks a table gets no design at all (fuzz draw #7: pynq-z2, xc7)."""
    families = {b.family for b in list_boards()}
    for family in sorted(families):
        table = load_table(family)
        assert set(registry()) <= set(table.pes), (family, sorted(set(registry()) - set(table.pes)))
        for name, fit in table.pes.items():
            assert f"-family {family}" in fit.source and len(fit.points) >= 3, (family, name)


def test_every_shipped_board_family_has_every_pe_timed():
    """The RTL clock estimate prices every PE from its family's timing table (docs/timing.md): a
    PE without one leaves designs uncovered, so a PE added without its table fails here until
    measured (`fanns calibrate --timing --points 3 --family F --pe NAME`)."""
    for family in sorted({b.family for b in list_boards()}):
        table = load_timing_table(family)
        assert set(registry()) <= set(table), (family, sorted(set(registry()) - set(table)))
        for name, fit in table.items():
            assert f"-family {family}" in fit.source and "delay model" in fit.source, (family, name)
            assert len(fit.points) >= 3 and all(p["timing"]["reg_to_reg"] > 0 for p in fit.points), (family, name)


def test_memory_latency_converts_through_nanoseconds(tmp_path, u50_yaml):
    """A published latency (cycles of the measuring clock) becomes whole cycles of the design
    clock, rounded up; the shipped Alveo boards carry Shuhai's U280 measurement per memory kind."""
    data = copy.deepcopy(u50_yaml)
    data["memory"][0]["latency"] = dict(LATENCY)
    lat = load_board(str(_write(tmp_path, data))).memory[0].latency
    assert lat.ns("page_hit") == pytest.approx(106.67, abs=0.01) and lat.ns() == pytest.approx(137.78, abs=0.01)
    assert (lat.cycles_at(450), lat.cycles_at(200), lat.cycles_at(300, "page_hit")) == (62, 28, 32)
    with pytest.raises(FannsError, match="page_open"):
        lat.cycles_at(200, "page_open")
    u280 = load_board("u280")
    hbm, ddr = u280.channels("hbm")[0].latency, u280.channels("ddr4")[0].latency
    assert "Shuhai" in hbm.source and "Shuhai" in ddr.source
    assert all(hbm.ns(a) > ddr.ns(a) for a in ("page_hit", "page_closed", "page_miss"))
    u250 = load_board("u250").memory[0].latency  # same DDR4-2400 channels and controller as the U280's
    assert (u250.clock_mhz, u250.page_hit, u250.page_closed, u250.page_miss) == (300, 22, 27, 32)
    assert (ddr.clock_mhz, ddr.page_hit, ddr.page_closed, ddr.page_miss) == (300, 22, 27, 32)


def test_budget_rejects_bad_cap():
    with pytest.raises(FannsError):
        load_board("u50").budget(1.5)


@pytest.fixture
def u50_yaml():
    return yaml.safe_load(load_board("u50").path.read_text())


def _write(tmp_path, data):
    p = tmp_path / "myboard.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d.pop("clock_mhz"), "clock_mhz"),
        (lambda d: d["slrs"]["SLR0"].update(lut=-5), "slrs.SLR0.lut"),
        (lambda d: d["slrs"]["SLR0"].update(dsp="many"), "slrs.SLR0.dsp"),
        (lambda d: d["memory"][0].update(bandwidth_gbps=-1.0), "memory[0].bandwidth_gbps"),
        (lambda d: d["memory"][0].pop("port_bits"), "port_bits"),
        (lambda d: d["memory"][0].update(speed=3), "speed"),
        (lambda d: d.update(pynq="yes"), "pynq"),
        (lambda d: d.update(family="xc9"), "family"),
        (lambda d: d["shell"].update(SLR7=d["shell"]["SLR0"]), "shell.SLR7"),
        (lambda d: d.update(sources=[]), "sources"),
        (lambda d: d["memory"][0].update(latency={"clock_mhz": 450}), "page_closed"),
        (lambda d: d["memory"][0].update(latency=dict(LATENCY, page_hit=70)), "memory[0].latency"),
        (lambda d: d["memory"][0].update(latency=dict(LATENCY, clock_mhz=0)), "memory[0].latency.clock_mhz"),
        (lambda d: d["memory"][0].update(latency=dict(LATENCY, page_miss=6.5)), "memory[0].latency.page_miss"),
    ],
)
def test_schema_errors_name_file_and_key(tmp_path, u50_yaml, mutate, key):
    data = copy.deepcopy(u50_yaml)
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(FannsError) as info:
        load_board(str(path))
    assert str(path) in str(info.value) and key in str(info.value)


def test_user_board_file_by_path(tmp_path, u50_yaml):
    data = copy.deepcopy(u50_yaml)
    data["name"] = "my-u50"
    data["clock_mhz"] = 250
    del data["clock_source"]
    board = load_board(str(_write(tmp_path, data)))
    assert board.name == "my-u50" and board.clock_mhz == 250
    assert board.clock == Clock(250, "board", NO_CLOCK_SOURCE)  # a user's file may name no source: it says so


def test_every_shipped_board_clock_names_its_source():
    """The default clock is a published build of a comparable design, not the platform maximum:
    the Alveo cards at FANNS's and Falcon's 140 MHz, the Zynq boards at their PL clock."""
    boards = {b.name: b for b in list_boards()}
    for b in boards.values():
        assert b.clock_source != NO_CLOCK_SOURCE and b.clock.origin == "board", b.name
    for name in ("u55c", "u280", "u50"):
        assert boards[name].clock_mhz == 140 and "Table 6.3" in boards[name].clock_source
    assert boards["u250"].clock_mhz == 140 and "--kernel_frequency 140" in boards["u250"].clock_source
    for name in ("zcu104", "zcu102", "kv260", "pynq-z2"):
        assert boards[name].clock_mhz == 100 and "100 MHz" in boards[name].clock_source
    text = boards["u55c"].clock.describe()
    assert text.startswith("140 MHz (board default: FANNS on the Alveo U55C")
    assert Clock.user(250).describe() == "250 MHz (--clock: given on the command line)"


def test_unknown_board_lists_known():
    with pytest.raises(FannsError) as info:
        load_board("u9000")
    assert "u55c" in str(info.value)


def test_cli(capsys, tmp_path):
    assert main(["boards"]) == 0
    out = capsys.readouterr().out
    for name in REQUIRED_BOARDS:
        assert name in out
    assert "u250: 140 MHz: U250 builds of the FANNS/Falcon accelerators" in out
    assert main(["boards", "u55c"]) == 0
    out = capsys.readouterr().out
    assert "DS978" in out and "clock: 140 MHz (board default: FANNS on the Alveo U55C" in out
    assert main(["boards", str(tmp_path / "none.yaml")]) == 2
