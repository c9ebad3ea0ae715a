"""Two ways of training the same model on the same minibatches, in one process, side by side.

    python benchmarks/ab_train.py configs/bench_m30k.yaml --compare deferred --steps 40 [--set key=value ...]
    python benchmarks/ab_train.py configs/bench_m30k.yaml --compare bf16 --steps 40

``--compare deferred``: deferred weight gradients (model/deferred.py) against plain per-step
autograd, both float32 (the two compute the same gradients: tests/unit/test_speedups.py).
``--compare bf16``: bfloat16 autocast (``train.bf16=true``) against float32.
``--compare groups``: both bf16; the fused loss's W_o gradient as one product per group of chunks
(``model/output.py``, ``GROUP_ELEMENTS``) against one per chunk (``GROUP_ELEMENTS = 0``).
``--compare chunks``: the fused loss's chunks of at most ``CHUNK_ELEMENTS`` logits (``model/output.py``)
against chunks of half as many rows; float32, or both bf16 with ``--bf16``.
``--compare gemm``: float32 products through oneDNN (``model/gemm.py``) against MKL (``RNNSEARCH_GEMM=mkl``).
``--compare encoder``: the fused encoder cell as training's loop (``Encoder.fused_loop``) against
torch.nn.GRU on packed sequences, with ``model.encoder_cell=fused``; float32, or both bf16 with ``--bf16``.

Every minibatch is trained twice, once each way, in alternating order (so that neither way
always runs first), and the times are summed per way: the machine's drift hits both alike.
Prints tokens/s of each way and their ratio.
"""
from __future__ import annotations

import argparse
import os
import shutil
import time

from rnnsearch.data.batching import epoch_plan
from rnnsearch.config import load, replace
from rnnsearch.model import gemm, output
from rnnsearch.runtime import tune_process
from rnnsearch.training.trainer import Trainer

NAMES = {"deferred": ("deferred", "per-step"), "bf16": ("bf16", "float32"),
         "groups": ("per group", "per chunk"), "chunks": ("chunks", "half-size chunks"),
         "gemm": ("oneDNN", "MKL"), "encoder": ("fused loop", "nn.GRU packed")}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--compare", choices=sorted(NAMES), default="deferred")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--out", default="/tmp/rnnsearch-ab")
    p.add_argument("--bf16", action="store_true", help="--compare chunks or encoder: both ways under bf16 autocast")
    args = p.parse_args()
    if args.bf16 and args.compare not in ("chunks", "encoder"):
        p.error(f"--bf16 is for --compare chunks or encoder (--compare {args.compare} sets its own precision)")
    tune_process()
    cfg = load(args.config, args.set + ["train.progress=false", "train.bf16=false"])
    if args.compare == "encoder" and cfg.model.encoder_cell != "fused":
        p.error("--compare encoder needs --set model.encoder_cell=fused")
    shutil.rmtree(args.out, ignore_errors=True)
    trainer = Trainer(cfg, args.out, log=lambda *_: None)
    configs = {True: replace(cfg, train=replace(cfg.train, bf16=True)), False: cfg}
    group_elements, chunk_elements = output.GROUP_ELEMENTS, output.CHUNK_ELEMENTS
    if args.compare == "groups" or (args.compare in ("chunks", "encoder") and args.bf16):
        trainer.cfg = configs[True]
    data = trainer.train_data
    plan = epoch_plan(data.src_lens, data.tgt_lens, cfg.train, cfg.train.seed, 0)
    seconds, tokens = {True: 0.0, False: 0.0}, {True: 0, False: 0}
    for k, idx in enumerate(plan[: args.warmup + args.steps]):
        for way in ((True, False) if k % 2 == 0 else (False, True)):
            if args.compare == "deferred":
                trainer.model.set_deferred(way)
            elif args.compare == "groups":
                output.GROUP_ELEMENTS = group_elements if way else 0
            elif args.compare == "chunks":
                output.CHUNK_ELEMENTS = chunk_elements if way else chunk_elements // 2
            elif args.compare == "gemm":
                os.environ["RNNSEARCH_GEMM"] = "onednn" if way else "mkl"
                gemm.enabled.cache_clear()
            elif args.compare == "encoder":
                trainer.model.encoder.deferred = way
            else:
                trainer.cfg = configs[way]
            start = time.perf_counter()
            n = trainer.train_step(idx)[1]
            if k >= args.warmup:
                seconds[way] += time.perf_counter() - start
                tokens[way] += n
    rate = {way: tokens[way] / seconds[way] for way in seconds}
    a, b = NAMES[args.compare]
    print(f"{args.steps} minibatches each way, {tokens[True]} target tokens: {a} {rate[True]:.0f} tok/s, "
          f"{b} {rate[False]:.0f} tok/s, ratio {rate[True] / rate[False]:.2f}x")


if __name__ == "__main__":
    main()
