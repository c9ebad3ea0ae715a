#!/usr/bin/env bash
# The paper's experiment (Bahdanau et al. 2014, Table 1, Figures 2 and 3) on the Canadian
# Hansards En->Fr: RNNsearch-50 and RNNencdec-50 first (the paper's headline pair), then
# RNNsearch-30 and RNNencdec-30 (trained on pairs of at most 50 / 30 words), trained alike; then
# `rnnsearch report` on the Hansards test set and on newstest2014 (out of domain).
#
# A campaign: every model has a budget of core-hours (BUDGET, counted by the trainer over all
# invocations as the CPU time of its training loop), and each invocation continues every model
# from its last.pt until the budget is spent. Leave it running (`nohup make hansards > log &`);
# SIGTERM or SIGINT at any moment saves every model cleanly, and the next invocation goes on
# where it stopped. A trainer stopped alone (a signal to it, not to this script) saves too; then no
# further model starts, and the invocation exits 143 once the others have ended. SIGSTOP / SIGCONT
# pause it (e.g. while a benchmark is timed): CPU time does not run while stopped.
#
# Usage: recipes/hansards.sh [all|train|status|report|links|release|snapshot]   (`make hansards`, `make hansards-status`,
#        `make hansards-report`). all = train, then report on whatever checkpoints exist. links =
#        eflomal's links of the training pairs ($OUT/align/train.links; REUSE=1 keeps its earlier
#        directional links; EFLOMAL names the aligner's binary) for the -guided variant:
#        MODELS="rnnsearch50-guided rnnsearch50-fren" trains RNNsearch-50 with
#        train.guided_alignment (weight GUIDE_WEIGHT, default 0.1, cost GUIDE_COST, ce or mse; `train`
#        makes the links first where they are missing, as on a new machine), and a
#        Fr->En RNNsearch-50 (for symmetrised attention), as the others. MODELS=rnnsearch-sp trains the
#        subword release (configs/hansards_rnnsearch_sp.yaml: a joint SentencePiece BPE of SP_SIZE pieces,
#        $OUT/sp/jointSP_SIZE.model from experiments/subword_vocab.py, the pairs prepared once by
#        `rnnsearch prepare` in $OUT/prepared_spSP_SIZE_slotsRATE, both made where missing); its links (`links`)
#        index the pieces ($OUT/align_sp), and it is released as hansards_enfr_rnnsearch_sp.
#        MODELS=rnnsearch50-star trains RNNsearch-50* (Table 1's sixth row: RNNsearch-50 trained on until
#        its dev BLEU stops improving): the campaign's rnnsearch50 run continued where $OUT/rnnsearch50 still
#        holds its last.pt (its optimiser state kept; STAR_BUDGET more core-hours on top of what it had), else
#        a new run from the release $RELEASES/hansards_enfr_rnnsearch50 (`train --init`: its weights, a fresh
#        Adam at the release's last learning rate, STAR_LR to override), until STAR_PATIENCE validations
#        in a row bring no new best dev BLEU or STAR_BUDGET (36) more core-hours have passed; released as
#        hansards_enfr_rnnsearch50star, a row of the reports (RNNsearch-50*).
#        A model that finishes its budget is released (RELEASE=1, the default): its best.pt as
#        $RELEASES/hansards_enfr_NAME (default models/; hansards_fren_... for -fren; NAME with _ for -), with its test
#        BLEU measured from the released file (`rnnsearch release`); release = do that now for
#        every model of MODELS with a best.pt, finished or not. An RNNsearch is released with an
#        alignment head trained on the links of `links` when they exist (flipped for a Fr->En model;
#        HEAD, HEAD_PAIRS, HEAD_EPOCHS, HEAD_CONTEXT); one released before the links existed is made again by `release`,
#        and one whose run is gone (a new machine) gets its head trained over the release itself.
#        With AVERAGE=N (train.keep_last; cpu default 10), the release is the mean of the model's last N
#        saves (`rnnsearch average`) where that scores a higher dev BLEU than best.pt, measured as
#        validation measures it (greedy, the config's first valid_max_sentences dev pairs); else best.pt.
#        snapshot = each unfinished model's state as $SNAPSHOTS/NAME (`rnnsearch snapshot`: bf16 weights, no
#        optimiser moments, about a sixth of last.pt), to commit at the end of a session: runs/ is not in git,
#        and a new machine comes without it. `train` restores a model with no last.pt from its snapshot,
#        and skips one that has been released (its snapshot is older than its release).
#
# PROFILE=gpu: the paper's sizes (620/1000/1000/500, word shortlist 30k, Adadelta, the authors'
# loss scale and readout), bf16 autocast, MINUTES per invocation and model.
# PROFILE=cpu (default without CUDA): all pairs, word level with the paper's 30k shortlists, and the
# sizes and optimiser that learned fastest per core-hour in the probes of
# docs/results/hansards/README.md, the same for all four models.
# Knobs (environment): OUT, BUDGET (core-hours per model, cpu), MINUTES (per invocation, 0 = no
# limit), PAIRS (training pairs, 0 = all), THREADS (per trainer), JOBS (trainers at once),
# TEST_LINES (0 = whole test sets), BF16 (true|false; cpu default: whether bf16 is native here and measurably faster than float32), BEAM, SETS (extra --set for all), MODELS, TARGET (dev BLEU the
# status projects to), REPORT_SETS (hansards, newstest2014 or both), AVERAGE (saves kept and
# averaged for a release; 0 = best.pt), RELEASE, RELEASES, RELEASE_DTYPE, HEAD, HEAD_PAIRS,
# HEAD_EPOCHS, HEAD_CONTEXT, GUIDE_WEIGHT, GUIDE_COST, SNAPSHOTS, MOSES_OUT. Every invocation's settings go to $OUT/recipe.txt, which
# goes into the reports.
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${1:-all}
BIN=${BIN:-.venv/bin}
DATA=${DATA:-../shared/data}
OUT=${OUT:-runs/hansards}
PROFILE=${PROFILE:-$($BIN/python -c 'import torch; print("gpu" if torch.cuda.is_available() else "cpu")')}
TEST_LINES=${TEST_LINES:-0}
BEAM=${BEAM:-12}
TARGET=${TARGET:-20}
RELEASE=${RELEASE:-1}; RELEASES=${RELEASES:-models}  # a model that finishes its budget is released there,
RELEASE_DTYPE=${RELEASE_DTYPE:-bfloat16}                # in bf16, or int8 where its test BLEU keeps parity
SNAPSHOTS=${SNAPSHOTS:-$OUT/snapshots}  # `snapshot` writes each unfinished model's state there (never into git:
                                       # copy it off the machine); `train` restores from it when $OUT has no last.pt
