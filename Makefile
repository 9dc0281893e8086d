# Two commands for a fresh machine with Python 3.11:
#   make report   set up if needed, then build the report on the embedded default
#   make test     set up if needed, then run every test
#   make lint     set up if needed, then `ruff check` (rules in pyproject.toml [tool.ruff])
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.arcnb-installed
REPORT_OUT ?= reports/default

.PHONY: setup report test lint clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install "torch==2.13.0"
	$(PY) -m pip install -e ".[test,lightning]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (arcnb)"
	@touch $(STAMP)

report: setup
	$(VENV)/bin/arcnb report --default --out $(REPORT_OUT) --overwrite

test: setup
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .

clean-venv:
	rm -rf $(VENV)
