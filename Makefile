# The two commands that matter are `make run` and `make test` (see README.md).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
#: axe-core from npm for the accessibility tests (tests/browser/package.json and its lock)
NODE_TOOLS := tests/browser/node_modules/.installed
PORT ?= 8000
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: run test check bench reliability clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NODE_TOOLS): tests/browser/package.json tests/browser/package-lock.json
	@if command -v npm >/dev/null; then \
	  npm ci --prefix tests/browser --no-audit --no-fund && touch $@; \
	else \
	  echo "npm is not installed (apt-get install npm): the accessibility tests will be skipped"; \
	fi

## Serve the API on embedded SQLite: migrate, load demo data, print a board token, serve.
run: $(STAMP)
	$(BIN)/wetbank db upgrade
	$(BIN)/wetbank demo
	@echo "API: http://127.0.0.1:$(PORT)/api/v1  (OpenAPI: /api/v1/openapi.json, docs: /api/v1/docs)"
	@echo "Pages: http://127.0.0.1:$(PORT)/  (sign in with a token printed above)"
	$(BIN)/wetbank serve --host 127.0.0.1 --port $(PORT) --workers 2

## The whole test suite, every database test on SQLite and PostgreSQL.
test: $(STAMP) $(NODE_TOOLS)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -p no:cacheprovider -n 2 --ignore=tests/system --ignore=tests/browser $(PYTEST_ARGS)
	# real server processes (and, in CI, a PostgreSQL stop/start) and a real Chromium: one at a time
	$(BIN)/python -m pytest -p no:cacheprovider tests/system tests/browser $(PYTEST_ARGS)

## Static checks.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy bank ledger api bench
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) instance .pytest_cache .mypy_cache .ruff_cache tests/browser/node_modules

## The reliability suite at full size (tests/system: concurrency, exactly-once, crashes,
## hostile input, authorization; stops and starts the local PostgreSQL once).
reliability: $(STAMP)
	WETBANK_FULL_RELIABILITY=1 $(BIN)/python -m pytest -p no:cacheprovider tests/system
