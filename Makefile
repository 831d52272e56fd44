# Two commands for a newcomer: `make demo` and `make test`. Both set up what is missing, idempotently.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.lamina-installed
ASSET_DIR := build/assets
RUNTIME_STAMP := build/.runtime-installed

.PHONY: setup runtime demo test test-fast lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# compat: a plain path entry in a .pth; the default editable finder costs ~20 ms at every interpreter start.
	$(BIN)/python -m pip install --quiet -e '.[export,dev]' --config-settings editable_mode=compat
	# Precompile: where PYTHONDONTWRITEBYTECODE is set, every run would recompile (~30 ms of a no-op).
	$(BIN)/python -m compileall -q lamina rules
	touch $(STAMP)

# Build the development model asset once (cached in build/assets) and install it into the private runtime.
runtime: $(RUNTIME_STAMP)

$(RUNTIME_STAMP): $(STAMP)
	$(BIN)/lamina runtime build-asset --dev --out $(ASSET_DIR)
	$(BIN)/lamina runtime install $(ASSET_DIR)/lamina-dev-asset.tar
	$(BIN)/lamina runtime verify
	touch $(RUNTIME_STAMP)

demo: runtime
	$(BIN)/python examples/demo.py

lint: $(STAMP)
	$(BIN)/ruff check lamina rules tests bench
	$(BIN)/ruff format --check lamina rules tests bench
	$(BIN)/mypy lamina

test-fast: runtime
	$(BIN)/python -m pytest -m "not slow" -q

test: runtime lint
	$(BIN)/python -m pytest -q

bench: runtime
	$(BIN)/python bench/report.py

clean:
	rm -rf build $(VENV)
