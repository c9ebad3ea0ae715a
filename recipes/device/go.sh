#!/bin/bash
# The GPU part of issue #15 on the device machine (staged by recipes/device/stage.sh):
#   bash .gpu/go.sh TESTS(0|1) MINUTES REPORT_SETS [BATCH_SIZES]
# MINUTES: the trainers' train.max_minutes, counted over resumes (runs/gpu stays while the machine is warm).
# BATCH_SIZES (e.g. 256,512,1024): first time RNNsearch-50 alone, at the paper's sizes in bf16, at each
# minibatch size (benchmarks/profile_train.py --batch-sizes), into $OUT/throughput.txt.
set -u
TESTS=$1; MIN=$2; SETS_REPORT=$3; BATCH_SIZES=${4:-}
say() { echo "[go $(date -u +%H:%M:%S)] $*" | tee -a "$OUT/go.log"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1
mkdir -p /tmp/bin
printf '#!/bin/sh\nexec python3 -m rnnsearch "$@"\n' > /tmp/bin/rnnsearch; chmod +x /tmp/bin/rnnsearch
ln -sf "$(command -v python3)" /tmp/bin/python
D=$PWD/runs/gpu_data
if [ ! -f "$D/hansards/train.fr" ]; then
  say "data"
  mkdir -p "$D/hansards" && cp .gpu/data/hansards/{dev,test}.* "$D/hansards/" && cp -r .gpu/data/wmt14 .gpu/data/alignment "$D/"
  xz -dc .gpu/data/hansards/train.en.xz > "$D/hansards/train.en" & xz -dc .gpu/data/hansards/train.fr.xz > "$D/hansards/train.fr" & wait
  python3 .gpu/pretok.py "$D/hansards" runs/gpu/cache || exit 1
fi
mkdir -p ../shared && ln -sfn "$D" ../shared/data
say "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader); $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')"
if [ "$TESTS" = 1 ]; then
  say "tests on cuda"
  RNNSEARCH_TEST_DEVICE=cuda timeout 110 python3 -m pytest -q -p no:cacheprovider tests/unit/test_speedups.py \
    tests/property/test_attention.py tests/property/test_search.py > "$OUT/gpu_tests.txt" 2>&1
  say "tests exit $?: $(tail -n 1 "$OUT/gpu_tests.txt")"
fi
if [ -n "$BATCH_SIZES" ]; then
  say "throughput of RNNsearch-50 alone, batches of $BATCH_SIZES sentences"
  timeout 300 python3 benchmarks/profile_train.py configs/paper_rnnsearch50.yaml --steps 20 --warmup 5 \
    --batch-sizes "$BATCH_SIZES" --out /tmp/throughput --set data.dir="$D/hansards" --set data.token_cache="$PWD/runs/gpu/cache" \
    --set train.device=cuda --set train.bf16=true --set train.optimizer=adam --set train.loss_scale=token \
    > "$OUT/throughput.txt" 2>&1
  say "throughput exit $?: $(grep '^batch' "$OUT/throughput.txt" | tr '\n' ' ')"
fi
[ "$MIN" = 0 ] && { say "done"; exit 0; }
say "train to $MIN minutes"
BIN=/tmp/bin DATA=$D OUT=$PWD/runs/gpu PROFILE=gpu MINUTES=$MIN MODELS="rnnsearch50 rnnencdec50" JOBS=2 THREADS=4 \
  SETS="--set train.optimizer=adam --set train.lr=0.001 --set train.loss_scale=token --set train.batch_size=256 --set train.valid_every=1000 --set train.save_every=1000 --set train.valid_max_sentences=500 --set train.patience=0 --set data.token_cache=$PWD/runs/gpu/cache" \
  bash recipes/hansards.sh train > "$OUT/train_recipe.log" 2>&1
say "train exit $?"
tail -n 4 runs/gpu/rnnsearch50/train.log runs/gpu/rnnencdec50/train.log | tee -a "$OUT/go.log"
if [ "$SETS_REPORT" != none ]; then
  say "report $SETS_REPORT"
  BIN=/tmp/bin DATA=$D OUT=$PWD/runs/gpu PROFILE=gpu BEAM=12 THREADS=4 MODELS="rnnsearch50 rnnencdec50" REPORT_SETS="$SETS_REPORT" \
    bash recipes/hansards.sh report > "$OUT/report.log" 2>&1
  say "report exit $?"
  python3 experiments/aer.py --checkpoint runs/gpu/rnnsearch50/best.pt --reuse --work .gpu/aer --device cuda --out "$OUT/aer.md" > "$OUT/aer.log" 2>&1
  say "aer exit $?"
fi
tar czf "$OUT/gpu_runs.tgz" --exclude='*.pt' --exclude=report.html runs/gpu/report_* runs/gpu/*/log.jsonl runs/gpu/*/train.log runs/gpu/recipe.txt 2>/dev/null
say "done"
