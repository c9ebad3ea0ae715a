"""How much of RNNsearch's attention goes to the source </s>: a check for the degenerate
solution in which every output step reads the last annotation (an encoder-decoder in disguise).

    python experiments/attention_eos.py CKPT [CKPT ...] [--src F --tgt F] [--n 300]

For the first --n pairs of the Hansards dev set (teacher forcing), prints per checkpoint the mean
alpha on </s> over output steps, the share of steps whose largest alpha is on </s>, and the mean
entropy of alpha_i against that of a uniform alpha_i.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from rnnsearch.data.batching import make_batch
from rnnsearch.data.io import read_parallel
from rnnsearch.decoding.translator import Translator

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hansards"


@torch.no_grad()
def eos_stats(path: str, srcs: list[str], tgts: list[str], batch_size: int = 50) -> dict:
    t = Translator.from_checkpoint(path)
    mass, top, entropy, uniform = [], [], [], []
    for start in range(0, len(srcs), batch_size):
        src = [t.src_codec.encode(s) for s in srcs[start:start + batch_size]]
        tgt = [t.tgt_codec.encode(s) for s in tgts[start:start + batch_size]]
        batch = make_batch(src, tgt)
        _, alphas = t.model(batch.src, batch.src_mask, batch.tgt_in)  # (B, T, S)
        for b in range(len(src)):
            a = alphas[b, : len(tgt[b]) + 1, : len(src[b]) + 1].double().numpy()  # real steps, real tokens + </s>
            mass.extend(a[:, -1])
            top.extend(a.argmax(1) == a.shape[1] - 1)
            entropy.extend(-(a * np.log(a + 1e-12)).sum(1))
            uniform.extend([np.log(a.shape[1])] * a.shape[0])
    return {"eos_mass": float(np.mean(mass)), "eos_argmax": float(np.mean(top)),
            "entropy": float(np.mean(entropy)), "uniform_entropy": float(np.mean(uniform))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--src", default=str(DATA / "dev.en"))
    parser.add_argument("--tgt", default=str(DATA / "dev.fr"))
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    srcs, tgts = read_parallel(args.src, args.tgt)
    keep = [i for i in range(len(srcs)) if srcs[i].strip() and tgts[i].strip()][: args.n]
    srcs, tgts = [srcs[i] for i in keep], [tgts[i] for i in keep]
    print("| checkpoint | mean alpha on </s> | steps with argmax on </s> | entropy of alpha_i (uniform) |")
    print("|---|---:|---:|---:|")
    for path in args.checkpoints:
        s = eos_stats(path, srcs, tgts)
        print(f"| `{path}` | {s['eos_mass']:.3f} | {s['eos_argmax']:.3f} | {s['entropy']:.2f} "
              f"({s['uniform_entropy']:.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