MODELS=${MODELS:-rnnsearch50 rnnencdec50 rnnsearch30 rnnencdec30}
MOSES_OUT=${MOSES_OUT:-docs/results/hansards/moses}  # Moses' committed outputs (recipes/moses.sh export): a row of each report
GUIDE_WEIGHT=${GUIDE_WEIGHT:-0.1}; GUIDE_COST=${GUIDE_COST:-ce}  # the -guided variant's alignment loss
# a released RNNsearch gets an alignment head (`rnnsearch train-align-head`) on the links of `links` (flipped for Fr->En),
# when they exist: HEAD_PAIRS sampled training pairs, HEAD_EPOCHS epochs, a GRU of HEAD_CONTEXT units a
# direction over the target side's queries (`train-align-head --context`; 0: none) (HEAD=0: no head)
HEAD=${HEAD:-1}; HEAD_PAIRS=${HEAD_PAIRS:-200000}; HEAD_EPOCHS=${HEAD_EPOCHS:-2}; HEAD_CONTEXT=${HEAD_CONTEXT:-256}
SP_CONFIG=configs/hansards_rnnsearch_sp.yaml  # the -sp model's whole recipe; SP_SIZE: its vocabulary's size (chosen on dev)
SP_SIZE=${SP_SIZE:-$(sed -n 's/^  size: *//p' "$SP_CONFIG")}
SP_SLOTS=$(sed -n 's/^  slot_rate: *//p' "$SP_CONFIG")  # its share of pairs with slots (data/slotting.py)
SP_MODEL=$OUT/sp/joint$SP_SIZE.model; SP_PREPARED=$OUT/prepared_sp$SP_SIZE${SP_SLOTS:+_slots$SP_SLOTS}
SP_SETS=(--set vocab.size="$SP_SIZE" --set vocab.sp_model="$SP_MODEL")  # what prepare and train read of it
STAR_BUDGET=${STAR_BUDGET:-36}; STAR_PATIENCE=${STAR_PATIENCE:-5}  # RNNsearch-50*: more core-hours, validations without a new best
if [ "$PROFILE" = gpu ]; then
  PAIRS=${PAIRS:-0}; MINUTES=${MINUTES:-120}; BUDGET=${BUDGET:-0}; THREADS=${THREADS:-0}; JOBS=${JOBS:-1}
  AVERAGE=${AVERAGE:-0}
  SIZES=(--set train.bf16=true --set decode.batch_size=128)
