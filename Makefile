# kernelkit: set-up, tests, demo and benchmarks.  Every target creates .venv when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The CPU build of torch that these machines serve locally; a bare `torch` may pull a CUDA build.
TORCH_PIN ?= torch==2.13.0

.PHONY: setup test test-fast test-slow test-min lint demo bench clean

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

# Test files are dealt to TEST_WORKERS processes (pytest-xdist), one file per process at a
# time (module fixtures stay in one process); the machines here have two cores.
TEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile

test: lint
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_PARALLEL); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

test-fast: lint
	$(PY) -m pytest -m "not slow" -q -p no:cacheprovider $(PYTEST_PARALLEL)

test-slow: $(STAMP)
	$(PY) -m pytest -m slow -q -p no:cacheprovider

# The declared minimum versions (the ">=" floors of pyproject.toml) of the core numerics, in a
# separate venv, running the fast suite: the floors are tested, not guessed.
VENV_MIN := .venv-min
MIN_PINS = $(shell $(PYTHON) -c 'import re, tomllib; deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]; print(" ".join(m[1] + "==" + m[2] for d in deps if (m := re.fullmatch(r"(numpy|scipy|scikit-learn|torch)>=([0-9.]+)", d))))')

test-min:
	test -x $(VENV_MIN)/bin/python || $(PYTHON) -m venv $(VENV_MIN)
	$(VENV_MIN)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_MIN)/bin/python -m pip install --quiet -e ".[all]" $(MIN_PINS)
	$(VENV_MIN)/bin/python -c 'import numpy, scipy, sklearn, torch; print("test-min:", numpy.__version__, scipy.__version__, sklearn.__version__, torch.__version__)'
	$(VENV_MIN)/bin/python -m pytest -m "not slow" -q -p no:cacheprovider

demo: $(STAMP)
	$(VENV)/bin/kernelkit demo --out demo_output --overwrite

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(VENV_MIN) demo_output .pytest_cache .ruff_cache
