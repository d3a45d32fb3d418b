# Two commands on a fresh machine (Python 3.11, g++, make):
#   make demo   -- create .venv, install fanns, run the main job on a built-in dataset
#   make test   -- create .venv, install fanns with test extras, run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: install demo test clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/fanns explore builtin:sift-10k --recall R@10=0.6 --recall R@1=0.4 --out work/demo/explore

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) -q

clean:
	rm -rf $(VENV) work build *.egg-info
