#!/usr/bin/env bash
# The paper's experiment (Bahdanau et al. 2014, Table 1, Figures 2 and 3) on the Canadian
# Hansards En->Fr: RNNencdec-30, RNNsearch-30, RNNencdec-50, RNNsearch-50 (trained on pairs of
# at most 30 / 50 words), trained alike, then `rnnsearch report` on the Hansards test set and
# on newstest2014 (out of domain). Usage: `make hansards` or `recipes/hansards.sh`.
#
# PROFILE=gpu: the paper's sizes (620/1000/1000/500, word shortlist 30k, Adadelta), bf16 autocast.
# PROFILE=cpu (default without CUDA): the same recipe on a subset with smaller sizes, the same
# for the four models; every choice is written to $OUT/recipe.txt and goes into the report.
# Knobs (environment): OUT, PAIRS (training pairs, 0 = all), MINUTES (per model), THREADS,
# TEST_LINES (0 = whole test sets; a smoke test uses a few), BEAM, SETS (extra --set for all),
# MODELS (which to train, default all four: two shells can train disjoint halves side by side with
# THREADS=1), REPORT (0 = train only; 1 = then write the reports, the default), REPORT_SETS (which
# reports: hansards, newstest2014 or both, the default).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
DATA=${DATA:-../shared/data}
OUT=${OUT:-runs/hansards}
PROFILE=${PROFILE:-$($BIN/python -c 'import torch; print("gpu" if torch.cuda.is_available() else "cpu")')}
TEST_LINES=${TEST_LINES:-0}
BEAM=${BEAM:-12}
if [ "$PROFILE" = gpu ]; then
  PAIRS=${PAIRS:-0}; MINUTES=${MINUTES:-120}; THREADS=${THREADS:-0}
  SIZES=(--set train.bf16=true --set decode.batch_size=128)
else
  PAIRS=${PAIRS:-200000}; MINUTES=${MINUTES:-60}; THREADS=${THREADS:-2}
  # The paper's initialisation stays (v_a = 0, W_a and U_a ~ N(0, 0.001)): with model.init=xavier and
  # Adam, RNNsearch's attention collapses onto the source </s> within 300 updates on this data
  # (docs/results/hansards/README.md, benchmarks/attention_eos.py) and the model is an RNNencdec in effect.
  SIZES=(--set model.emb=128 --set model.enc_hidden=256 --set model.dec_hidden=256 --set model.att=256
         --set model.maxout=128 --set model.encoder_cell=fused --set vocab.size=30000
         --set train.optimizer=adam --set train.lr=0.001)
fi
mkdir -p "$OUT/test"
{
  echo "profile: $PROFILE; training pairs: ${PAIRS} (0 = all 1,021,889); minutes per model: $MINUTES;"
  echo "threads: $THREADS; beam: $BEAM; test lines: $TEST_LINES (0 = all); machine: $(nproc) cores,"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $($BIN/python -c 'import torch; print("torch", torch.__version__)');"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ); overrides: ${SIZES[*]} ${SETS:-}"
} >> "$OUT/recipe.txt"  # each invocation appends its header, then its wall times
tail -n 4 "$OUT/recipe.txt"

# Test sets: the Hansards test split and newstest2014, whole or their first TEST_LINES lines.
for pair in "hansards/test hansards" "wmt14/newstest2014 newstest2014"; do
  set -- $pair
  for lang in en fr; do
    if [ "$TEST_LINES" -gt 0 ]; then head -n "$TEST_LINES" "$DATA/$1.$lang" > "$OUT/test/$2.$lang"
    else cp "$DATA/$1.$lang" "$OUT/test/$2.$lang"; fi
  done
done

MODELS=${MODELS:-rnnencdec30 rnnsearch30 rnnencdec50 rnnsearch50}
REPORT=${REPORT:-1}
for len in 30 50; do
  for arch in rnnencdec rnnsearch; do
    name="${arch}${len}"
    case " $MODELS " in *" $name "*) ;; *) continue ;; esac
    if [ -f "$OUT/$name/last.pt" ]; then resume=(--resume); else resume=(); fi
    start=$(date +%s)
    $BIN/rnnsearch train "configs/hansards_${arch}.yaml" --out "$OUT/$name" "${resume[@]}" \
      --set data.dir="$DATA/hansards" --set data.max_len="$len" --set data.max_train_pairs="$PAIRS" \
      --set train.max_minutes="$MINUTES" --set train.threads="$THREADS" --set train.progress=false \
      "${SIZES[@]}" ${SETS:-}
    echo "$name: $(( $(date +%s) - start )) s wall" >> "$OUT/recipe.txt"
  done
done
[ "$REPORT" = 1 ] || exit 0

models=(--model "RNNencdec-30=$OUT/rnnencdec30/best.pt" --model "RNNsearch-30=$OUT/rnnsearch30/best.pt"
        --model "RNNencdec-50=$OUT/rnnencdec50/best.pt" --model "RNNsearch-50=$OUT/rnnsearch50/best.pt")
if [ "$THREADS" -gt 0 ]; then export OMP_NUM_THREADS="$THREADS"; fi  # the search's threads, as training's
# REPORT_SETS: which reports this invocation writes (two shells can write one each side by side).
for set in ${REPORT_SETS:-hansards newstest2014}; do
  $BIN/rnnsearch report "${models[@]}" --src "$OUT/test/$set.en" --ref "$OUT/test/$set.fr" \
    --out "$OUT/report_$set" --beam "$BEAM" --figure3 RNNsearch-50 \
    --sentence "The agreement on the European Economic Area was signed in August 1992 ."
  cp "$OUT/recipe.txt" "$OUT/report_$set/recipe.txt"
done
echo "reports: $OUT/report_*/report.md"
