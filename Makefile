# One-line entry points. Both create (or reuse) the virtualenv at .venv/.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test test-llm bench install clean lint format

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,browser]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	$(PY) -m pytest -q -m "not llm"

LINTED := src tests benchmarks examples

lint: $(STAMP)
	$(PY) -m ruff check $(LINTED)
	$(PY) -m ruff format --check $(LINTED)
	$(PY) -m mypy src/docgraph

format: $(STAMP)
	$(PY) -m ruff check --fix $(LINTED)
	$(PY) -m ruff format $(LINTED)

test-llm: $(STAMP)
	$(PY) -m pip install -q -e '.[llm]'
	$(PY) -m pytest -q -m llm

bench: $(STAMP)
	$(PY) benchmarks/ingest.py

clean:
	rm -rf .demo-workspace .pytest_cache
