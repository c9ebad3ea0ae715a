"""Where a beam search's time goes: torch.profiler over ``Translator.translate`` on a test set, after
a warm-up batch; prints the operators by their own CPU time (share of the profiled total), the
output tokens/s of the profiled run and the share of time outside any operator (Python, the search's
bookkeeping). The decode-side counterpart of profile_train.py.

    python benchmarks/profile_decode.py CKPT SRC [--beam 5] [--limit 200] [--quantize int8]
        [--shortlist LEXICON [--shortlist-frequent N] [--shortlist-best N]] [--top 20]

Run it with OMP_NUM_THREADS set as the decode it explains (1: the race's per-worker search).
"""
from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from decode_speed import timed

from rnnsearch.data.io import read_lines
from rnnsearch.decoding.shortlist import BEST, FREQUENT, ShortlistTable
from rnnsearch.decoding.translator import Translator
from rnnsearch.runtime import tune_process


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("src")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--quantize", default=None)
    p.add_argument("--shortlist", help="a lexicon (`rnnsearch lexicon --per-source N`): decode over shortlists")
    p.add_argument("--shortlist-frequent", type=int, default=FREQUENT)
    p.add_argument("--shortlist-best", type=int, default=BEST)
    p.add_argument("--top", type=int, default=20)
    args = p.parse_args()
    tune_process()
    lines = read_lines(args.src)[: args.limit]
    translator = Translator.from_pretrained(args.checkpoint, quantize=args.quantize)
    if args.shortlist:
        translator.set_shortlist(ShortlistTable.read(args.shortlist, translator.src_codec.vocab,
                                                     translator.tgt_codec.vocab, args.shortlist_frequent,
                                                     args.shortlist_best))
    translator.translate(lines[:8], translator.search_settings(beam=args.beam))  # warm-up: allocations, kernels
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        speed, _ = timed(translator, lines, args.beam, None)
    wall = speed["seconds"]
    events = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    in_ops = sum(e.self_cpu_time_total for e in events) / 1e6  # s
    print(f"{len(lines)} sentences, beam {args.beam}, {torch.get_num_threads()} thread(s): {wall:.2f} s profiled, "
          f"{speed['tokens_per_s']:,.0f} output tokens/s (the profiler slows it), {in_ops / wall:.0%} of it in operators")
    print(f"{'operator':40s} {'calls':>9s} {'self ms':>10s} {'share':>6s} {'us/call':>8s}")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[: args.top]:
        print(f"{e.key[:40]:40s} {e.count:9,d} {e.self_cpu_time_total / 1e3:10,.0f} "
              f"{e.self_cpu_time_total / 1e6 / wall:6.1%} {e.self_cpu_time_total / max(e.count, 1):8.1f}")


if __name__ == "__main__":
    main()
