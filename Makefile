# Two entry points: `make demo` and `make test`. Both bootstrap .venv from pyproject.toml on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest processes (pytest-xdist): three on this two-core machine, since about a third of the suite's time is
# waiting (a betting window, a lease, a browser, a subprocess starting) that a third process fills; WORKERS=0 runs
# them in one process
WORKERS ?= 3

.PHONY: demo test lint bench clean topology

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

# The production shape from deploy/ (Mosquitto, PostgreSQL, two APIs behind HAProxy, an active and a standby
# controller, a signed shoe daemon), broken on purpose; needs mosquitto, haproxy and a PostgreSQL superuser
topology: $(STAMP)
	STUDIO_REQUIRE_TOPOLOGY=1 STUDIO_TEST_DATABASE_URL="$${STUDIO_TEST_DATABASE_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/postgres}" \
		$(BIN)/pytest -m topology tests/topology

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The pages' screenshots in docs/screenshots/ (Debian's Chromium at /usr/bin/chromium; no browser is downloaded)
.PHONY: screenshots
screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py
