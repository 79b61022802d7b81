# Two entry points: `make demo` and `make test`. Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest processes (pytest-xdist): the tests run on both cores; WORKERS=0 runs them in one process
WORKERS ?= 2

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/studio demo

lint: $(STAMP)
	$(BIN)/ruff check services hardware tests bench
	$(BIN)/ruff format --check services hardware tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The pages' screenshots in docs/screenshots/ (Debian's Chromium at /usr/bin/chromium; no browser is downloaded)
.PHONY: screenshots
screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py
