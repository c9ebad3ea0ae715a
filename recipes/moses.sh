#!/usr/bin/env bash
# The paper's phrase-based row of Table 1: Moses on the same Canadian Hansards En->Fr pairs as the
# RNN models (../shared/data/hansards), a peer that the package never imports. In resumable phases:
#
#   recipes/moses.sh build|data|align|lm|train|tune|test|speed|export|all   (MOSES=DIR, a clone of mosesdecoder)
#
# build   compiles MOSES (`git clone https://github.com/moses-smt/mosesdecoder DIR`) with its bjam and
#         Debian's Boost (`apt-get install libboost-all-dev zlib1g-dev libbz2-dev liblzma-dev`); KenLM
#         comes with it (lmplz, build_binary); eflomal goes into .venv.
# data    Moses' tokenizer.perl and a truecaser trained on the training pairs; training pairs of at most
#         80 tokens a side (clean-corpus-n.perl); the first TUNE_LINES dev pairs for tuning.
# align   eflomal (both directions) and Moses' symal, grow-diag-final-and.
# lm      a 5-gram KenLM (lmplz) on the French side of the training pairs, binarised.
# train   train-model.perl from step 4 on those links: phrases of at most 7 words,
#         msd-bidirectional-fe lexicalised reordering.
# tune    MERT (mert-moses.pl) on the tuning pairs; a stopped run goes on with --continue.
# test    the Hansards test and newstest2014 (model filtered to each), detruecased and detokenised, and the
#         tuning pairs with the tuned weights; scored by recipes/moses_peer.py (sacreBLEU as Table 1, No UNK
#         over the sentences of the RNN rows: the release VOCAB's vocabularies). It may share the machine.
# speed   the first SPEED_LINES (500) test sentences, the machine to itself (pause other jobs): Moses on 1
#         and THREADS threads, the release VOCAB on 1 and THREADS one-thread workers (beam 12) beside.
# export  docs/results/hansards/moses/: both outputs, moses.ini without paths, the tuning curve, the
#         compute of each phase and the scores.
#
# Each phase leaves $OUT/done.PHASE and is skipped once done (FORCE=1 runs it again); each runs under
# GNU time (`$OUT/compute/PHASE.time`: CPU time of all its processes, peak memory of the largest), but
# train, which runs train-model.perl's steps one at a time (`compute/train.N.time`, `$OUT/model/done.N`),
# so that a train stopped midway goes on from its step; any other phase stopped midway runs again.
# Knobs: MOSES, OUT (runs/moses), DATA (../shared/data), PAIRS (0 = all 1,021,889), THREADS (2),
# TUNE_LINES (1000), MERT_ITERS (MERT's most iterations; mert-moses.pl's own 25 when unset),
# TEST_LINES (0 = whole test sets), SPEED_LINES (500), VOCAB (models/hansards_enfr_rnnsearch50),
# SORT_MEM (sort's buffer in train, 4G), EXPORT (docs/results/hansards/moses).
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${1:-all}
BIN=${BIN:-.venv/bin}
DATA=${DATA:-../shared/data}
OUT=${OUT:-runs/moses}
PAIRS=${PAIRS:-0}; THREADS=${THREADS:-2}; TUNE_LINES=${TUNE_LINES:-1000}; TEST_LINES=${TEST_LINES:-0}
SPEED_LINES=${SPEED_LINES:-500}
MERT_ITERS=${MERT_ITERS:-}
VOCAB=${VOCAB:-models/hansards_enfr_rnnsearch50}; SORT_MEM=${SORT_MEM:-4G}
EXPORT=${EXPORT:-docs/results/hansards/moses}
if [ -z "${MOSES:-}" ]; then
  echo "recipes/moses.sh: MOSES is not set: clone https://github.com/moses-smt/mosesdecoder and give its directory as MOSES=DIR" >&2
  exit 2
fi
MOSES=$(cd "$MOSES" && pwd)
S=$MOSES/scripts
mkdir -p "$OUT/compute"
OUT=$(cd "$OUT" && pwd)

