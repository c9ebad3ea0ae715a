"""bf16 against float32, for training and for decoding, on this CPU as it is and with its
instruction sets forced down to AVX2 (``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2``: what
a CPU without AVX-512 and native bf16 runs). The two ratios of the forced-down run are the
measured costs that rnnsearch's warning names (src/rnnsearch/cpu.py).

    python benchmarks/bench_bf16.py [--checkpoint CKPT] [--steps 30] [--sentences 300] [--record]

Training: benchmarks/ab_train.py --compare bf16 (the same minibatches of the bench model both ways,
alternating). Decoding: benchmarks/decode_speed.py, beam 5, on the first Multi30k test sentences,
with ``--dtype float32`` and ``--dtype bf16``. Without ``--checkpoint`` the bench model is first
trained for ``--train-minutes`` in float32 (a checkpoint whose outputs have realistic lengths).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import DATA, ROOT, machine, record, say

FORCED = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
ENVS = {"as is": {}, "forced to AVX2": FORCED}


def python(args: list[str], extra_env: dict) -> str:
    env = {**os.environ, **extra_env}
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def train_checkpoint(out: str, minutes: float) -> str:
    say(f"training the bench model for {minutes} min in float32 -> {out}")
    python(["-m", "rnnsearch", "train", "configs/bench_m30k.yaml", "--out", out, "--set", "train.bf16=false",
            "--set", f"train.max_minutes={minutes}", "--set", "train.progress=false"], {})
    return f"{out}/best.pt" if os.path.exists(f"{out}/best.pt") else f"{out}/last.pt"


def training_ratio(steps: int, extra_env: dict) -> dict:
    line = python(["benchmarks/ab_train.py", "configs/bench_m30k.yaml", "--compare", "bf16", "--steps", str(steps)],
                  extra_env).strip().splitlines()[-1]
    words = line.replace(",", "").split()  # "... bf16 N tok/s float32 M tok/s ratio Rx"
    bf16, fp32 = float(words[words.index("bf16") + 1]), float(words[words.index("float32") + 1])
    return {"bf16": bf16, "float32": fp32, "ratio": bf16 / fp32}


def decoding_ratio(checkpoint: str, sentences: int, extra_env: dict) -> dict:
    rates = {}
    for dtype in ("float32", "bf16"):
        out = python(["benchmarks/decode_speed.py", checkpoint, str(DATA / "test_2016_flickr.en"), "--ref",
                      str(DATA / "test_2016_flickr.fr"), "--beam", "5", "--limit", str(sentences), "--dtype", dtype],
                     extra_env)
        result = json.loads(out.strip().splitlines()[-1])
        rates[dtype] = result["beam"]["tokens_per_s"]
        rates[f"{dtype}_bleu"] = result["beam"]["bleu"]
    rates["ratio"] = rates["bf16"] / rates["float32"]
    return rates


def table(results: dict) -> str:
    rows = ["| instruction sets | training tok/s float32 | bf16 | bf16 / float32 | decoding tok/s float32 | bf16 "
            "| bf16 / float32 | BLEU float32 / bf16 |", "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        t, d = r["train"], r["decode"]
        rows.append(f"| {name} | {t['float32']:,.0f} | {t['bf16']:,.0f} | **{t['ratio']:.2f}x** | {d['float32']:,.0f} "
                    f"| {d['bf16']:,.0f} | **{d['ratio']:.2f}x** | {d['float32_bleu']:.2f} / {d['bf16_bleu']:.2f} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint")
    p.add_argument("--train-minutes", type=float, default=10)
    p.add_argument("--steps", type=int, default=30, help="minibatches each way (training)")
    p.add_argument("--sentences", type=int, default=300, help="test sentences decoded (beam 5)")
    p.add_argument("--out", default="runs/bench_bf16")
    p.add_argument("--record", action="store_true", help="write the table as this bench's section of BENCHMARKS.md")
    args = p.parse_args()
    checkpoint = args.checkpoint or train_checkpoint(f"{args.out}/model", args.train_minutes)
    results = {}
    for name, extra_env in ENVS.items():
        say(f"{name}: training ({args.steps} minibatches each way), then decoding {args.sentences} sentences")
        results[name] = {"train": training_ratio(args.steps, extra_env),
                         "decode": decoding_ratio(checkpoint, args.sentences, extra_env)}
    text = table(results)
    print(text)
    if args.record:
        command = "python benchmarks/bench_bf16.py " + " ".join(sys.argv[1:])
        record("bf16 on a CPU without native bf16",
               f"{time.strftime('%Y-%m-%d')}: `{command}` on {machine(2)}; the bench model (configs/bench_m30k.yaml), "
               f"decoding beam 5 on the first {args.sentences} Multi30k test sentences with {checkpoint}.\n\n{text}")


if __name__ == "__main__":
    main()
