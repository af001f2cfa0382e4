.DEFAULT_GOAL := help
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: help
help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

.PHONY: install
install: $(PY) ## Install the package (release build) into the venv
	$(PY) -m pip install .

.PHONY: dev
dev: $(PY) ## Install test/dev dependencies and build the extension in debug mode (maturin develop)
	$(PY) -c "import tomllib; x = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']; print('\n'.join(x['test'] + x['dev']))" > $(VENV)/deps.txt
	$(PY) -m pip install -q -r $(VENV)/deps.txt
	. $(VENV)/bin/activate && maturin develop

.PHONY: test
test: ## Run every Rust and Python test (the CI command)
	bash .ci/run

.PHONY: test-py
test-py: ## Run the Python tests against the current build
	$(PY) -m pytest

.PHONY: test-rust
test-rust: ## Run the Rust tests: the core and every part but the binding (no Python)
	cargo test --no-default-features --features mcp-client,mcp-server,llm,search

.PHONY: lint
lint: ## cargo fmt --check, clippy, ruff (check and format), the stub check and mypy --strict
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --no-default-features --all-targets -- -D warnings
	cargo clippy --no-default-features --features mcp-client,mcp-server,llm,search --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches examples
	$(VENV)/bin/ruff format --check python tests benches examples
	$(PY) -m mypy.stubtest agentmaker._native --allowlist .stubtest-allowlist
	$(PY) -m mypy --strict examples tests/typing_usage.py python/agentmaker

.PHONY: fmt
fmt: ## Format Rust and Python sources
	cargo fmt
	$(VENV)/bin/ruff format python tests benches examples

.PHONY: bench
bench: ## Run the benchmarks (build a release extension first: make install)
	$(PY) benches/run.py
