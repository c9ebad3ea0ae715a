"""What continuing from a snapshot costs (`rnnsearch snapshot` / `restore`: bf16 weights, Adam's
moments from zero) against continuing from last.pt, on the same batches in the same order.

A config is trained to update N (`--at`); its run directory is copied (the run that was not lost)
and snapshotted, and the snapshot is restored into a third directory (the run on a new machine).
Both continue to update M (`--to`), validating every `--every` updates, and the script prints their
dev loss and dev BLEU side by side, with the training loss averaged over each interval.

    python experiments/snapshot_restart.py configs/multi30k_rnnsearch.yaml --work runs/snapshot_study \
        --at 2000 --to 3000 --every 250 [--set train.threads=1 ...]
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from rnnsearch.config import load
from rnnsearch.training.snapshot import restore_snapshot, write_snapshot
from rnnsearch.training.trainer import train


def entries(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def interval_loss(log: list[dict], lo: int, hi: int) -> float:
    losses = [e["loss"] for e in log if "loss" in e and lo < e["step"] <= hi]
    return sum(losses) / len(losses) if losses else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--at", type=int, required=True, help="the update the snapshot is taken at")
    ap.add_argument("--to", type=int, required=True, help="the update both runs continue to")
    ap.add_argument("--every", type=int, required=True, help="validation interval after --at")
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    quiet = lambda *_: None  # noqa: E731
    base = args.set + ["train.patience=0", "train.save_every=0", "train.progress=false"]
    first, kept, moved, snap = (args.work / n for n in ("first", "kept", "restored", "snapshot"))
    if not (first / "last.pt").exists():
        train(load(args.config, base + [f"train.max_steps={args.at}", f"train.valid_every={args.at}"]), first, log=quiet)
    for d in (kept, moved, snap):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(first, kept)
    write_snapshot(first, snap, log=print)
    restore_snapshot(snap, moved, log=print)
    later = base + [f"train.max_steps={args.to}", f"train.valid_every={args.every}"]
    for run in (kept, moved):
        train(load(args.config, later), run, resume=True, log=quiet)
    a, b = entries(kept), entries(moved)
    dev = lambda log: {e["step"]: e for e in log if "dev_bleu" in e and e["step"] > args.at}  # noqa: E731
    da, db = dev(a), dev(b)
    print("| update | train loss since the last row: last.pt / snapshot | dev loss: last.pt / snapshot | "
          "dev BLEU: last.pt / snapshot |\n|---:|---|---|---|")
    prev = args.at
    for step in sorted(da):
        print(f"| {step:,} | {interval_loss(a, prev, step):.4f} / {interval_loss(b, prev, step):.4f} | "
              f"{da[step]['dev_loss']:.4f} / {db[step]['dev_loss']:.4f} | "
              f"{da[step]['dev_bleu']:.2f} / {db[step]['dev_bleu']:.2f} |")
        prev = step
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
