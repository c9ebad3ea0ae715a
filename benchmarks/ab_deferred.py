"""Deferred weight gradients (model/deferred.py) against plain per-step autograd, in one process.

    python benchmarks/ab_deferred.py configs/bench_m30k.yaml --steps 40 [--set key=value ...]

Every minibatch is trained twice, once each way, in alternating order (so that neither way
always runs first), and the times are summed per way: the machine's drift hits both alike.
Prints tokens/s of each way and their ratio. The two ways compute the same gradients
(tests/unit/test_speedups.py).
"""
from __future__ import annotations

import argparse
import shutil
import time

from rnnsearch.batching import epoch_plan
from rnnsearch.config import load
from rnnsearch.model import deferred
from rnnsearch.runtime import tune_malloc
from rnnsearch.train import Trainer


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--out", default="/tmp/rnnsearch-ab")
    args = p.parse_args()
    tune_malloc()
    cfg = load(args.config, args.set + ["train.progress=false"])
    shutil.rmtree(args.out, ignore_errors=True)
    trainer = Trainer(cfg, args.out, log=lambda *_: None)
    data = trainer.train_data
    plan = epoch_plan(data.src_lens, data.tgt_lens, cfg.train, cfg.train.seed, 0)
    seconds, tokens = {True: 0.0, False: 0.0}, {True: 0, False: 0}
    for k, idx in enumerate(plan[: args.warmup + args.steps]):
        for way in ((True, False) if k % 2 == 0 else (False, True)):
            deferred.ENABLED = way
            start = time.perf_counter()
            n = trainer.train_step(idx)[1]
            if k >= args.warmup:
                seconds[way] += time.perf_counter() - start
                tokens[way] += n
    deferred.ENABLED = True
    rate = {way: tokens[way] / seconds[way] for way in seconds}
    print(f"{args.steps} minibatches each way, {tokens[True]} target tokens: deferred {rate[True]:.0f} tok/s, "
          f"per-step {rate[False]:.0f} tok/s, ratio {rate[True] / rate[False]:.2f}x")


if __name__ == "__main__":
    main()
