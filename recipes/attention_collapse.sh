#!/usr/bin/env bash
# Short runs: does RNNsearch's attention collapse onto the source </s>? Same data and sizes as the
# CPU recipe (recipes/hansards.sh, PROFILE=cpu, max length 30), 300 updates each, then
# experiments/attention_eos.py on each last.pt.
cd "$(dirname "$0")/.."
COMMON=(--set data.dir=../shared/data/hansards --set data.max_len=30 --set data.max_train_pairs=200000
  --set train.threads=2 --set train.progress=false --set model.emb=128 --set model.enc_hidden=256
  --set model.dec_hidden=256 --set model.att=256 --set model.maxout=128 --set model.encoder_cell=fused
  --set vocab.size=30000 --set train.max_steps=300 --set train.valid_every=300 --set train.valid_max_sentences=100)
run() { name=$1; shift; .venv/bin/rnnsearch train configs/hansards_rnnsearch.yaml --out runs/collapse/$name "${COMMON[@]}" "$@"; }
run xavier_adam --set model.init=xavier --set train.optimizer=adam --set train.lr=0.001
run paper_adam --set model.init=paper --set train.optimizer=adam --set train.lr=0.001
run paper_adadelta --set model.init=paper
run xavier_adam_dropout --set model.init=xavier --set train.optimizer=adam --set train.lr=0.001 --set model.dropout=0.2
.venv/bin/python experiments/attention_eos.py runs/collapse/*/last.pt
# The paper's initialisation with Adam, continued to 1000 updates: </s> statistics and AER.
.venv/bin/rnnsearch train configs/hansards_rnnsearch.yaml --out runs/collapse/paper_adam --resume "${COMMON[@]}" \
  --set train.max_steps=1000 --set train.valid_every=350 --set model.init=paper --set train.optimizer=adam --set train.lr=0.001
.venv/bin/python experiments/attention_eos.py runs/collapse/paper_adam/last.pt
.venv/bin/python experiments/aer.py --checkpoint runs/collapse/paper_adam/last.pt --out runs/aer/aer_paper_adam_1000.md
