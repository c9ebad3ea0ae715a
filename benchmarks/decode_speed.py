"""Decode a test set with a checkpoint and print one JSON line: sentences, seconds, outputs.

    python benchmarks/decode_speed.py CKPT SRC --beam 5 [--limit N] [--out HYPS]

Timing covers Translator.translate (tokenisation, search, detokenisation), after the
checkpoint is loaded and one small warm-up batch has run.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rnnsearch.data.io import read_lines
from rnnsearch.training.runtime import tune_process
from rnnsearch.decoding.translator import Translator


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("checkpoint")
    p.add_argument("src")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--out")
    args = p.parse_args()
    tune_process()
    lines = read_lines(args.src)
    lines = lines[: args.limit] if args.limit else lines
    translator = Translator.from_checkpoint(args.checkpoint)
    translator.translate(lines[:8], beam=args.beam)  # warm-up
    start = time.perf_counter()
    results = translator.translate(lines, beam=args.beam, batch_size=args.batch_size)
    seconds = time.perf_counter() - start
    if args.out:
        Path(args.out).write_text("".join(r.text + "\n" for r in results), encoding="utf-8")
    print(json.dumps({"sentences": len(lines), "seconds": seconds, "beam": args.beam,
                      "model_tokens": sum(len(r.tokens) for r in results)}))


if __name__ == "__main__":
    main()