else
  PAIRS=${PAIRS:-0}; MINUTES=${MINUTES:-0}; BUDGET=${BUDGET:-12}; THREADS=${THREADS:-1}; AVERAGE=${AVERAGE:-10}
  JOBS=${JOBS:-$(( $(nproc) / (THREADS > 0 ? THREADS : 1) ))}
  # The CPU profile (recipes/hansards_cpu_profile.md): the paper's equations,
  # initialisation, readout s_{i-1} and 30k word shortlists; smaller sizes, Adam (halved when 4
  # validations in a row bring no new best dev BLEU), bf16 autocast where this CPU multiplies bf16
  # natively and a probe times it at least 1.2x float32 (rnnsearch.cpu.bf16_pays; emulated bf16
  # trains at 0.04x float32's speed, and native bf16 without AMX at 0.61x on one Xeon: BENCHMARKS.md).
  BF16=${BF16:-$($BIN/python -c 'from rnnsearch.cpu import bf16_pays; print(str(bf16_pays()).lower())')}
  SIZES=(--set model.emb=256 --set model.enc_hidden=256 --set model.dec_hidden=512 --set model.att=512
         --set model.maxout=256 --set train.optimizer=adam --set train.lr=0.001 --set train.loss_scale=token
         --set train.bf16="$BF16" --set train.valid_every=1000 --set train.save_every=500
         --set train.patience=0 --set train.lr_decay=0.5 --set train.lr_decay_patience=3
         --set data.token_cache="$OUT/cache")
fi
[ "$JOBS" -ge 1 ] || JOBS=1

status() {
  local runs=()
  for name in $MODELS; do [ -f "$OUT/$name/log.jsonl" ] && runs+=("$OUT/$name"); done
  if [ ${#runs[@]} -eq 0 ]; then echo "no model of $OUT has started yet ($MODELS)"; return 0; fi
  $BIN/rnnsearch status "${runs[@]}" --target "$TARGET"
}

train_one() {  # name: trains (or continues) one model; its output goes to $OUT/$name/train.log
  local name=$1 base=${1%%-*} resume=() extra=() budget=$BUDGET
  local arch=${base%[0-9][0-9]} len=${base: -2}
  local config="configs/hansards_${arch}.yaml" sizes=("${SIZES[@]}" --set data.max_len="$len")
  case "$name" in  # variants of a model: -guided (train.guided_alignment, `links` first), -fren (Fr->En),
    # -sp (the subword release: its config holds its recipe; the vocabulary and prepared pairs first)
    *-guided) extra=(--set train.guided_alignment="$OUT/align/train.links"
                     --set train.guided_alignment_weight="$GUIDE_WEIGHT" --set train.guided_alignment_cost="$GUIDE_COST") ;;
    *-fren) extra=(--set data.src_lang=fr --set data.tgt_lang=en) ;;
    *-sp) config=$SP_CONFIG; sizes=(--set train.bf16="${BF16:-$([ "$PROFILE" = gpu ] && echo true || echo false)}")
          extra=("${SP_SETS[@]}" --set data.prepared="$SP_PREPARED") ;;
    *-star) extra=(--set train.patience="$STAR_PATIENCE") ;;  # RNNsearch-50*: its start below
  esac
  if [ ! -f "$OUT/$name/last.pt" ] && [ -f "$(release_dir "$name")/release.json" ]; then
    # a new machine where the model has been released: its snapshot is older than the release,
    # and training it again would overwrite that release
    echo "$name: released as $(release_dir "$name") and $OUT/$name has no last.pt: nothing to train"
    return 0
  fi
  mkdir -p "$OUT/$name"
  case "$name" in *-guided) need_links "$name" || return $? ;; *-sp) need_sp "$name" || return $? ;; esac
  if [ ! -f "$OUT/$name/last.pt" ] && [ -f "$SNAPSHOTS/$name/snapshot.json" ]; then  # a new machine: the committed state
    $BIN/rnnsearch restore "$SNAPSHOTS/$name" --out "$OUT/$name" | tee -a "$OUT/$name/train.log" || return 1
  fi
  case "$name" in *-star)  # the campaign's run continued, or a new run from the release
    budget=$(star_start "$name") || return 1
    [ -f "$OUT/$name/last.pt" ] || extra+=(--init "$(release_dir rnnsearch50)" --set train.lr="$(star_lr)") ;;
  esac
  [ -f "$OUT/$name/last.pt" ] && resume=(--resume)
  local start rc pid; start=$(date +%s)
  $BIN/rnnsearch train "$config" --out "$OUT/$name" "${resume[@]}" \
    --set data.dir="$DATA/hansards" --set data.max_train_pairs="$PAIRS" \
    --set train.max_minutes="$MINUTES" --set train.max_core_hours="$budget" --set train.threads="$THREADS" \
    --set train.progress=false --set train.keep_last="$AVERAGE" "${sizes[@]}" "${extra[@]}" ${SETS:-} \
    >> "$OUT/$name/train.log" 2>&1 &
  pid=$!
  trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT  # the trainer saves last.pt and exits 0
  while kill -0 "$pid" 2>/dev/null; do wait "$pid" || true; done
  wait "$pid" && rc=0 || rc=$?
  # a trainer stopped by a signal of its own (not through this script) saves and exits 0, but has
  # not finished: 143 tells train_all to start no further model
  if [ "$rc" = 0 ] && tail -n 1 "$OUT/$name/train.log" | grep -q '^stopped by '; then rc=143; fi
  echo "$name: $(( $(date +%s) - start )) s wall, exit $rc" >> "$OUT/recipe.txt"
  tail -n 1 "$OUT/$name/train.log"
  if [ "$rc" = 0 ] && [ "$RELEASE" = 1 ]; then release_one "$name" || rc=1; fi
  return "$rc"
}

