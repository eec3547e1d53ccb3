# kernelkit: set-up, tests, demo and benchmarks.  Every target creates .venv when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The CPU build of torch that these machines serve locally; a bare `torch` may pull a CUDA build.
TORCH_PIN ?= torch==2.13.0

.PHONY: setup test test-fast test-slow lint demo bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_PIN)"
	$(PY) -m pip install --quiet -e ".[all]"
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/lint-imports

test: lint
	$(PY) -m pytest -q -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

test-fast: lint
	$(PY) -m pytest -m "not slow" -q -p no:cacheprovider

test-slow: $(STAMP)
	$(PY) -m pytest -m slow -q -p no:cacheprovider

demo: $(STAMP)
	$(VENV)/bin/kernelkit demo --out demo_output --overwrite

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo_output .pytest_cache .ruff_cache
