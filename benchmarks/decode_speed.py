"""Decode a test set with one decoding configuration and print one JSON line: speed (sentences/s
and output tokens/s) for greedy and beam search, BLEU against the references, single-sentence
latency, and the process's peak RSS (run one configuration per process: benchmarks/bench_decode.py).

    python benchmarks/decode_speed.py CKPT SRC [--ref REF] [--beam 5] [--backend torch|onnx]
        [--quantize int8] [--dtype float32|bf16] [--ensemble CKPT2] [--latency N] [--limit N] [--out HYPS]
        [--shortlist LEXICON [--shortlist-frequent N] [--shortlist-best N]] [--workers N]

Timing covers Translator.translate (tokenisation, search, detokenisation), after the
checkpoint is loaded and one small warm-up batch has run.
"""
from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.data.io import read_lines
from rnnsearch.decoding.shortlist import BEST, FREQUENT, ShortlistTable
from rnnsearch.decoding.translator import Translator
from rnnsearch.runtime import tune_process


def timed(translator, lines: list[str], beam: int, batch_size: int | None) -> tuple[dict, list[str]]:
    start = time.perf_counter()
    results = translator.translate(lines, translator.search_settings(beam=beam, batch_size=batch_size))
    seconds = time.perf_counter() - start
    tokens = sum(len(r.tokens) + 1 for r in results)  # output units, </s> included
    return {"seconds": round(seconds, 3), "sentences_per_s": round(len(lines) / seconds, 2),
            "tokens_per_s": round(tokens / seconds, 1), "output_tokens": tokens}, [r.text for r in results]


def latency(translator, lines: list[str], beam: int, n: int) -> dict:
    """One sentence at a time (batch 1), as a server with no company pays per request."""
    times = []
    for line in lines[:n]:
        start = time.perf_counter()
        translator.translate([line], translator.search_settings(beam=beam))
        times.append(time.perf_counter() - start)
    ms = np.asarray(times) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p99_ms": round(float(np.percentile(ms, 99)), 2),
            "sentences": len(times)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("checkpoint")
    p.add_argument("src")
    p.add_argument("--ref")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--backend", default="torch")
    p.add_argument("--quantize", default=None)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--ensemble", nargs="*", default=[])
    p.add_argument("--greedy", action="store_true", help="also decode greedily")
    p.add_argument("--latency", type=int, default=0, help="also time N sentences one at a time (beam)")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--out")
    p.add_argument("--shortlist", help="a lexicon (`rnnsearch lexicon --per-source N`): decode over shortlists")
    p.add_argument("--shortlist-frequent", type=int, default=FREQUENT)
    p.add_argument("--shortlist-best", type=int, default=BEST)
    p.add_argument("--workers", type=int, default=1, help="processes searching batches side by side, one thread each")
    args = p.parse_args()
    tune_process()
    lines = read_lines(args.src)
    refs = read_lines(args.ref) if args.ref else None
    if args.limit:
        lines, refs = lines[: args.limit], refs[: args.limit] if refs else None
    translator = Translator.from_pretrained(args.checkpoint, backend=args.backend, quantize=args.quantize,
                                            dtype=args.dtype)
    if args.ensemble:
        translator.add_ensemble(args.ensemble)
    if args.shortlist:
        translator.set_shortlist(ShortlistTable.read(args.shortlist, translator.src_codec.vocab,
                                                     translator.tgt_codec.vocab, args.shortlist_frequent,
                                                     args.shortlist_best))
    translator.translate(lines[:8], translator.search_settings(beam=args.beam))  # warm-up
    translator.set_workers(args.workers)  # forked after the warm-up: each worker starts warm
    result = {"sentences": len(lines)}
    modes = [("beam", args.beam)] + ([("greedy", 1)] if args.greedy else [])
    for name, beam in modes:
        result[name], hyps = timed(translator, lines, beam, args.batch_size)
        if refs:
            result[name]["bleu"] = round(corpus_bleu(hyps, refs)[0], 2)
        if name == "beam" and args.out:
            Path(args.out).write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    if args.latency:
        result["latency"] = latency(translator, lines, args.beam, args.latency)
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