star_start() {  # name: RNNsearch-50*'s start, where missing: the campaign's rnnsearch50 run copied (last.pt, its
  # log and saves) when $OUT/rnnsearch50 holds one, its core-hours then noted in $OUT/NAME/budget_base; prints
  # the run's budget in core-hours: STAR_BUDGET on top of that (STAR_BUDGET alone for a new run from the release)
  local dir="$OUT/$1" parent="$OUT/rnnsearch50"
  mkdir -p "$dir"
  if [ ! -f "$dir/last.pt" ] && [ -f "$parent/last.pt" ]; then
    echo "$1: continuing the campaign's rnnsearch50 run ($parent/last.pt, its optimiser state kept)" >> "$dir/train.log"
    cp -p "$parent"/last.pt "$parent"/config.yaml "$parent"/log.jsonl "$dir/" || return 1
    cp -p "$parent"/best.pt "$parent"/step-*.pt "$dir/" 2>/dev/null || true
    $BIN/python -c 'import sys; from rnnsearch import checkpoint
print(checkpoint.load(sys.argv[1])["train_state"]["cpu_s"] / 3600)' "$dir/last.pt" > "$dir/budget_base" || return 1
  fi
  if [ ! -f "$dir/last.pt" ] && [ ! -f "$(release_dir rnnsearch50)/release.json" ]; then
    echo "$1: neither $parent/last.pt nor the release $(release_dir rnnsearch50) to start from: train rnnsearch50 first" |
      tee -a "$dir/train.log" >&2
    return 1
  fi
  awk -v base="$(cat "$dir/budget_base" 2>/dev/null || echo 0)" -v more="$STAR_BUDGET" 'BEGIN { printf "%.6f\n", base + more }'
}

star_lr() {  # the learning rate RNNsearch-50* starts at from the release: STAR_LR, else the release's last (its log.jsonl)
  if [ -n "${STAR_LR:-}" ]; then echo "$STAR_LR"; return 0; fi
  $BIN/python -c 'import json, sys
rates = [json.loads(line).get("lr") for line in open(sys.argv[1]) if line.strip()]
rates = [r for r in rates if r]
print(rates[-1] if rates else sys.exit(sys.argv[1] + ": no learning rate logged: set STAR_LR"))' "$(release_dir rnnsearch50)/log.jsonl"
}

links_cmd() {  # eflomal's links of the training pairs, symmetrised: $OUT/align/train.links
  $BIN/python experiments/guided_links.py configs/hansards_rnnsearch.yaml --out "$OUT/align" ${REUSE:+--reuse} \
    --eflomal "${EFLOMAL:-eflomal-align}" --set data.dir="$DATA/hansards" --set data.token_cache="$OUT/cache"
}

sp_links_cmd() {  # the same over the -sp model's pieces: $OUT/align_sp/train.links
  need_sp_model "$OUT/align_sp/links.log" || return 1
  $BIN/python experiments/guided_links.py "$SP_CONFIG" --out "$OUT/align_sp" ${REUSE:+--reuse} \
    --eflomal "${EFLOMAL:-eflomal-align}" --set data.dir="$DATA/hansards" --set vocab.sp_model="$SP_MODEL"
}

align_dir() {  # name: where its links are: $OUT/align_sp for the -sp model (pieces), else $OUT/align (words)
  case "$1" in *-sp) echo "$OUT/align_sp" ;; *) echo "$OUT/align" ;; esac
}

