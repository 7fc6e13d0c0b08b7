# Two commands set everything up: `make preview` and `make test` (both create .venv on first use).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: preview lint test unit integration bench policy docs golden scan clean

# Checkov in its own venv: its dependency pins clash with ours. Pinned in requirements-scan.txt.
SCAN_VENV  := .venv-scan
SCAN_STAMP := $(SCAN_VENV)/.installed

# Previewing needs only accelstack and its pinned SDKs; the test tools (moto, mypy, ruff, ...) come with `make test`.
$(CORE_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip==25.3
	$(BIN)/pip install -q -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

preview: $(CORE_STAMP)
	$(BIN)/accelstack preview --all

# loadfile: a module's tests share one worker, so module fixtures (the real Slurm cluster) start once.
# --benchmark-disable: the bench tests are deselected here; it stops pytest-benchmark warning that xdist
# turned it off. Skip reasons are printed (-rs in pyproject's addopts).
test: lint
	$(BIN)/python -m pytest -n 2 --dist loadfile --benchmark-disable

# Lint, formatting and types (config in pyproject.toml); mypy keeps its cache in .mypy_cache.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# -m replaces addopts' marker filter, so the scan marker is excluded here again.
unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile --benchmark-disable -m 'not integration and not bench and not scan'

integration: $(STAMP)
	$(BIN)/python -m pytest -m integration

bench: $(STAMP)
	$(BIN)/python -m pytest -m bench -p no:xdist tests/bench

policy: $(STAMP)
	$(BIN)/accelstack policy --all

# The shipped stacks' pinned exports (tests/golden), after a change meant to alter what is deployed.
golden: $(STAMP)
	ACCELSTACK_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q -p no:xdist tests/engine/test_golden_exports.py

# The stack file reference and JSON Schema, from the spec models (tests fail when they are stale).
docs: $(STAMP)
	$(BIN)/accelstack schema --out docs

$(SCAN_STAMP): requirements-scan.txt
	test -x $(SCAN_VENV)/bin/python || $(PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/pip install -q --upgrade pip==25.3
	$(SCAN_VENV)/bin/pip install -q -r requirements-scan.txt
	touch $(SCAN_STAMP)

# Checkov on every stack (AWS, GCP: the Terraform plan view; Azure: the ARM template view): fails on any finding not recorded (with why and source)
# in policies/scanner-exceptions.yaml, then checks Checkov reads the plans faithfully (tests/scan).
scan: $(STAMP) $(SCAN_STAMP)
	$(BIN)/python -m accelstack.engine.scanner_gate --checkov $(SCAN_VENV)/bin/checkov --out out/scan
	CHECKOV=$(SCAN_VENV)/bin/checkov $(BIN)/python -m pytest -m scan -p no:xdist tests/scan

clean:
	rm -rf $(VENV) $(SCAN_VENV) .pytest_cache .hypothesis build *.egg-info
