"""Register maps: validation, layout, and the Markdown/JSON renderings the driver and users read."""

import json

import pytest

from fanns.errors import FannsError
from fanns.hdl.regmap import Register, RegMap, RegMapBuilder, control_block


def example() -> RegMap:
    b = RegMapBuilder("ivfpq", registers=list(control_block()), description="IVF-PQ accelerator")
    b.add("nprobe", 16, description="cells probed per query")
    b.add("codes_base", 64, description="byte address of the PQ codes")
    b.add("errors", 4, "W1C")
    return b.build()


def test_builder_lays_registers_out_after_the_control_block():
    rm = example()
    assert rm["nprobe"].offset == 0x10 and rm["codes_base"].offset == 0x14 and rm["errors"].offset == 0x1C
    assert rm.word_offsets() == [0x0, 0x8, 0xC, 0x10, 0x14, 0x18, 0x1C]


def test_json_round_trip_and_content():
    rm = example()
    data = json.loads(rm.to_json())
    assert data["bus"] == "axi4-lite" and data["data_width"] == 32 and data["addr_width"] == 12
    base = next(r for r in data["registers"] if r["name"] == "codes_base")
    assert base["words"] == [
        {"offset": 0x14, "bit": 0, "reg_bit": 0, "bits": 32},
        {"offset": 0x18, "bit": 0, "reg_bit": 32, "bits": 32},
    ]
    assert RegMap.from_json(rm.to_json()) == rm
    assert rm.to_json() == RegMap.from_json(rm.to_json()).to_json()  # deterministic


def test_markdown_lists_every_word_of_every_register():
    md = example().to_markdown()
    assert "| 0x000 | 0 | `ap_start` | PULSE |" in md
    assert "| 0x000 | 1 | `ap_done` | W1C |" in md
    assert "`cycles[63:32]`" in md and "`codes_base[31:0]`" in md
    assert "read low first" in md


@pytest.mark.parametrize(
    "registers,message",
    [
        ((Register("a", 0, 8), Register("b", 0, 8, bit=4)), "overlaps"),
        ((Register("a", 2, 8),), "multiple of 4"),
        ((Register("a b", 0, 8),), "identifier"),
        ((Register("a", 0, 8, reset=256),), "does not fit"),
        ((Register("a", 0, 8, "RO", reset=1),), "no state"),
        ((Register("a", 0, 40, bit=8),), "crosses a word"),
        ((Register("a", 0, 8, "W1C"), Register("a_set", 4, 8)), "clashes"),
        ((Register("a", 0, 8, "XX"),), "unknown access"),
        ((Register("s_axil", 0, 8),), "reserved"),
        ((Register("a", 0x1000, 8),), "address space"),
    ],
)
def test_bad_maps_raise_clear_errors(registers, message):
    with pytest.raises(FannsError, match=message):
        RegMap("bad", registers)


def test_unknown_register_key_is_reported():
    with pytest.raises(FannsError, match="unknown keys"):
        RegMap.from_dict({"name": "x", "registers": [{"name": "a", "offset": 0, "acess": "RW"}]})