need_sp_model() {  # log: the -sp model's joint SentencePiece model, trained where missing (output to log)
  [ -f "$SP_MODEL" ] && return 0
  mkdir -p "$(dirname "$1")"
  echo "training the joint SentencePiece model $SP_MODEL" | tee -a "$1"
  $BIN/python experiments/subword_vocab.py --sizes "$SP_SIZE" --out "$OUT/sp" --data "$DATA/hansards" \
    >> "$1" 2>&1 || { echo "subword_vocab.py failed ($1)"; return 1; }
}

need_sp() {  # name: the -sp model's joint SentencePiece model and its prepared pairs, made where missing
  need_sp_model "$OUT/$1/train.log" || return 1
  [ -f "$SP_PREPARED/manifest.json" ] && return 0
  echo "$1: preparing the training pairs in $SP_PREPARED" | tee -a "$OUT/$1/train.log"
  $BIN/rnnsearch prepare "$SP_CONFIG" --out "$SP_PREPARED" --set data.dir="$DATA/hansards" \
    "${SP_SETS[@]}" --set data.max_train_pairs="$PAIRS" ${SETS:-} \
    >> "$OUT/$1/train.log" 2>&1 || { echo "$1: prepare failed ($OUT/$1/train.log)"; return 1; }
}

need_links() {  # name: a -guided model learns from the training links; where they are missing (a new machine),
  # `links` makes them first, in a process group of its own that SIGTERM stops whole (exit 143)
  [ -f "$OUT/align/train.links" ] && return 0
  mkdir -p "$OUT/align"
  echo "$1: $OUT/align/train.links is missing: making it first (\`links\`, eflomal; log: $OUT/align/links.log)" |
    tee -a "$OUT/$1/train.log"
  local pid stop=0
  setsid bash -c "$(declare -f links_cmd); $(declare -p BIN OUT DATA); links_cmd" > "$OUT/align/links.log" 2>&1 &
  pid=$!
  trap 'stop=1; kill -TERM -- -"$pid" 2>/dev/null || true' TERM INT
  while kill -0 "$pid" 2>/dev/null; do wait "$pid" || true; done
  trap - TERM INT
  if wait "$pid"; then tail -n 1 "$OUT/align/links.log" | tee -a "$OUT/$1/train.log"; return 0; fi
  [ "$stop" = 0 ] || return 143
  echo "$1: not trained: \`links\` failed ($OUT/align/links.log: $(tail -n 1 "$OUT/align/links.log"))" | tee -a "$OUT/$1/train.log"
  return 1
}

release_dir() {  # name: its release folder, $RELEASES/hansards_{enfr|fren}_NAME, with NAME's other hyphens
  # as underscores (rnnsearch50-guided: hansards_enfr_rnnsearch50_guided), so that the release's name is
  # also its torch.hub entry's (hubconf.py)
  # (rnnsearch50-star: hansards_enfr_rnnsearch50star)
  local name=${1%-fren} dir=enfr
  [ "$name" = "$1" ] || dir=fren
  name=${name/%-star/star}
  echo "$RELEASES/hansards_${dir}_${name//-/_}"
}

release_current() {  # name: true when its release exists and is not older than its best.pt or its
  # newest kept save (if any), and, for an RNNsearch once the links exist (HEAD=1), has an alignment head
  local release newest; release=$(release_dir "$1")
  newest=$(ls -t "$OUT/$1"/best.pt "$OUT/$1"/step-*.pt 2>/dev/null | head -n 1)
  [ -f "$release/release.json" ] && { [ -z "$newest" ] || [ "$release/release.json" -nt "$newest" ]; } || return 1
  case "$1" in rnnencdec*) return 0 ;; esac
  [ "$HEAD" != 1 ] || [ ! -f "$(align_dir "$1")/train.links" ] || grep -q '"source": ".*\.head\.pt"' "$release/release.json"
}

