"""fanns: generate verified FPGA accelerators for vector search.

The flow is explore -> DSE -> generate -> simulate -> report; see README.md and the
subpackages: `datasets`, `explore`, `pe`, `arch`, `model`, `codegen`, `sim`, `driver`, `report`.

Importing fanns before faiss makes faiss's OpenMP threads sleep instead of spin while they wait
(`OMP_WAIT_POLICY=PASSIVE`, unless the environment already names a policy; libgomp reads it when
faiss loads it). Why: with GNU OpenMP's default spinning, a thread that waits at a barrier keeps
its core while the thread it waits for has been preempted by another process, so on a machine
with other work (a second pytest worker, a simulation, a build) faiss slows many times over.
`benchmarks/omp_wait.py` measures both policies: beside another faiss process the passive wait
trained OPQ 6.6x and searched on all cores 3.9x as fast; on a quiet machine it cost 17 % in OPQ
training and nothing in search.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
