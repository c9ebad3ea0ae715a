# rnnsearch: `make demo` (set up + the built-in demo), `make test` (set up + the test suite).
PYTHON ?= python3
VENV   ?= .venv
TORCH  ?= torch==2.13.0
BIN    := $(VENV)/bin
DEMO   := runs/demo
DEMO_SENTENCE := The big black dog sees a small white cat in the old house.

.PHONY: setup demo test lint test-fast bench onmt marian moses bench-marian race bench-serve bench-decode bench-shortlist bench-aer joey hansards hansards-status hansards-report hansards-snapshot clean

setup: $(VENV)/.installed

# torch first (the pinned CPU build; TORCH=... for a CUDA build), then the package with ranges.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check "$(TORCH)"
	$(BIN)/pip install -q --disable-pip-version-check -e ".[all,test]"
	touch $@

demo: setup
	rm -rf $(DEMO)
	$(BIN)/rnnsearch synth --out data/demo
	$(BIN)/rnnsearch train configs/demo.yaml --out $(DEMO)
	@echo "== translations (beam 5) of the first test sentences"
	head -n 5 data/demo/test.en > $(DEMO)/sample.en
	$(BIN)/rnnsearch translate $(DEMO)/best.pt --input $(DEMO)/sample.en --output $(DEMO)/sample.fr
	@paste -d '\n' $(DEMO)/sample.en $(DEMO)/sample.fr | sed 'n;s/^/  -> /'
	@echo "== sacreBLEU on the held-out test split"
	$(BIN)/rnnsearch evaluate $(DEMO)/best.pt --src data/demo/test.en --ref data/demo/test.fr \
		--plot $(DEMO)/bleu_by_length.png
	@echo "== alignment (the paper's Figure 3)"
	$(BIN)/rnnsearch plot-alignment $(DEMO)/best.pt --sentence "$(DEMO_SENTENCE)" --out $(DEMO)/alignment.png
	@echo
	@echo "Done. Next, train on real data (Multi30k En->Fr, about an hour on 2 CPU cores):"
	@echo "  $(BIN)/rnnsearch train configs/multi30k_rnnsearch.yaml --set data.dir=../shared/data/multi30k --out runs/m30k"
	@echo "  $(BIN)/rnnsearch evaluate runs/m30k/best.pt --src ../shared/data/multi30k/test_2016_flickr.en \\"
	@echo "      --ref ../shared/data/multi30k/test_2016_flickr.fr --beam 5"
	@echo "(no ../shared/data? '$(BIN)/rnnsearch data multi30k --out data/multi30k' downloads it). See README.md."

# The suite twice: on this CPU as it is, then with ATen's and oneDNN's instruction sets forced down to
# AVX2 (no AVX-512, no native bf16), so that an assumption of AVX-512 fails here on any machine.
FORCED_DOWN := ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2
test: setup lint
	$(BIN)/python -m pytest -q tests
	@echo "== the suite again with $(FORCED_DOWN)"
	$(FORCED_DOWN) $(BIN)/python -m pytest -q -p no:cacheprovider tests

lint: setup
	$(BIN)/ruff check src tests benchmarks experiments recipes hubconf.py

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow" tests

# `make bench` (about 75 minutes) or `make bench QUICK=1` (a few minutes, for development):
# rnnsearch vs JoeyNMT 2.3.0 and OpenNMT-py 3.5.1 side by side; a full run writes its section of BENCHMARKS.md (replacing the last run's).
JOEY_VENV ?= benchmarks/.joey-venv
QUICK ?=
joey: $(JOEY_VENV)/.installed

# JoeyNMT in its own venv, torch pinned first; importlib-metadata and sentencepiece 0.2.0 are
# what JoeyNMT 2.3.0 needs with torch 2.13 (0.2.1+ lacks SetVocabulary).
$(JOEY_VENV)/.installed:
	$(PYTHON) -m venv $(JOEY_VENV)
	$(JOEY_VENV)/bin/pip install -q --disable-pip-version-check "$(TORCH)"
	$(JOEY_VENV)/bin/pip install -q --disable-pip-version-check joeynmt==2.3.0 importlib-metadata sentencepiece==0.2.0
	touch $@

# OpenNMT-py 3.5.1 in its own venv beside the same torch: it pins torch<2.3 (a multi-GB CUDA build from
# PyPI), so it goes in without its dependencies, then the ones it imports (its transforms import all).
ONMT_VENV ?= benchmarks/.onmt-venv
onmt: $(ONMT_VENV)/.installed

$(ONMT_VENV)/.installed:
	$(PYTHON) -m venv $(ONMT_VENV)
	$(ONMT_VENV)/bin/pip install -q --disable-pip-version-check "$(TORCH)"
	$(ONMT_VENV)/bin/pip install -q --disable-pip-version-check --no-deps opennmt-py==3.5.1
	$(ONMT_VENV)/bin/pip install -q --disable-pip-version-check configargparse pyyaml sacrebleu six sentencepiece \
		"pyonmttok>=1.37,<2" spacy rapidfuzz pyahocorasick fasttext-wheel tensorboard waitress flask
	touch $@