choose() {  # name: prints the checkpoint to release: average.pt, the mean of the last AVERAGE saves
  # (step-*.pt, train.keep_last), where its dev BLEU is higher than best.pt's, else best.pt; the
  # comparison (greedy, the first valid_max_sentences dev pairs read as validation reads them) goes
  # to $OUT/NAME/average.json
  local name=$1 dir="$OUT/$1" src=en tgt=fr kept=()
  case "$name" in *-fren) src=fr; tgt=en ;; esac
  [ "$AVERAGE" -ge 2 ] && mapfile -t kept < <(ls "$dir"/step-*.pt 2>/dev/null | tail -n "$AVERAGE")
  if [ ${#kept[@]} -lt 2 ]; then echo "$dir/best.pt"; return 0; fi
  if [ ! -f "$dir/average.json" ] || [ "${kept[-1]}" -nt "$dir/average.json" ] || [ "$dir/best.pt" -nt "$dir/average.json" ]; then
    { $BIN/python -c 'import sys
from rnnsearch.config import load
from rnnsearch.data.corpus import read_dev
cfg = load(sys.argv[1]); dev = read_dev(cfg, print)  # the dev pairs as validation reads them
for path, lines in zip(sys.argv[2:], dev):
    open(path, "w", encoding="utf-8").write("".join(x + "\n" for x in lines[:cfg.train.valid_max_sentences or None]))' \
        "$dir/config.yaml" "$dir/dev_head.$src" "$dir/dev_head.$tgt" &&
      $BIN/rnnsearch average "${kept[@]}" --out "$dir/average.pt" &&
      OMP_NUM_THREADS=$(( THREADS > 0 ? THREADS : $(nproc) )) $BIN/rnnsearch evaluate "$dir/best.pt" --compare "$dir/average.pt" \
        --names best,average --src "$dir/dev_head.$src" --ref "$dir/dev_head.$tgt" --beam 1 --json > "$dir/average.json.tmp" &&
      mv "$dir/average.json.tmp" "$dir/average.json"; } > "$dir/average.log" 2>&1 || return 1
  fi
  $BIN/python -c 'import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2] if r["average"]["bleu"] > r["best"]["bleu"] else sys.argv[3])' \
    "$dir/average.json" "$dir/average.pt" "$dir/best.pt"
}

links_for() {  # name: the training links in that model's direction: $(align_dir)/train.links (`links`,
  # source = English), or for a Fr->En model those links flipped (t-s), $OUT/align/train.fren.links
  local links="$(align_dir "$1")/train.links" flipped="$OUT/align/train.fren.links"
  case "$1" in *-fren) ;; *) echo "$links"; return 0 ;; esac
  if [ ! -f "$flipped" ] || [ "$links" -nt "$flipped" ]; then
    awk '{ for (k = 1; k <= NF; k++) { split($k, st, "-"); $k = st[2] "-" st[1] } print }' "$links" > "$flipped.tmp" &&
      mv "$flipped.tmp" "$flipped" || return 1
  fi
  echo "$flipped"
}

with_head() {  # name model [head]: prints the checkpoint to release: the model (a checkpoint, or a
  # release folder) with an alignment head, written to head (by default beside the checkpoint as
  # NAME.head.pt: best.head.pt, average.head.pt; trained when missing or older than the model), for an
  # RNNsearch when the links exist (links_for), else the model
  local name=$1 ckpt=$2 head=${3:-${2%.pt}.head.pt} stamp=$2 links
  [ ! -d "$ckpt" ] || stamp="$ckpt/release.json"
  case "$name" in rnnencdec*) echo "$ckpt"; return 0 ;; esac
  if [ "$HEAD" != 1 ] || [ ! -f "$(align_dir "$name")/train.links" ]; then echo "$ckpt"; return 0; fi
  links=$(links_for "$name") || return 1
  if [ ! -f "$head" ] || [ "$stamp" -nt "$head" ]; then
    $BIN/rnnsearch train-align-head "$ckpt" --links "$links" --out "$head" --pairs "$HEAD_PAIRS" \
      --epochs "$HEAD_EPOCHS" --context "$HEAD_CONTEXT" --threads "$THREADS" --set data.dir="$DATA/hansards" \
      > "$OUT/$name/head.log" 2>&1 || return 1
  fi
  echo "$head"
}

release_one() {  # name: a finished model's best.pt as its release (release_dir), test BLEU measured
  local name=$1 dest best="$OUT/$1/best.pt"; dest=$(release_dir "$1")
  if [ ! -f "$best" ] && [ -f "$dest/release.json" ]; then head_release "$name"; return; fi  # its run is gone
  if [ ! -f "$best" ]; then echo "$name: no best.pt (no validation yet): not released"; return 0; fi
  if release_current "$name"; then echo "$name: $dest is up to date"; return 0; fi
  local chosen source what="best dev BLEU checkpoint"
  chosen=$(choose "$name") || { echo "$name: averaging failed:"; tail -n 5 "$OUT/$name/average.log"; return 1; }
  [ "$chosen" = "$best" ] ||
    what="mean of its last $(ls "$OUT/$name"/step-*.pt | tail -n "$AVERAGE" | wc -l) saves (rnnsearch average; dev BLEU $(average_bleus "$name"))"
  source=$(with_head "$name" "$chosen") || { echo "$name: alignment head failed:"; tail -n 5 "$OUT/$name/head.log"; return 1; }
  publish "$name" "$source" "$RELEASE_DTYPE" \
    "The Hansards campaign's $name (recipes/hansards.sh, $PROFILE profile): $what$([ "$source" = "$chosen" ] || echo ", with an alignment head (rnnsearch align --head)").$(ended "$name")"
}

