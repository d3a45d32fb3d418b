"""fanns: generate verified FPGA accelerators for vector search.

The flow is explore -> DSE -> generate -> simulate -> report; see README.md and the
subpackages: `datasets`, `explore`, `pe`, `arch`, `model`, `codegen`, `sim`, `driver`, `report`.
"""

__version__ = "0.1.0"