# Marian (the pymarian wheel: its CPU build with MKL, about 1 GB) in its own venv; `make bench-marian`
# (MINUTES of training each, default 60) or `make bench-marian QUICK=1` (a few minutes): rnnsearch vs
# Marian on the Hansards (benchmarks/marian.py); a full run writes its section of BENCHMARKS.md.
MARIAN_VENV ?= benchmarks/.marian-venv
MINUTES ?= 60
marian: $(MARIAN_VENV)/.installed

$(MARIAN_VENV)/.installed:
	$(PYTHON) -m venv $(MARIAN_VENV)
	$(MARIAN_VENV)/bin/pip install -q --disable-pip-version-check pymarian==1.12.42
	touch $@

bench-marian: setup marian
	$(BIN)/pip install -q --disable-pip-version-check "eflomal>=2"
	$(BIN)/python benchmarks/marian.py --venv $(MARIAN_VENV) --minutes $(MINUTES) $(if $(QUICK),--quick,--record)

# Time to quality (benchmarks/race_quality.py): rnnsearch's recommended config against Marian's s2s, each
# model kept at minutes 15 ... 180 and scored on dev; PHASE=train-rnnsearch|train-marian|score runs one part.
race: setup marian
	$(BIN)/python benchmarks/race_quality.py --venv $(MARIAN_VENV) $(if $(PHASE),--phase $(PHASE)) $(if $(QUICK),--quick,--record)

# PEERS=joey or PEERS=onmt races one peer only.
PEERS ?= joey,onmt
bench: setup $(if $(findstring joey,$(PEERS)),joey) $(if $(findstring onmt,$(PEERS)),onmt)
	$(BIN)/python benchmarks/bench.py --peers $(PEERS) --joey-venv $(JOEY_VENV) --onmt-venv $(ONMT_VENV) $(if $(QUICK),--quick,--record)

# `rnnsearch serve` under load: 32 clients for 60 s, batching on and off (BENCHMARKS.md);
# SOAK=600: 10 minutes with batching on, RSS and latency over time.
CLIENTS ?= 32
DURATION ?= 60
SOAK ?=
CHECKPOINT ?=
bench-serve: setup
	$(BIN)/python benchmarks/bench_serve.py --clients $(CLIENTS) --seconds $(DURATION) $(if $(SOAK),--soak $(SOAK)) $(if $(CHECKPOINT),--checkpoint $(CHECKPOINT)) $(if $(QUICK),,--record)

# Decoding configurations side by side (torch float32 / bf16 / int8, onnxruntime float32 / int8),
# averaging and ensembles (benchmarks/bench_decode.py; BENCHMARKS.md). HANSARDS=CKPT adds Hansards parity;
# BASELINE=DIR races an older checkout (git worktree add DIR COMMIT) head to head at beam 5.
HANSARDS ?=
BASELINE ?=
bench-decode: setup
	$(BIN)/python benchmarks/bench_decode.py $(if $(HANSARDS),--hansards $(HANSARDS)) $(if $(BASELINE),--baseline $(BASELINE)) $(if $(QUICK),,--record)

# A lexical shortlist against the whole vocabulary, float32 and int8, 1 and 2 threads, on the Hansards
# test (benchmarks/bench_shortlist.py; docs/results/shortlist_hansards.md). SIZES: FREQUENT,BEST pairs.
SIZES ?= 100,100
bench-shortlist: setup
	$(BIN)/python benchmarks/bench_shortlist.py --sizes $(SIZES) --out docs/results/shortlist_hansards.md

# AER on the WPT 2003 gold set: a Hansards RNNsearch's attention beside eflomal (experiments/aer.py).
AER_CKPT ?= runs/hansards/rnnsearch50/best.pt
bench-aer: setup
	$(BIN)/pip install -q --disable-pip-version-check "eflomal>=2"
	$(BIN)/python experiments/aer.py --checkpoint $(AER_CKPT) --out runs/aer/aer.md

# The paper's experiment on the Hansards (recipes/hansards.sh): a campaign of four models (a budget of
# core-hours each, continued by every invocation), then two reports; hansards-status: where it stands.
hansards: setup
	recipes/hansards.sh

# Moses on the same Hansards pairs (recipes/moses.sh; MOSES=DIR, a clone of moses-smt/mosesdecoder):
# PHASE=build|data|align|lm|train|tune|test|export, or all of them in turn (each skipped once done).
PHASE ?= all
moses: setup
	recipes/moses.sh $(PHASE)

hansards-status: setup
	recipes/hansards.sh status

hansards-report: setup
	recipes/hansards.sh report

# each unfinished model's state in runs/hansards/snapshots (SNAPSHOTS=DIR: elsewhere; a copy kept off the
# machine lets a new one continue; checkpoints enter git only as releases under models/)
hansards-snapshot: setup
	recipes/hansards.sh snapshot

clean:
	rm -rf $(VENV) runs data/demo .pytest_cache .hypothesis