publish() {  # name checkpoint dtype description: `rnnsearch release` of the checkpoint as the model's
  # release (release_dir), its test BLEU measured from the released file
  local name=$1 src=en tgt=fr dest; dest=$(release_dir "$1")
  case "$name" in *-fren) src=fr; tgt=en ;; esac
  echo "$name: releasing $2 as $dest (test BLEU, beam $BEAM; log: $OUT/$name/release.log)"
  mkdir -p "$RELEASES"
  OMP_NUM_THREADS=$(( THREADS > 0 ? THREADS : $(nproc) )) $BIN/rnnsearch release "$2" --out "$dest" --force \
    --src "$DATA/hansards/test.$src" --ref "$DATA/hansards/test.$tgt" --beam "$BEAM" --dtype "$3" --description "$4" \
    > "$OUT/$name/release.log" 2>&1 || { echo "$name: release failed:"; tail -n 5 "$OUT/$name/release.log"; return 1; }
  tail -n 1 "$OUT/$name/release.log"
}

head_release() {  # name: its release, whose run is gone (a new machine), made again with an alignment head
  # trained over the release itself once the links exist (HEAD=1): the translation weights as they were
  # (re-packed in the release's dtype to the same values), the release's training log and description kept
  local name=$1 dest dir="$OUT/$1/from_release" source dtype description; dest=$(release_dir "$1")
  if release_current "$name"; then echo "$name: $dest is up to date"; return 0; fi
  if [ "$HEAD" != 1 ] || [ ! -f "$(align_dir "$name")/train.links" ]; then echo "$name: $dest stays (no best.pt to release)"; return 0; fi
  mkdir -p "$dir"
  source=$(with_head "$name" "$dest" "$dir/release.head.pt") ||
    { echo "$name: alignment head failed:"; tail -n 5 "$OUT/$name/head.log"; return 1; }
  [ ! -f "$dest/log.jsonl" ] || cp "$dest/log.jsonl" "$dir/log.jsonl"  # `release` takes the log beside its checkpoint
  { read -r dtype; read -r description; } < <($BIN/python -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["dtype"]); print(r["description"].rstrip(".") + ", with an alignment head (rnnsearch align --head) trained over its earlier release.")' \
    "$dest/release.json")
  publish "$name" "$source" "$dtype" "$description"
}

ended() {  # name: " Its training ended: REASON (update N)." from the trainer's last end line, if it has one
  sed -nE 's/^((early stopping|reached)[: ].*)\. step ([0-9]+), .*/ Its training ended: \1 (update \3)./p' "$OUT/$1/train.log" 2> /dev/null | tail -n 1
}

average_bleus() {  # name: "X against best.pt's Y", the dev BLEU of $OUT/NAME/average.json
  $BIN/python -c 'import json, sys; r = json.load(open(sys.argv[1]))
print("%.2f against %.2f for best.pt" % (r["average"]["bleu"], r["best"]["bleu"]))' "$OUT/$1/average.json"
}

collect() {  # the exit status of a finished train_one: 143 = stopped before its end, else a failure
  case "$1" in 0) ;; 143) stopped=1 ;; *) failed=1 ;; esac
}

train_all() {
  mkdir -p "$OUT"
  {
    echo "profile: $PROFILE; training pairs: ${PAIRS} (0 = all 1,021,889); budget: $BUDGET core-hours per model"
    echo "(0 = none); minutes per invocation: $MINUTES; threads: $THREADS x $JOBS trainers; machine: $(nproc) cores,"
    echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $($BIN/python -c 'import torch; print("torch", torch.__version__)');"
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ); models: $MODELS; overrides: ${SIZES[*]} ${SETS:-}; saves averaged: $AVERAGE"
    case " $MODELS " in *-guided\ *) echo "guided alignment (the -guided variant): weight $GUIDE_WEIGHT, cost $GUIDE_COST" ;; esac
    case " $MODELS " in *-sp\ *) echo "the -sp model: $SP_CONFIG as it is (not the overrides above but train.bf16), $SP_SIZE pieces ($SP_MODEL)" ;; esac
  } >> "$OUT/recipe.txt"  # each invocation appends its header, then its wall times
  # SIGTERM/SIGINT: every trainer saves last.pt and exits; this script waits for them.
  trap 'echo "stopping: the trainers save last.pt"; kill -TERM $(jobs -p) 2>/dev/null; wait; exit 143' TERM INT
  local failed=0 stopped=0 rc
  for name in $MODELS; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n && rc=0 || rc=$?; collect "$rc"; done
    [ "$stopped" = 0 ] || break
    echo "training $name (log: $OUT/$name/train.log)"
    train_one "$name" &
  done
  while [ -n "$(jobs -rp)" ]; do wait -n && rc=0 || rc=$?; collect "$rc"; done
  trap - TERM INT
  status
  if [ "$stopped" = 1 ]; then
    echo "a trainer was stopped by a signal before its end: no further model was started; the next invocation goes on"
    return 143
  fi
  return "$failed"
}

