"""BLEU "All" with and without [UNK] replacement (copy, dict), from one beam search per test set.

    python experiments/unk_bleu.py --checkpoint CKPT --lexicon LEX.tsv --set NAME=SRC,REF ... [--beam 12]

The replacement only rewrites <unk> tokens of the search's output (the hypotheses themselves do
not change), so each set is translated once and scored three ways; `rnnsearch evaluate
--replace-unk copy|dict` gives the same numbers one at a time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rnnsearch.decoding import unk
from rnnsearch.data.io import read_parallel
from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.decoding.translator import Translator


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--lexicon", required=True, help="from `rnnsearch lexicon`")
    parser.add_argument("--set", action="append", required=True, metavar="NAME=SRC,REF")
    parser.add_argument("--beam", type=int, default=None)
    parser.add_argument("--out", help="also write the table (Markdown) here")
    args = parser.parse_args()
    translator = Translator.from_checkpoint(args.checkpoint)
    lexicon = unk.read_lexicon(args.lexicon)
    rows = ["| test set | sentences | outputs with <unk> | <unk> tokens | BLEU | + copy | + dict |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for spec in args.set:
        name, files = spec.split("=", 1)
        src_path, ref_path = files.split(",")
        srcs, refs = read_parallel(src_path, ref_path)
        start = time.monotonic()
        results = translator.translate(srcs, translator.search_settings(beam=args.beam))
        print(f"{name}: {len(srcs)} sentences translated in {time.monotonic() - start:.0f} s", file=sys.stderr)
        scores = {}
        for mode in (None, "copy", "dict"):
            hyps = [r.text if mode is None else translator.tgt_codec.units_to_text(
                unk.replace(r.tokens, r.source_tokens[:-1], r.attention, mode, lexicon)) for r in results]
            scores[mode] = corpus_bleu(hyps, refs)[0]
        with_unk = sum(unk.UNK_TOKEN in r.tokens for r in results)
        n_unk = sum(r.tokens.count(unk.UNK_TOKEN) for r in results)
        rows.append(f"| {name} | {len(srcs)} | {with_unk} | {n_unk} | {scores[None]:.2f} | {scores['copy']:.2f} | "
                    f"{scores['dict']:.2f} |")
    beam = args.beam or translator.decode_cfg.beam
    text = (f"Checkpoint `{args.checkpoint}`, beam {beam}, lexicon `{args.lexicon}` ({len(lexicon)} entries); "
            f"sacreBLEU {corpus_bleu(['a'], ['a'])[1]}.\n\n" + "\n".join(rows) + "\n")
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