timed() {  # phase command...: the command under GNU time, its compute in $OUT/compute/phase.time; a phase run
  # again after a stop (MERT goes on with --continue) keeps each invocation's: phase+2.time, phase+3.time, ...
  local phase=$1 file n=1; shift
  file="$OUT/compute/$phase.time"
  while [ -f "$file" ]; do n=$((n + 1)); file="$OUT/compute/$phase+$n.time"; done
  /usr/bin/time -v -o "$file" "$@"
}

head_lines() {  # n file: the first n lines (all when n is 0), gzip or not
  if [ "$1" -eq 0 ]; then zcat -f "$2"; else (zcat -f "$2" || [ $? -eq 141 ]) | head -n "$1"; fi  # 141: head has all it needs
}

prep() {  # lang: tokenise and truecase stdin (the truecaser of `data`) to stdout
  "$S/tokenizer/tokenizer.perl" -q -l "$1" -threads "$THREADS" | "$S/recaser/truecase.perl" --model "$OUT/data/truecase.$1"
}

post() {  # detruecase and detokenise stdin (French) to stdout
  "$S/recaser/detruecase.perl" | "$S/tokenizer/detokenizer.perl" -q -l fr
}

build() {
  if [ ! -f /usr/include/boost/version.hpp ]; then
    echo "recipes/moses.sh build: Boost's headers are missing: apt-get install libboost-all-dev zlib1g-dev libbz2-dev liblzma-dev" >&2
    return 2
  fi
  [ -x "$MOSES/bin/moses" ] || (cd "$MOSES" && ./bjam -j"$THREADS" -q)
  $BIN/pip install -q --disable-pip-version-check "eflomal>=2"
  for tool in moses lmplz build_binary symal mert extract score consolidate lexical-reordering-score; do
    [ -x "$MOSES/bin/$tool" ] || { echo "recipes/moses.sh build: $MOSES/bin/$tool was not built" >&2; return 1; }
  done
}

data() {
  local d=$OUT/data; mkdir -p "$d"
  for lang in en fr; do
    head_lines "$PAIRS" "$DATA/hansards/train.$lang.gz" | "$S/tokenizer/tokenizer.perl" -q -l "$lang" -threads "$THREADS" \
      > "$d/train.tok.$lang"
    "$S/recaser/train-truecaser.perl" --model "$d/truecase.$lang" --corpus "$d/train.tok.$lang"
    "$S/recaser/truecase.perl" --model "$d/truecase.$lang" < "$d/train.tok.$lang" > "$d/train.true.$lang"
    head -n "$TUNE_LINES" "$DATA/hansards/dev.$lang" > "$d/tune.$lang"
    prep "$lang" < "$d/tune.$lang" > "$d/tune.true.$lang"
  done
  "$S/training/clean-corpus-n.perl" "$d/train.true" en fr "$d/train.clean" 1 80
  for set in test newstest2014; do  # the raw test sets, cut to TEST_LINES
    local src=$DATA/hansards/test; [ "$set" = newstest2014 ] && src=$DATA/wmt14/newstest2014
    for lang in en fr; do head_lines "$TEST_LINES" "$src.$lang" > "$d/$set.$lang"; done
  done
  rm -f "$d"/train.tok.* "$d"/train.true.*
}

align() {
  local d=$OUT/align; mkdir -p "$d"
  $BIN/eflomal-align -s "$OUT/data/train.clean.en" -t "$OUT/data/train.clean.fr" -f "$d/forward" -r "$d/reverse" \
    --model 3 --overwrite 2> "$d/eflomal.log"
  "$S/ems/support/symmetrize-fast-align.perl" "$d/forward" "$d/reverse" "$OUT/data/train.clean.en" \
    "$OUT/data/train.clean.fr" "$d/aligned" grow-diag-final-and "$MOSES/bin/symal"
}

