# Two commands on a fresh machine (Python 3.11, g++, make):
#   make demo   -- create .venv, install fanns, generate and simulate an accelerator for a built-in dataset
#   make test   -- create .venv, install fanns with test extras, run the fast tier of the tests (not `slow`)
#   make test-all -- the fast tier, then the slow tier (whole-accelerator simulations, large DSE runs): CI
#   make test-long -- the long tier: more designs of the kinds the slow tier builds, fresh syntheses, trends
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: install demo test test-all test-long clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e '.[test]'
	# Xilinx's C-simulation headers for tests/codegen/test_vendor_headers.py: the hls4ml wheel, no dependencies
	$(BIN)/python tests/xilinx_headers.py
	# a Tcl interpreter for the generated Vivado / vitis_hls scripts (tests/tcl_standins.py): tclsh or tkinter
	command -v tclsh >/dev/null || $(BIN)/python -c "import tkinter; tkinter.Tcl()" || \
		{ echo "no Tcl interpreter: apt-get install tcl (Debian) for the Tcl-script tests"; exit 1; }
	touch $(STAMP)

install: $(STAMP)

# The demo: explore the built-in SIFT-like set (nlist 32 and 64, with and without OPQ, 200 queries),
# choose the best U55C design for 1-R@10 = 0.8, generate its HLS and RTL faces and simulate 16
# queries on both (g++ C simulation; Verilator + cocotb) -> work/demo/project (README.md inside).
demo: $(STAMP)
	$(BIN)/fanns generate builtin:sift-10k --recall 1-R@10=0.8 --board u55c --nlist 32,64 --queries 200 \
		--sim --out work/demo/project --force

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q -m "not slow and not long"

# the slow and long tiers in xdist groups (tests/conftest.py): a design a module builds is built on one worker
test-all: test
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup -q -m "slow and not long"

test-long: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup -q -m long

clean:
	rm -rf $(VENV) work build *.egg-info
