"""Time (and optionally profile) training steps of a config on its real data, no validation.

    python benchmarks/profile_train.py configs/bench_m30k.yaml --steps 40 [--profile]
    python benchmarks/profile_train.py configs/paper_rnnsearch50.yaml --set train.device=cuda \
        --set train.bf16=true --batch-sizes 256,512,1024      # a GPU's tokens/s against the batch size

With ``--batch-sizes``, one model trains on minibatches of each size in turn (the same data, the
same optimiser, after ``--warmup`` steps at that size); on CUDA the clock waits for the device
(torch.cuda.synchronize) and the peak of allocated GPU memory is reported per size.
"""
from __future__ import annotations

import argparse
import resource
import time

import torch

from rnnsearch.config import load, replace
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
    p.add_argument("--batch-sizes", default="", help="comma-separated sentences per minibatch, timed in turn")
    args = p.parse_args()
    from rnnsearch.runtime import tune_process
    print("malloc tuned:", tune_process())
    cfg = load(args.config, args.set + ["train.progress=false"])
    import shutil
    shutil.rmtree(args.out, ignore_errors=True)
    print(f"RSS before the trainer: {_rss():.0f} MiB")
    trainer = Trainer(cfg, args.out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"RSS after building the trainer: {_rss():.0f} MiB (peak {peak:.0f})")
    from rnnsearch.data.batching import epoch_plan
    data = trainer.train_data
    sizes = [int(b) for b in args.batch_sizes.split(",") if b] or [cfg.train.batch_size]
    for size in sizes:
        train_cfg = replace(cfg.train, batch_size=size)
        plan = epoch_plan(data.src_lens, data.tgt_lens, train_cfg, cfg.train.seed, 0)
        _timed(trainer, plan, args, size)


def _sync(trainer) -> None:
    if trainer.ctx.device.type == "cuda":
        torch.cuda.synchronize(trainer.ctx.device)


def _timed(trainer, plan, args, size: int) -> None:
    """``args.warmup`` steps, then ``args.steps`` timed (and profiled with ``args.profile``)."""
    for idx in plan[: args.warmup]:
        trainer.train_step(idx)
    cuda = trainer.ctx.device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(trainer.ctx.device)
    _sync(trainer)
    tokens, start = 0, time.perf_counter()
    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
        prof = torch.profiler.profile(activities=activities, record_shapes=True)
        prof.__enter__()
    for idx in plan[args.warmup: args.warmup + args.steps]:
        tokens += trainer.train_step(idx)[1]
    _sync(trainer)
    elapsed = time.perf_counter() - start
    if args.profile:
        prof.__exit__(None, None, None)
        sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
        print(prof.key_averages(group_by_input_shape=True).table(sort_by=sort, row_limit=40))
    memory = f"; peak GPU memory {torch.cuda.max_memory_allocated(trainer.ctx.device) / 2**30:.1f} GiB" if cuda else ""
    print(f"batch {size}: {args.steps} steps, {tokens} target tokens, {elapsed:.2f} s: {tokens / elapsed:.0f} tok/s, "
          f"{args.steps / elapsed:.2f} steps/s; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
          + memory, flush=True)

if __name__ == "__main__":
    main()