report_all() {
  mkdir -p "$OUT/test"
  for pair in "hansards/test hansards" "wmt14/newstest2014 newstest2014"; do  # whole or first TEST_LINES
    set -- $pair
    for lang in en fr; do
      if [ "$TEST_LINES" -gt 0 ]; then head -n "$TEST_LINES" "$DATA/$1.$lang" > "$OUT/test/$2.$lang"
      else cp "$DATA/$1.$lang" "$OUT/test/$2.$lang"; fi
    done
  done
  local models=() figure3=()
  for name in rnnencdec30 rnnsearch30 rnnencdec50 rnnsearch50 rnnsearch50-star; do  # the paper's row order
    # a model's release where it is up to date (its BLEU is then the model card's), else its best.pt
    local ckpt="$OUT/$name/best.pt"
    if release_current "$name"; then ckpt=$(release_dir "$name"); fi
    [ -e "$ckpt" ] || continue
    local label; label=$(sed -E 's/rnnsearch/RNNsearch-/; s/rnnencdec/RNNencdec-/; s/-star$/*/' <<< "$name")
    models+=(--model "$label=$ckpt")
    [ "$name" = rnnsearch50 ] && figure3=(--figure3 RNNsearch-50)
  done
  if [ ${#models[@]} -eq 0 ]; then echo "no checkpoint in $OUT yet: nothing to report"; return 1; fi
  local notes=() device=cpu; [ "$PROFILE" = cpu ] && notes=(--notes recipes/hansards_cpu_profile.md)
  [ "$PROFILE" = gpu ] && device=cuda
  if [ "$THREADS" -gt 0 ]; then export OMP_NUM_THREADS="$THREADS"; fi  # the search's threads, as training's
  for set in ${REPORT_SETS:-hansards newstest2014}; do
    local given=() moses=$MOSES_OUT/test.hyp.fr; [ "$set" = newstest2014 ] && moses=$MOSES_OUT/newstest2014.hyp.fr
    if [ -f "$moses" ] && [ "$TEST_LINES" -eq 0 ] && [ "$(wc -l < "$moses")" -eq "$(wc -l < "$OUT/test/$set.en")" ]; then
      given=(--output "Moses=$moses")  # the peer's row, where it translated this test set (not another DATA's)
    fi
    $BIN/rnnsearch report "${models[@]}" "${given[@]}" "${figure3[@]}" "${notes[@]}" --src "$OUT/test/$set.en" --ref "$OUT/test/$set.fr" \
      --out "$OUT/report_$set" --beam "$BEAM" --device "$device" \
      --sentence "The agreement on the European Economic Area was signed in August 1992 ."
    if [ -f "$OUT/recipe.txt" ]; then cp "$OUT/recipe.txt" "$OUT/report_$set/recipe.txt"; fi  # the models' training, where it ran here
  done
  echo "reports: $OUT/report_*/report.md"
}

snapshot_all() {  # every model of MODELS with a last.pt and no up-to-date release: its state in $SNAPSHOTS/NAME
  local rc=0
  for name in $MODELS; do
    [ -f "$OUT/$name/last.pt" ] || continue
    if release_current "$name"; then echo "$name: released ($(release_dir "$name")): no snapshot needed"; continue; fi
    $BIN/rnnsearch snapshot "$OUT/$name" --out "$SNAPSHOTS/$name" || rc=1
  done
  return "$rc"
}

case "$STEP" in
  all) train_all; report_all ;;
  train) train_all ;;
  links) case " $MODELS " in *-sp\ *) sp_links_cmd ;; esac  # the pieces' links for an -sp model,
         case " $MODELS " in *[0-9]\ *|*-guided\ *|*-fren\ *|*-star\ *) links_cmd ;; esac ;;  # the words' for the others
  status) status ;;
  report) report_all ;;
  release) rc=0; for name in $MODELS; do release_one "$name" || rc=1; done; exit "$rc" ;;
  snapshot) snapshot_all ;;
  *) echo "usage: $0 [all|train|status|report|links|release|snapshot]" >&2; exit 2 ;;
esac
