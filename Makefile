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

# the suite mostly waits on subprocesses, brokers and sockets: more workers than cores pay
# (tests/fixtures/parallel.py: how tests are spread; TEST_WORKERS=0 runs them in one process)
TEST_WORKERS ?= 4

test: $(BIN)/.installed
	bash scripts/postgres install
	bash scripts/chromium install
	$(BIN)/ruff check .
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
