#!/bin/bash
# The Fr->En RNNsearch-50 (#63) on a lent GPU machine (the workplace's device tool): the CPU profile's
# sizes and optimiser (those of the En->Fr release, so that the two directions' alignment heads
# combine; recipes/hansards_cpu_profile.md), all 1,021,889 Hansards pairs of at most 50 words, bf16
# autocast, minibatches of 256, MINUTES of training loop; then released (bf16) with its Hansards test BLEU at beam 12, and the release's decoding
# timed on the GPU at beam 5 and 12 (whole `rnnsearch translate` processes).
#
# Stage here with recipes/device/stage.sh (.gpu/: wheels, the corpus xz-compressed), move the
# releases under models/ aside for the call (the tool sends the working tree and `carry`, 64 MiB in
# all), and there, with carry [".gpu"]:   bash recipes/device/fren.sh MINUTES
# $OUT gets fren.log, prepare.log, train.log, release.log, decode.txt and the release folder with the
# run's log as fren.tgz.aa, .ab, ... (cat them | tar xz). DEVICE=cpu PAIRS=2000 MINUTES=0.3: a smoke test.
set -u
MIN=${1:-5}; DEVICE=${DEVICE:-cuda}; PAIRS=${PAIRS:-0}; WORK=${WORK:-/tmp/fren}
say() { echo "[fren $(date -u +%H:%M:%S)] $*" | tee -a "$OUT/fren.log"; }
if [ -d .gpu/whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/src
fi
export PYTHONUNBUFFERED=1
mkdir -p /tmp/bin "$WORK"
printf '#!/bin/sh\nexec python3 -m rnnsearch "$@"\n' > /tmp/bin/rnnsearch; chmod +x /tmp/bin/rnnsearch
export PATH=/tmp/bin:$PATH
D=$WORK/data
if [ ! -f "$D/train.fr" ]; then
  mkdir -p "$D" && cp .gpu/data/hansards/{dev,test}.* "$D/"
  xz -dc .gpu/data/hansards/train.en.xz > "$D/train.en" & xz -dc .gpu/data/hansards/train.fr.xz > "$D/train.fr" & wait
fi
say "$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null); $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'); $(nproc) cores; $(wc -l < "$D/train.fr") pairs"
S=(--set data.dir="$D" --set data.src_lang=fr --set data.tgt_lang=en --set data.max_len=50 --set data.max_train_pairs="$PAIRS"
   --set model.emb=256 --set model.enc_hidden=256 --set model.dec_hidden=512 --set model.att=512 --set model.maxout=256)
rnnsearch prepare configs/hansards_rnnsearch.yaml "${S[@]}" --workers "$(nproc)" --out "$WORK/prepared" --force \
  > "$OUT/prepare.log" 2>&1 || { say "prepare failed: $(tail -n 2 "$OUT/prepare.log")"; exit 1; }
say "prepared: $(tail -n 1 "$OUT/prepare.log")"
RUN=$WORK/rnnsearch50-fren
rnnsearch train configs/hansards_rnnsearch.yaml "${S[@]}" --set data.prepared="$WORK/prepared" --out "$RUN" \
  --set train.device="$DEVICE" --set train.bf16=true --set train.optimizer=adam --set train.lr=0.001 \
  --set train.loss_scale=token --set train.batch_size=256 --set train.valid_every=1000 --set train.save_every=1000 \
  --set train.valid_max_sentences=500 --set train.patience=0 --set train.max_minutes="$MIN" --set train.progress=false \
  > "$OUT/train.log" 2>&1
say "train exit $?: $(tail -n 1 "$OUT/train.log")"
REL=$WORK/hansards_fren_rnnsearch50
DESC="Fr->En RNNsearch-50: the CPU profile's sizes and optimiser (recipes/hansards_cpu_profile.md) with minibatches of 256, trained for $MIN minutes on one $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) (recipes/device/fren.sh)."
rnnsearch release "$RUN/best.pt" --out "$REL" --src "$D/test.fr" --ref "$D/test.en" --beam 12 --description "$DESC" \
  > "$OUT/release.log" 2>&1
say "release exit $?: $(tail -n 1 "$OUT/release.log")"
tar czf - -C "$WORK" hansards_fren_rnnsearch50 | split -b 15M - "$OUT/fren.tgz."
for beam in 5 12; do
  [ "$SECONDS" -lt "${DEADLINE:-540}" ] || { say "no time left for beam $beam"; break; }
  start=$(date +%s.%N)
  rnnsearch translate "$REL" --device "$DEVICE" --beam "$beam" --batch-size 128 --input "$D/test.fr" --output "$WORK/test.b$beam.en" 2> "$WORK/decode.err" ||
    say "translate beam $beam failed: $(tail -n 1 "$WORK/decode.err")"
  end=$(date +%s.%N)
  echo "beam $beam batch 128 $DEVICE: $(wc -l < "$D/test.fr") sentences, $(wc -w < "$WORK/test.b$beam.en") output words, $(python3 -c "print(round($end - $start, 2))") s whole process" | tee -a "$OUT/decode.txt"
done
say "done: $(ls "$OUT" | tr '\n' ' ')"
