# The two set-up commands of the README: `make run` and `make test`.
# Each creates .venv from pyproject.toml on first use (and again when pyproject.toml changes).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench openapi docs

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/schema-registry serve

# one process by default: on two cores, four xdist workers (TEST_WORKERS=4) took 41 min and
# timing assertions failed under the contention (docs/development.md); tests/fixtures/parallel.py
# spreads them when TEST_WORKERS > 0
TEST_WORKERS ?= 0
# the tree's bytecode is compiled once up front: with PYTHONDONTWRITEBYTECODE set (as here) every
# server, CLI and worker process the suite starts would otherwise compile the sources again

test: $(BIN)/.installed
	bash scripts/postgres install
	bash scripts/chromium install
	$(BIN)/ruff check .
	$(BIN)/python -m compileall -q -j 0 registry serdes spark_serdes tests >/dev/null
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
