"""Time (and optionally profile) training steps of a config on its real data, no validation.

    python benchmarks/profile_train.py configs/bench_m30k.yaml --steps 40 [--profile]
"""
from __future__ import annotations

import argparse
import resource
import time

import torch

from rnnsearch.config import load
from rnnsearch.training.trainer import Trainer


def _rss() -> float:
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", default="/tmp/rnnsearch-profile")
    args = p.parse_args()
    from rnnsearch.training.runtime import tune_process
    print("malloc tuned:", tune_process())
    cfg = load(args.config, args.set + ["train.progress=false"])
    import shutil
    shutil.rmtree(args.out, ignore_errors=True)
    print(f"RSS before the trainer: {_rss():.0f} MiB")
    trainer = Trainer(cfg, args.out)
    print(f"RSS after building the trainer: {_rss():.0f} MiB (peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f})")
    from rnnsearch.data.batching import epoch_plan
    data = trainer.train_data
    plan = epoch_plan(data.src_lens, data.tgt_lens, cfg.train, cfg.train.seed, 0)
    for idx in plan[: args.warmup]:
        trainer.train_step(idx)
    tokens, start = 0, time.perf_counter()
    if args.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True)
        prof.__enter__()
    for idx in plan[args.warmup: args.warmup + args.steps]:
        tokens += trainer.train_step(idx)[1]
    elapsed = time.perf_counter() - start
    if args.profile:
        prof.__exit__(None, None, None)
        print(prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=40))
    print(f"{args.steps} steps, {tokens} target tokens, {elapsed:.2f} s: {tokens / elapsed:.0f} tok/s, "
          f"{args.steps / elapsed:.2f} steps/s; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
