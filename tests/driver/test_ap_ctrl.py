"""The ap_ctrl_hs block protocol as the RTL kernel exposes it, exercised in simulation through the
calls a board makes (the driver's rtl-sim backend: AXI4-Lite reads and writes of the register
words `rtl/regmap.json` places, the same `Interface` a pynq board is programmed by): ap_idle
before, during and after a run; ap_done and ap_ready set at the end and cleared by the read that
sees them; no restart with auto_restart off, a restart with it on; GIE/IER/ISR (ISR toggles on
write) and the `interrupt` condition GIE & ISR."""

import pytest

import fanns.driver


@pytest.mark.slow
@pytest.mark.long  # one more IVF-PQ design of a kind CI simulates
def test_block_protocol_through_the_drivers_register_calls(projects, build_root):
    with fanns.driver.open(projects.rtl, backend="rtl-sim", batch=2, build_dir=build_root / "rtl") as acc:
        dev, iface, rm = acc.backend, acc.iface, acc.iface.regmap
        ctrl = iface.control_offset
        bit = {name: 1 << rm[name].bit for name in ("ap_start", "ap_done", "ap_idle", "ap_ready", "auto_restart")}

        def word(name: str) -> int:
            return dev.read_register(rm[name].offset)

        def write(name: str, value: int) -> None:
            for off, w in iface.encode(name, value):
                dev.write_register(off, w)

        # the index load: allocate (the bench builds its memories from these), start, poll until
        # ap_done, whose read clears it — as on a board
        acc.load()
        after = dev.read_register(ctrl)
        assert after & bit["ap_idle"] and not after & (bit["ap_done"] | bit["ap_ready"] | bit["ap_start"])

        # one run by hand: busy while it runs, done and ready once, cleared by the read that saw them
        write("gie", 1)
        write("ier", 0b11)
        for name, value in iface.run_values(2, acc.nprobe, acc.k, load=False).items():
            write(name, value)
        dev.write_register(ctrl, iface.start_word)
        assert not dev.read_register(ctrl) & bit["ap_idle"]
        seen = 0
        for _ in range(10_000):
            seen = dev.read_register(ctrl)
            if seen & bit["ap_done"]:
                break
        assert seen & bit["ap_done"] and seen & bit["ap_ready"] and seen & bit["ap_idle"]
        assert not dev.read_register(ctrl) & (bit["ap_done"] | bit["ap_ready"])  # clear on read
        assert word("isr") == 0b11  # both enabled events happened: interrupt = GIE & ISR is high
        dev.write_register(rm["isr"].offset, 0b01)  # toggle-on-write
        assert word("isr") == 0b10
        dev.write_register(rm["isr"].offset, 0b10)
        assert word("isr") == 0

        # auto_restart off: the core stays idle, nothing moves
        progress = word("progress")
        for _ in range(3):
            assert dev.read_register(ctrl) & bit["ap_idle"]
        assert word("progress") == progress

        # auto_restart on: the core starts again by itself after a run; off again, it stops
        dev.write_register(ctrl, bit["auto_restart"] | iface.start_word)
        dev.wait(ctrl, iface.done_mask, 60.0)
        restarted = dev.read_register(ctrl)
        assert restarted & bit["auto_restart"] and not restarted & bit["ap_idle"]
        dev.write_register(ctrl, 0)
        dev.wait(ctrl, iface.done_mask, 60.0)
        assert dev.read_register(ctrl) & bit["ap_idle"]
        assert acc._read("status") & 0b110 == 0
