"""``make race``: time to quality, rnnsearch's recommended config against Marian's s2s on the race's
settings (#87): the same data, sizes, batches, optimiser and threads as ``make bench-marian``
(benchmarks/marian.py: 200,000 Hansards pairs, emb 256, RNN 512, 30,000 words, batches of 80 sorted in
pools of 20, Adam 1e-3, 2 threads), rnnsearch with the training choices of the config the README
recommends (configs/hansards_rnnsearch_sp.yaml: CHOICES) on the race's word vocabulary.

    python benchmarks/race_quality.py [--marks 15 30 ... 180] [--phase all|train-rnnsearch|train-marian|score]
        [--quick] [--record] [--work DIR] [--venv DIR]

Each system trains up to each mark in turn (its minutes counted over the runs as the race counts them:
rnnsearch's trainer from its first update, Marian from "Training started"), and its model at each mark is
kept (rnnsearch's last.pt, Marian's model.npz); then every kept model translates the race's 500 dev pairs
at beam 5, and the tables give each system's dev BLEU per mark and the minutes each needs to reach the
other's dev BLEU at the last mark (benchmarks/marian_report.py: quality_table). SIGTERM stops a training
phase with its model saved; the same command goes on from there (marks already kept are skipped), and
the scores already measured are kept in quality.json. A race needs the machine to itself: pause other
long runs (SIGSTOP) while it trains; and it goes on only on the machine it began on (quality.json keeps
it): a run on another refuses, as its minutes are other minutes.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import date
from pathlib import Path

import marian as race
from common import ROOT, machine, record, say
from marian_report import quality_table

RECOMMENDED = ROOT / "configs" / "hansards_rnnsearch_sp.yaml"  # the README's config to start from
CHOICES = (("train", "loss_scale"), ("model", "init_state"))  # its training choices the ablation kept
MARKS = (15, 30, 45, 60, 72, 90, 120, 150, 180)


def recommended_sets() -> tuple[str, ...]:
    """``--set`` arguments giving the race's rnnsearch the recommended config's training choices."""
    from rnnsearch.config import load
    cfg = load(RECOMMENDED)
    return tuple(x for section, key in CHOICES for x in ("--set", f"{section}.{key}={getattr(getattr(cfg, section), key)}"))


def train_to_marks(system: str, work: Path, venv: Path, marks: list[float], threads: int, state: dict) -> None:
    """Train ``system`` up to each mark it has no kept model for, keeping each (``state``: the run's
    records, saved to quality.json after each mark)."""
    kept = work / "kept" / system
    kept.mkdir(parents=True, exist_ok=True)
    for mark in marks:
        key = f"{mark:g}"
        if key in state[system]:
            continue
        if system == "rnnsearch":
            result = race.train_ours(work, mark, threads, resume=True, extra=recommended_sets())
        else:
            result = race.train_marian(work, venv, mark, threads, resume=True)
        if result["stopped"]:
            sys.exit(f"stopped by SIGTERM while training {system} towards {key} minutes (saved): "
                     f"the same command goes on")
        model = kept / (f"{key}.pt" if system == "rnnsearch" else f"{key}.npz")
        shutil.copyfile(result["checkpoint"], model)
        state[system][key] = {"model": str(model), "updates": result["updates"], "tok_per_s": result["tok_per_s"]}
        save(work, state)
        say(f"{system} at {key} minutes: {result['updates']:,} updates")


def score(work: Path, venv: Path, threads: int, state: dict) -> None:
    """Dev BLEU (500 pairs, beam 5) of every kept model not yet scored."""
    for system in ("rnnsearch", "marian"):
        for key, entry in sorted(state[system].items(), key=lambda kv: float(kv[0])):
            if "bleu" not in entry:
                lines = race.decode(system, work, venv, Path(entry["model"]), "dev", 5, threads, False)["lines"]
                entry["bleu"] = race.bleu(lines, work / "data" / "dev.fr")
                save(work, state)
                say(f"{system} at {key} minutes: dev BLEU {entry['bleu']:.2f}")


def same_machine(state: dict, here: str, work: Path) -> None:
    """A race goes on only on the machine it began on (the minutes of another are not the same minutes):
    the first run records it, a later one on another machine stops with what to do."""
    state.setdefault("machine", here)
    if state["machine"] != here:
        sys.exit(f"{work}: this race began on {state['machine']}; this machine is {here}: its minutes would not "
                 f"be comparable. Go on there, or start the race again here with another --work")


def save(work: Path, state: dict) -> None:
    (work / "quality.json").write_text(json.dumps(state, indent=1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", type=Path, default=ROOT / "benchmarks" / ".marian-venv")
    p.add_argument("--work", type=Path, default=ROOT / "runs" / "race_quality")
    p.add_argument("--pairs", type=int, default=200_000)
    p.add_argument("--marks", type=float, nargs="+", default=list(MARKS), help="minutes at which each model is kept")
    p.add_argument("--threads", type=int, default=2, help="training threads")
    p.add_argument("--phase", choices=["all", "train-rnnsearch", "train-marian", "score"], default="all")
    p.add_argument("--quick", action="store_true", help="20,000 pairs, marks at 1 and 2 minutes")
    p.add_argument("--record", action="store_true", help="write the tables to BENCHMARKS.md")
    args = p.parse_args()
    if args.quick:
        args.pairs, args.marks = 20_000, [1.0, 2.0]
    if not (args.venv / "bin" / "pymarian").exists():
        sys.exit(f"{args.venv}: no pymarian there: `make marian` installs it")
    marks = sorted(set(args.marks))
    args.work.mkdir(parents=True, exist_ok=True)
    say(f"data: {race.prepare(args.work, args.pairs, 1)}")  # (one test line: the race's start-up sentence)
    saved = args.work / "quality.json"
    state = json.loads(saved.read_text()) if saved.exists() else {"rnnsearch": {}, "marian": {}}
    same_machine(state, machine(args.threads), args.work)
    for system in ("rnnsearch", "marian"):
        if args.phase in ("all", f"train-{system}"):
            train_to_marks(system, args.work, args.venv, marks, args.threads, state)
    if args.phase not in ("all", "score"):
        return
    score(args.work, args.venv, args.threads, state)
    curves = {s: {float(k): v for k, v in state[s].items() if "bleu" in v} for s in ("rnnsearch", "marian")}
    last = {s: curves[s][max(curves[s])] for s in curves if curves[s]}
    rates = [last[s]["tok_per_s"] for s in last]
    ratio = rates[0] / rates[1] if len(rates) == 2 and None not in rates else None
    body = quality_table(curves, ratio)
    print(body)
    if args.record:
        record("Time to quality: rnnsearch's recommended config against Marian's s2s (Hansards, CPU)",
               f"`make race` on {date.today()}: {state['machine']}; {args.pairs:,} Hansards pairs, dev BLEU on "
               f"500 dev pairs at beam 5 of the models kept at each mark; rnnsearch with "
               f"{' '.join(recommended_sets()[1::2])}.\n\n" + body)


if __name__ == "__main__":
    main()