lm() {
  local d=$OUT/lm; mkdir -p "$d/tmp"
  "$MOSES/bin/lmplz" -o 5 -S 40% -T "$d/tmp" < "$OUT/data/train.clean.fr" > "$d/train.fr.arpa"
  "$MOSES/bin/build_binary" trie "$d/train.fr.arpa" "$d/train.fr.blm"
  rm -rf "$d/tmp" "$d/train.fr.arpa"
}

train() {  # train-model.perl's steps 4-9 one at a time, each timed (compute/train.N.time) and marked done
  # ($OUT/model/done.N): a train stopped midway goes on from the step it was in
  local step
  [ -z "${FORCE:-}" ] || rm -f "$OUT/model"/done.*
  [ -f "$OUT/model/done.4" ] || { rm -rf "$OUT/model" "$OUT/compute"/train.*time "$OUT/model.log"; mkdir -p "$OUT/model/model"; }
  for step in 4 5 6 7 8 9; do  # (step 4 writes into model/ without making it)
    [ -f "$OUT/model/done.$step" ] && continue
    echo "train-model.perl step $step: $(date -u +%FT%TZ)" >> "$OUT/model.log"
    timed "train.$step" "$S/training/train-model.perl" -root-dir "$OUT/model" -corpus "$OUT/data/train.clean" -f en \
      -e fr -alignment grow-diag-final-and -alignment-file "$OUT/align/aligned" -first-step "$step" -last-step "$step" \
      -max-phrase-length 7 -reordering msd-bidirectional-fe -lm 0:5:"$OUT/lm/train.fr.blm":8 \
      -external-bin-dir "$MOSES/bin" -cores "$THREADS" -sort-buffer-size "$SORT_MEM" -sort-parallel "$THREADS" \
      -sort-compress gzip >> "$OUT/model.log" 2>&1
    date -u +%FT%TZ > "$OUT/model/done.$step"
  done
}

tune() {
  local resume=(); [ -f "$OUT/tune/run1.moses.ini" ] && resume=(--continue)
  "$S/training/mert-moses.pl" "$OUT/data/tune.true.en" "$OUT/data/tune.true.fr" "$MOSES/bin/moses" \
    "$OUT/model/model/moses.ini" --mertdir "$MOSES/bin" --working-dir "$OUT/tune" --threads "$THREADS" \
    --decoder-flags "-threads $THREADS" ${MERT_ITERS:+--maximum-iterations "$MERT_ITERS"} "${resume[@]}" \
    > "$OUT/tune.log" 2>&1
}

decode() {  # set threads out: decode $OUT/data/$set.en with the tuned model filtered to it (skipped where $out holds
  # every line: a test phase stopped midway goes on from the set it was in)
  local set=$1 threads=$2 out=$3 d=$OUT/test
  if [ -f "$out" ] && [ "$(wc -l < "$out")" -eq "$(wc -l < "$OUT/data/$set.en")" ]; then return 0; fi
  [ -f "$d/$set.true.en" ] || prep en < "$OUT/data/$set.en" > "$d/$set.true.en"
  [ -f "$d/filtered.$set/moses.ini" ] || "$S/training/filter-model-given-input.pl" "$d/filtered.$set" \
    "$OUT/tune/moses.ini" "$d/$set.true.en" > "$d/filter.$set.log" 2>&1
  /usr/bin/time -v -o "$OUT/compute/decode.$set.$threads.time" "$MOSES/bin/moses" -f "$d/filtered.$set/moses.ini" \
    -threads "$threads" < "$d/$set.true.en" > "$out.true" 2> "$out.log"
  post < "$out.true" > "$out.partial" && mv "$out.partial" "$out"
}

