"""The training data path at the paper's corpus size: peak resident memory and time to the first
update of ``rnnsearch train`` on the Hansards training pairs repeated 1, 4 and 12 times (1M, 4M and
12M pairs; 12M is about the paper's WMT'14 En-Fr), read as text (the whole corpus in Python lists)
or from a dataset written by ``rnnsearch prepare`` (memory-mapped), and ``prepare``'s own time.

    python benchmarks/bench_data.py --copies 1,4 --modes text [--updates 100] [--record]
    python benchmarks/bench_data.py --copies 1,4,12 --modes text,prepared --workers 1,2 [--record]

Each measurement is a fresh process (the trainer of the Hansards CPU profile, word level, 30k
shortlist, as recipes/hansards.sh trains it) whose clock starts when the harness launches it: "first
update" is the wall time until its first update has finished, "peak RSS" the process's high-water
mark (VmHWM) then and after ``--updates`` updates, and tok/s the target tokens per second of those
updates. The text path is measured with its token cache filled (the repeated corpus's cache is the
1M cache repeated, so Moses tokenisation, ~12,000 lines/s per core, is not in its time); the
repeated corpora are the Hansards .gz files concatenated (gzip reads the members in turn).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, machine, record, say

HANSARDS = ROOT.parent / "shared" / "data" / "hansards"
WORK = ROOT / "runs" / "bench_data"
PROFILE = ["model.emb=256", "model.enc_hidden=256", "model.dec_hidden=512", "model.att=512", "model.maxout=256",
           "train.optimizer=adam", "train.lr=0.001", "train.loss_scale=token", "train.progress=false",
           "train.valid_every=1000000", "train.threads=2"]  # recipes/hansards.sh's CPU profile


def corpus(copies: int) -> Path:
    """The Hansards corpus with its training pairs repeated ``copies`` times (dev and test as they are)."""
    out = WORK / f"hansards_x{copies}"
    if not (out / "train.fr.gz").exists():
        out.mkdir(parents=True, exist_ok=True)
        for split in ("dev", "test"):
            for lang in ("en", "fr"):
                target = out / f"{split}.{lang}"
                if not target.exists():
                    target.symlink_to(HANSARDS / f"{split}.{lang}")
        for lang in ("en", "fr"):
            tmp = out / f".train.{lang}.gz.tmp"
            with open(tmp, "wb") as fh:
                for _ in range(copies):
                    with open(HANSARDS / f"train.{lang}.gz", "rb") as src:
                        shutil.copyfileobj(src, fh)
            os.replace(tmp, out / f"train.{lang}.gz")
    return out


def fill_token_cache(copies: int, data_dir: Path, cache: Path) -> None:
    """The text path's token cache for the repeated corpus: the 1M corpus's cache repeated."""
    from rnnsearch.data.io import read_lines
    from rnnsearch.data.tokenize import pretokenize_lines, token_cache_path
    for lang in ("en", "fr"):
        one = read_lines(HANSARDS / f"train.{lang}.gz")
        pretokenize_lines(one, "moses", lang, str(cache))  # fills the 1M cache once (minutes)
        single = token_cache_path(one, "moses", lang, cache)
        target = token_cache_path(one * copies, "moses", lang, cache)
        del one
        if not target.exists():
            tmp = target.with_name(target.name + ".tmp")
            with open(tmp, "wb") as fh:
                for _ in range(copies):
                    with open(single, "rb") as src:
                        shutil.copyfileobj(src, fh)
            os.replace(tmp, target)


def child(args) -> None:
    """One trainer: build it, time the first update, then ``--updates`` more; print JSON."""
    launched = float(os.environ["BENCH_LAUNCHED"])
    from rnnsearch.config import load
    from rnnsearch.data.batching import epoch_plan
    from rnnsearch.training.trainer import Trainer
    cfg = load(str(ROOT / "configs" / "hansards_rnnsearch.yaml"), args.set)
    lines = []
    trainer = Trainer(cfg, args.child, log=lines.append)
    t = cfg.train
    plan = epoch_plan(trainer.train_data.src_lens, trainer.train_data.tgt_lens, t, t.seed, 0)
    trainer.train_step(plan[0])
    first = time.time() - launched
    rss_first = memory()["VmHWM"]
    start, tokens = time.perf_counter(), 0
    for idx in plan[1:1 + args.updates]:
        tokens += trainer.train_step(idx)[1]
    rate = tokens / (time.perf_counter() - start)
    trainer.close()
    result = {"first_update_s": first, "peak_rss_first_mib": rss_first, "tok_per_s": rate,
              "pairs": len(trainer.train_data.src_lens), **{f"{k}_mib": v for k, v in memory().items()}}
    if args.read_epoch:  # every pair of the epoch, in the plan's order, as the trainer reads them
        start, data = time.perf_counter(), trainer.train_data
        for idx in plan:
            for k in idx:
                data.src_ids[k], data.tgt_ids[k]
        result.update({"epoch_read_s": time.perf_counter() - start,
                       **{f"epoch_{k}_mib": v for k, v in memory().items()}})
    print(json.dumps({**result, "log": lines}))


def memory() -> dict:
    """VmHWM (peak resident), VmRSS, RssAnon and RssFile of this process, in MiB."""
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) / 1024
    return out


def measure(sets: list[str], updates: int, read_epoch: bool = False) -> dict:
    run_dir = WORK / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    cmd = [sys.executable, __file__, "--child", str(run_dir), "--updates", str(updates)] + \
        (["--read-epoch"] if read_epoch else [])
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "BENCH_LAUNCHED": repr(time.time())}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def prepare(data_dir: Path, out: Path, workers: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "rnnsearch", "prepare", str(ROOT / "configs" / "hansards_rnnsearch.yaml"),
           "--out", str(out), "--workers", str(workers), "--set", f"data.dir={data_dir}"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    return {"wall_s": wall, "pairs_read": manifest["filter"]["read"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--copies", default="1,4", help="the Hansards training pairs repeated this many times")
    p.add_argument("--modes", default="text", help="text, prepared or both (comma-separated)")
    p.add_argument("--workers", default="2", help="prepare's --workers to time (the last is used for training); "
                   "'' = train on the datasets an earlier run prepared")
    p.add_argument("--read-epoch", action="store_true", help="then read every pair of the epoch (as the trainer "
                   "does, without training) and report the memory after")
    p.add_argument("--updates", type=int, default=100, help="updates timed after the first")
    p.add_argument("--label", default="", help="what this run measures (a heading)")
    p.add_argument("--record", action="store_true", help="write the table as this bench's section of BENCHMARKS.md")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--set", action="append", default=[], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    from rnnsearch.cpu import bf16_pays  # the recipe's choice: bf16 where it is measurably faster
    bf16 = f"train.bf16={str(bf16_pays()).lower()}"
    rows = []
    for copies in map(int, args.copies.split(",")):
        data_dir = corpus(copies)
        for mode in args.modes.split(","):
            sets = PROFILE + [bf16, f"data.dir={data_dir}"]
            row = {"copies": copies, "mode": mode}
            if mode == "text":
                cache = WORK / "cache"
                fill_token_cache(copies, data_dir, cache)
                sets.append(f"data.token_cache={cache}")
            else:
                for workers in map(int, args.workers.split(",") if args.workers else []):
                    say(f"prepare x{copies} with {workers} worker(s)")
                    done = prepare(data_dir, WORK / f"prepared_x{copies}", workers)
                    row[f"prepare_{workers}w_s"] = done["wall_s"]
                    row["pairs_read"] = done["pairs_read"]
                sets.append(f"data.prepared={WORK / f'prepared_x{copies}'}")
            say(f"train x{copies} from {mode}")
            row.update(measure(sets, args.updates, args.read_epoch))
            say(json.dumps({k: v for k, v in row.items() if k != "log"}))
            rows.append(row)
    table = format_table(rows, args)
    print(table)
    if args.record:
        record("Training data path with `rnnsearch prepare`", table)


def format_table(rows: list[dict], args) -> str:
    command = "python benchmarks/bench_data.py " + shlex.join(a for a in sys.argv[1:] if a != "--record")
    out = [f"### {args.label or 'Training data path: memory and time to first update'} "
           f"({time.strftime('%Y-%m-%d')})", "",
           f"`{command}` on {machine(2)}; the Hansards CPU profile's trainer (bf16 as native here), "
           f"{args.updates} updates timed after the first.", "",
           "| pairs | read from | prepare (s) | first update (s) | peak RSS at first update (GiB) | "
           f"peak RSS after {args.updates} updates (GiB) | RssAnon (GiB) | RssFile (GiB) | tok/s | "
           "peak RSS after reading the epoch (GiB) | RssFile then (GiB) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        prep = ", ".join(f"{v:.0f} ({k.split('_')[1]})" for k, v in r.items() if k.startswith("prepare_")) or "-"
        out.append(f"| {r['pairs']:,} | {r['mode']} | {prep} | {r['first_update_s']:.1f} | "
                   f"{r['peak_rss_first_mib'] / 1024:.2f} | {r['VmHWM_mib'] / 1024:.2f} | "
                   f"{r['RssAnon_mib'] / 1024:.2f} | {r['RssFile_mib'] / 1024:.2f} | {r['tok_per_s']:,.0f} | "
                   + (f"{r['epoch_VmHWM_mib'] / 1024:.2f} | {r['epoch_RssFile_mib'] / 1024:.2f} |"
                      if "epoch_VmHWM_mib" in r else "- | - |"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
