"""Milliseconds per float32 product x W^T + b of the shapes decoding and training compute, by the
three ways PyTorch offers on a CPU: MKL (``torch.addmm``, PyTorch's default), oneDNN with W as it is
(``torch.ops.mkldnn._linear_pointwise``: model/gemm.py) and oneDNN with W reordered once
(``_reorder_linear_weight``: model/packed.py's PackedLinear). In one process, alternating, best of
``--repeat`` rounds of ``--calls`` calls each; with GFLOP/s.

    OMP_NUM_THREADS=1 python benchmarks/gemm_shapes.py [--out 30000 --in 256] [--rows 5 20 80 160]
"""
from __future__ import annotations

import argparse
import time

import torch

from rnnsearch.model.packed import ROWS_HINT


def timed(product, calls: int) -> float:
    """Seconds per call of ``product()``."""
    start = time.perf_counter()
    for _ in range(calls):
        product()
    return (time.perf_counter() - start) / calls


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=int, default=30000, help="W's rows (the output layer: the vocabulary)")
    p.add_argument("--in", dest="inner", type=int, default=256, help="W's columns (the output layer: M)")
    p.add_argument("--rows", type=int, nargs="+", default=[5, 20, 80, 160], help="x's rows (sentences x beam)")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    torch.manual_seed(0)
    weight, bias = torch.randn(args.out, args.inner), torch.randn(args.out)
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, ROWS_HINT)
    print(f"W {args.out} x {args.inner}, float32, {torch.get_num_threads()} thread(s); ms per product (GFLOP/s)")
    print(f"{'rows':>6s} {'MKL addmm':>16s} {'oneDNN':>16s} {'oneDNN packed':>16s}")
    for rows in args.rows:
        x = torch.randn(rows, args.inner)
        ways = [lambda x=x: torch.addmm(bias, x, weight.t()),
                lambda x=x: torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], ""),
                lambda x=x: torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")]
        for way in ways:
            timed(way, 2)  # warm-up: the primitive, the caches
        rounds = [[timed(way, args.calls) for way in ways] for _ in range(args.repeat)]  # the ways in turn
        best = [min(r[k] for r in rounds) for k in range(len(ways))]
        flop = 2 * rows * args.inner * args.out
        print(f"{rows:6d} " + " ".join(f"{s * 1e3:8.2f} ({flop / s / 1e9:5.1f})" for s in best))


if __name__ == "__main__":
    main()
