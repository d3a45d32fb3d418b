"""The processing systems of the Zynq boards, as a Vivado block design names their parts.

Why a table: a board file names its PS (`block_design.ps`), the HP port of every memory channel,
the PL clock and the control master; these names reach generated Tcl, so they are checked on
load against the PS's own names here, and the block-design generator (`fanns.codegen.block_design`)
takes from here the CONFIG property that enables each port and the pin that clocks it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PsPort:
    """A PS AXI port: the CONFIG property that enables it, the one setting its data width (None:
    fixed), the PS pin clocking it, and for a master the base of the address window it serves."""

    enable: str
    width: str | None
    clock: str
    window: int = 0


@dataclass(frozen=True)
class PsKind:
    """What a Vivado block design needs to know of a processing-system IP (Vivado's own names)."""

    vlnv: str
    preset_rule: str
    hp_ports: dict[str, PsPort]
    hp_widths: tuple[int, ...]
    masters: dict[str, PsPort]
    clocks: dict[str, tuple[str, str, str, str]]
    """PL clock pin -> (enable property, MHz property, the MHz reached (read-only), its reset pin)."""


PS_KINDS = {
    "zynq_ultra_ps_e": PsKind(
        vlnv="xilinx.com:ip:zynq_ultra_ps_e",
        preset_rule="xilinx.com:bd_rule:zynq_ultra_ps_e",
        hp_ports={
            "S_AXI_HPC0_FPD": PsPort("PSU__USE__S_AXI_GP0", "PSU__SAXIGP0__DATA_WIDTH", "saxihpc0_fpd_aclk"),
            "S_AXI_HPC1_FPD": PsPort("PSU__USE__S_AXI_GP1", "PSU__SAXIGP1__DATA_WIDTH", "saxihpc1_fpd_aclk"),
            "S_AXI_HP0_FPD": PsPort("PSU__USE__S_AXI_GP2", "PSU__SAXIGP2__DATA_WIDTH", "saxihp0_fpd_aclk"),
            "S_AXI_HP1_FPD": PsPort("PSU__USE__S_AXI_GP3", "PSU__SAXIGP3__DATA_WIDTH", "saxihp1_fpd_aclk"),
            "S_AXI_HP2_FPD": PsPort("PSU__USE__S_AXI_GP4", "PSU__SAXIGP4__DATA_WIDTH", "saxihp2_fpd_aclk"),
            "S_AXI_HP3_FPD": PsPort("PSU__USE__S_AXI_GP5", "PSU__SAXIGP5__DATA_WIDTH", "saxihp3_fpd_aclk"),
        },
        hp_widths=(32, 64, 128),
        masters={
            "M_AXI_HPM0_FPD": PsPort(
                "PSU__USE__M_AXI_GP0", "PSU__MAXIGP0__DATA_WIDTH", "maxihpm0_fpd_aclk", 0xA000_0000
            ),
            "M_AXI_HPM1_FPD": PsPort(
                "PSU__USE__M_AXI_GP1", "PSU__MAXIGP1__DATA_WIDTH", "maxihpm1_fpd_aclk", 0xB000_0000
            ),
            "M_AXI_HPM0_LPD": PsPort(
                "PSU__USE__M_AXI_GP2", "PSU__MAXIGP2__DATA_WIDTH", "maxihpm0_lpd_aclk", 0x8000_0000
            ),
        },
        clocks={
            f"pl_clk{i}": (
                f"PSU__FPGA_PL{i}_ENABLE",
                f"PSU__CRL_APB__PL{i}_REF_CTRL__FREQMHZ",
                f"PSU__CRL_APB__PL{i}_REF_CTRL__ACT_FREQMHZ",
                f"pl_resetn{i}",
            )
            for i in range(4)
        },
    ),
    "processing_system7": PsKind(
        vlnv="xilinx.com:ip:processing_system7",
        preset_rule="xilinx.com:bd_rule:processing_system7",
        hp_ports={
            **{
                f"S_AXI_HP{i}": PsPort(f"PCW_USE_S_AXI_HP{i}", f"PCW_S_AXI_HP{i}_DATA_WIDTH", f"S_AXI_HP{i}_ACLK")
                for i in range(4)
            },
            "S_AXI_ACP": PsPort("PCW_USE_S_AXI_ACP", None, "S_AXI_ACP_ACLK"),
        },
        hp_widths=(32, 64),
        masters={
            "M_AXI_GP0": PsPort("PCW_USE_M_AXI_GP0", None, "M_AXI_GP0_ACLK", 0x4000_0000),
            "M_AXI_GP1": PsPort("PCW_USE_M_AXI_GP1", None, "M_AXI_GP1_ACLK", 0x8000_0000),
        },
        clocks={
            f"FCLK_CLK{i}": (
                f"PCW_EN_CLK{i}_PORT",
                f"PCW_FPGA{i}_PERIPHERAL_FREQMHZ",
                f"PCW_ACT_FPGA{i}_PERIPHERAL_FREQMHZ",
                f"FCLK_RESET{i}_N",
            )
            for i in range(4)
        },
    ),
}
"""The processing systems of the Zynq boards: Zynq UltraScale+ MPSoC (UG1085; the CONFIG names of
the zynq_ultra_ps_e IP, PG201) and Zynq-7000 (UG585; processing_system7, PG082). Master windows
are the PS address maps (UG1085: M_AXI_HPM0_FPD from 0xA000_0000, HPM1_FPD from 0xB000_0000,
HPM0_LPD from 0x8000_0000; UG585: M_AXI_GP0 from 0x4000_0000, GP1 from 0x8000_0000)."""
