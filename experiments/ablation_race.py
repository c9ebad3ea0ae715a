"""One change at a time on the Marian race's settings (#87): rnnsearch trained with the race's config
(benchmarks/marian.py: 200,000 Hansards pairs, emb 256, RNN 512, batches of 80, Adam 1e-3, token-mean
loss, clip 1) and with each change given (``--change NAME=--set K=V ...``), side by side for the same
minutes, one thread each (so that the runs share the machine evenly), the same seed; then dev BLEU
(the race's 500 dev pairs, greedy) and dev NLL per unit of each averaged over the last three snapshots all
reached (equal updates), dev BLEU at the end (equal minutes), and both along the way every 500 updates.

    python experiments/ablation_race.py --minutes 40 --out runs/ablation \\
        --change "xavier=model.init=xavier" --change "sentence-loss=train.loss_scale=sentence"
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from marian import OURS, prepare  # noqa: E402  (benchmarks/: the race's settings and data)

SAVE_EVERY = 100  # updates between the snapshots equal updates are read from
MEAN_OF = 3  # equal updates: dev BLEU averaged over the last 3 snapshots all runs have
CURVE_EVERY = 500  # and the dev BLEU curve at every 500th update


def train(name: str, sets: list[str], work: Path, minutes: float, resume: bool = False) -> subprocess.Popen:
    out = work / name
    cmd = [str(ROOT / ".venv" / "bin" / "rnnsearch"), "train", str(ROOT / "configs" / "hansards_rnnsearch.yaml"),
           *(["--resume"] if resume else []),
           "--out", str(out), *OURS, "--set", f"data.dir={work / 'data'}", "--set", f"train.max_minutes={minutes}",
           "--set", "train.threads=1", "--set", f"train.save_every={SAVE_EVERY}", "--set", "train.keep_last=1000"]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    log = open(work / f"{name}.log", "a" if resume else "w")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)


def on_dev(command: str, checkpoint: Path, work: Path, *flags: str) -> str:
    """``rnnsearch COMMAND CHECKPOINT`` on the race's 500 dev pairs, --json: its standard output."""
    data = work / "data"
    ref = "--ref" if command == "evaluate" else "--tgt"
    return subprocess.run([str(ROOT / ".venv" / "bin" / "rnnsearch"), command, str(checkpoint), "--src",
                           str(data / "dev.en"), ref, str(data / "dev.fr"), *flags, "--json"],
                          capture_output=True, text=True, check=True).stdout


def dev_bleu(checkpoint: Path, work: Path) -> float:
    """Greedy dev BLEU of a checkpoint (rnnsearch evaluate)."""
    return json.loads(on_dev("evaluate", checkpoint, work, "--beam", "1"))["bleu"]


def dev_nll(checkpoint: Path, work: Path) -> tuple[float, float]:
    """Dev NLL of a checkpoint (rnnsearch score) per target unit (</s> included) and per character of
    the references (each line's end counted as one, as its </s>): less noisy than greedy BLEU this
    early, the same measure whatever the training loss, and per character the same whatever the
    vocabulary (words or pieces of any size)."""
    pairs = [json.loads(line) for line in on_dev("score", checkpoint, work).splitlines()]
    nll = -sum(p["logprob"] for p in pairs)
    chars = sum(len(line) + 1 for line in (work / "data" / "dev.fr").read_text(encoding="utf-8").splitlines())
    return nll / sum(p["units"] for p in pairs), nll / chars


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=40)
    p.add_argument("--out", type=Path, default=Path("runs/ablation"))
    p.add_argument("--pairs", type=int, default=200000)
    p.add_argument("--change", action="append", default=[], help="NAME=KEY=VALUE[,KEY=VALUE]: one run with these")
    p.add_argument("--score-only", action="store_true", help="score the runs already in --out (no training)")
    p.add_argument("--resume", action="store_true", help="go on with the runs in --out that a SIGTERM stopped "
                   "(their data as prepared; the minutes count over resumes), then score")
    p.add_argument("--no-base", action="store_true", help="only the runs --change names, not the race config "
                   "itself (its runs repeat: its numbers are in docs/results/ablation_race.md)")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs = ({} if args.no_base else {"race config": []}) | {c.split("=", 1)[0]: c.split("=", 1)[1].split(",")
                                                             for c in args.change}
    if not args.score_only:
        if not args.resume:
            prepare(args.out, args.pairs, 500)
        procs = {name: train(name.replace(" ", "_"), sets, args.out, args.minutes, args.resume)
                 for name, sets in runs.items()}
        for name, proc in procs.items():
            if proc.wait():
                sys.exit(f"ablation_race: {name} failed (see {args.out / name.replace(' ', '_')}.log)")
    folders = {name: args.out / name.replace(" ", "_") for name in runs}
    steps = {name: sorted(int(f.stem.split("-")[1]) for f in d.glob("step-*.pt")) for name, d in folders.items()}
    common = sorted(set.intersection(*(set(s) for s in steps.values())))  # the snapshots every run has
    last = common[-MEAN_OF:]  # equal updates: the mean over the last MEAN_OF common snapshots (less noise)
    curve = [s for s in common if s % CURVE_EVERY == 0 and s not in last] + last
    rows = []
    for name, d in folders.items():
        updates = json.loads((d / "log.jsonl").read_text().splitlines()[-1]).get("step")
        at = {s: dev_bleu(d / f"step-{s:08d}.pt", args.out) for s in curve}
        both = {s: dev_nll(d / f"step-{s:08d}.pt", args.out) for s in curve}
        nll, per_char = ({s: v[i] for s, v in both.items()} for i in (0, 1))
        rows.append({"run": name, "sets": runs[name], "updates": updates, "curve": at, "nll_curve": nll,
                     "nll_char_curve": per_char,
                     "bleu_equal_updates": sum(at[s] for s in last) / len(last),
                     "nll_equal_updates": sum(nll[s] for s in last) / len(last),
                     "nll_char_equal_updates": sum(per_char[s] for s in last) / len(last),
                     "bleu_equal_minutes": dev_bleu(d / "last.pt", args.out)})
        print(json.dumps(rows[-1]), flush=True)
    (args.out / "ablation.json").write_text(json.dumps({"minutes": args.minutes, "common_steps": last, "rows": rows},
                                                       indent=1) + "\n")
    span = f"{last[0]}-{last[-1]}" if len(last) > 1 else f"{last[-1]}"
    print(f"| run | change | updates in {args.minutes:g} min | dev BLEU at updates {span} (mean) | dev NLL per unit "
          f"there (mean) | per character | dev BLEU at {args.minutes:g} min |\n|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['run']} | {', '.join(r['sets']) or '-'} | {r['updates']} | {r['bleu_equal_updates']:.2f} | "
              f"{r['nll_equal_updates']:.3f} | {r['nll_char_equal_updates']:.4f} | {r['bleu_equal_minutes']:.2f} |")
    print("\n| run (dev BLEU / dev NLL) | " + " | ".join(str(s) for s in curve) + " |\n|---|" + "---:|" * len(curve))
    for r in rows:
        print(f"| {r['run']} | " + " | ".join(f"{r['curve'][s]:.2f} / {r['nll_curve'][s]:.3f}" for s in curve) + " |")

if __name__ == "__main__":
    main()