test_phase() {  # the outputs (the machine may be shared: no speed is read from them); with THREADS of 2 or more, the
  # two test sets side by side on one thread each (Moses writes the same output on any number of threads)
  local d=$OUT/test; mkdir -p "$d"
  if [ "$THREADS" -ge 2 ]; then
    decode test 1 "$d/test.hyp.fr" & local a=$!
    decode newstest2014 1 "$d/newstest2014.hyp.fr" & local b=$!
    local rc=0; wait "$a" || rc=$?; wait "$b" || rc=$?
    [ "$rc" -eq 0 ] || return "$rc"
  else
    decode test "$THREADS" "$d/test.hyp.fr"
    decode newstest2014 "$THREADS" "$d/newstest2014.hyp.fr"
  fi
  post < "$OUT/tune/run1.out" > "$d/tune.untuned.hyp.fr"  # the first tuning decode: the untuned weights
  decode tune "$THREADS" "$d/tune.hyp.fr"
}

speed_phase() {  # the first SPEED_LINES test sentences, the machine to itself: Moses on 1 and THREADS threads, the
  # release VOCAB on 1 and THREADS one-thread workers (beam 12), each a whole process, loading included
  local d=$OUT/test threads; mkdir -p "$d"
  rm -rf "$d/speed.true.en" "$d/filtered.speed"  # made again for these lines (filtered before the timings)
  head -n "$SPEED_LINES" "$OUT/data/test.en" > "$OUT/data/speed.en"
  for threads in 1 "$THREADS"; do
    decode speed "$threads" "$d/speed.hyp.$threads.fr"
    OMP_NUM_THREADS=1 /usr/bin/time -v -o "$OUT/compute/rnnsearch.speed.$threads.time" $BIN/rnnsearch translate "$VOCAB" \
      --input "$OUT/data/speed.en" --output "$d/rnnsearch.speed.$threads.fr" --beam 12 --workers "$threads" 2> /dev/null
  done
  cmp -s "$d/speed.hyp.1.fr" "$d/speed.hyp.$THREADS.fr" || echo "speed: 1 and $THREADS threads wrote different outputs" >&2
}

export_phase() {
  mkdir -p "$EXPORT"
  cp "$OUT/test/test.hyp.fr" "$OUT/test/newstest2014.hyp.fr" "$EXPORT/"
  $BIN/python recipes/moses_peer.py export --out "$OUT" --vocab "$VOCAB" --to "$EXPORT"
}

run_phase() {  # phase: run it unless done (FORCE=1: again), timed (export reads the reports: not timed itself)
  local phase=$1 fn=$1
  if [ -f "$OUT/done.$phase" ] && [ -z "${FORCE:-}" ]; then echo "moses $phase: done ($OUT/done.$phase)"; return 0; fi
  if [ -f "$OUT/done.$phase" ]; then rm -f "$OUT/compute/$phase.time" "$OUT/compute/$phase"+*.time; fi  # FORCE: anew
  echo "moses $phase: started $(date -u +%FT%TZ)"
  case "$phase" in test) fn=test_phase ;; speed) fn=speed_phase ;; esac
  if [ "$phase" = export ]; then export_phase
  elif [ "$phase" = train ]; then bash -c "set -euo pipefail; train"  # timed step by step
  else timed "$phase" bash -c "set -euo pipefail; $fn"; fi || {
    local rc=$?; echo "moses $phase: failed (exit $rc) $(date -u +%FT%TZ); its logs are under $OUT" >&2; return "$rc"; }
  date -u +%FT%TZ > "$OUT/done.$phase"
  echo "moses $phase: done $(date -u +%FT%TZ)"
}

export -f timed head_lines prep post build data align lm train tune decode test_phase speed_phase export_phase
export S OUT MOSES BIN DATA PAIRS THREADS TUNE_LINES TEST_LINES SPEED_LINES VOCAB SORT_MEM EXPORT MERT_ITERS

case $STEP in
  build|data|align|lm|train|tune|test|speed|export) run_phase "$STEP" ;;
  all) for phase in build data align lm train tune test speed export; do run_phase "$phase"; done ;;
  *) echo "recipes/moses.sh: unknown phase '$STEP' (build, data, align, lm, train, tune, test, speed, export or all)" >&2
     exit 2 ;;
esac
