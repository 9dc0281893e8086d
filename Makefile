# Two commands for a fresh machine with Python 3.11:
#   make report   set up if needed, then build the report on the embedded default
#   make test     set up if needed, then run every test
#   make test-fast  the unit tests only (no notebook kernels, browser, wheel or docs build)
#   make lint     set up if needed, then `ruff check` (rules in pyproject.toml [tool.ruff])
# and the documentation site (offline, strict):
#   make docs     set up if needed, execute the notebooks, build docs/_build/html
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.arcnb-installed
REPORT_OUT ?= reports/default
DOCS_OUT   ?= docs/_build/html

.PHONY: setup report test test-fast lint docs clean-venv

# Python may cache compiled modules (__pycache__/, ignored by git) even where the
# environment says not to: every test process, notebook kernel and command would
# otherwise compile arcnb and the tests anew (a third of a second per process, and
# about half of pytest's collection)
unexport PYTHONDONTWRITEBYTECODE

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install "torch==2.13.0"
	$(PY) -m pip install -e ".[test,lightning,docs]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (arcnb)"
	@touch $(STAMP)

report: setup
	$(VENV)/bin/arcnb report --default --out $(REPORT_OUT) --overwrite

# every test, the unit tests and the slow ones (kernels, a browser, the wheel, the docs,
# other processes) in one run over the cores, a test file per worker, the longest files
# first (a file's tests share its fixtures; while a slow test waits on the process it
# started, the other workers go on)
test: setup
	$(PY) -m pytest -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder

test-fast: setup
	$(PY) -m pytest -m "not slow" -n auto --maxprocesses=4

lint: setup
	$(VENV)/bin/ruff check .

# -E: a fresh environment every time, so every page's warnings are seen (strict build)
docs: setup
	$(PY) docs/execute_notebooks.py
	$(PY) -m sphinx -b html -E -W --keep-going -n -q docs $(DOCS_OUT) -d docs/_build/doctrees
	@echo "docs: $(DOCS_OUT)/index.html"

clean-venv:
	rm -rf $(VENV)
