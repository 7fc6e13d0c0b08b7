# Two commands set everything up: `make preview` and `make test` (both create .venv on first use).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: preview test unit integration bench policy docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip==25.3
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

preview: $(STAMP)
	$(BIN)/accelstack preview --all

# loadfile: a module's tests share one worker, so module fixtures (the real Slurm cluster) start once.
# --benchmark-disable: the bench tests are deselected here; it stops pytest-benchmark warning that xdist
# turned it off. Skip reasons are printed (-rs in pyproject's addopts).
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --benchmark-disable

unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --benchmark-disable -m 'not integration and not bench'

integration: $(STAMP)
	$(BIN)/python -m pytest -m integration

bench: $(STAMP)
	$(BIN)/python -m pytest -m bench -p no:xdist tests/bench

policy: $(STAMP)
	$(BIN)/accelstack policy --all

# The stack file reference and JSON Schema, from the spec models (tests fail when they are stale).
docs: $(STAMP)
	$(BIN)/accelstack schema --out docs

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
