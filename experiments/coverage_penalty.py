"""A value for ``--coverage-penalty`` (decoding/search.py: GNMT's beta), chosen on the Hansards dev set.

The penalty only reorders a sentence's finished hypotheses (the beam is the same), so one search with
n_best = beam gives every hypothesis the search finishes; each beta of the grid ranks them again with
the search's own ranking (``length_normalise`` + ``coverage_penalty``), and the dev BLEU of each best is
printed, with the share of dev lines whose best leaves a source word unread (text/coverage.py, at the
default --min-coverage). Then ``rnnsearch evaluate --coverage-penalty BETA`` on the test set, which
the search itself ranks, is the number to report beside the card's.

    python experiments/coverage_penalty.py hansards_enfr_rnnsearch50 [--lines 1000]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import sacrebleu

from rnnsearch import SearchSettings, Translator
from rnnsearch.decoding.search import coverage_penalty, length_normalise
from rnnsearch.text.coverage import uncovered
from rnnsearch.text.settings import TextSettings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--lines", type=int, default=1000, help="dev lines, from the first")
    args = p.parse_args()
    translator = Translator.from_pretrained(args.model)
    src, tgt = translator.src_codec.lang, translator.tgt_codec.lang
    sources = (DATA / "hansards" / f"dev.{src}").read_text(encoding="utf-8").splitlines()[:args.lines]
    refs = (DATA / "hansards" / f"dev.{tgt}").read_text(encoding="utf-8").splitlines()[:args.lines]
    decode = translator.decode_cfg
    found = translator.translate(sources, SearchSettings(beam=decode.beam, n_best=decode.beam))
    alpha, min_coverage = decode.length_penalty, TextSettings().min_coverage
    print(f"{args.model}: Hansards dev lines 1-{len(sources)}, beam {decode.beam}, length penalty {alpha}")
    print("| coverage penalty | dev BLEU | lines leaving a word unread |\n|---:|---:|---:|")
    for beta in GRID:
        best = [max(t.nbest or [t], key=lambda h: length_normalise(h.score, len(h.tokens) + 1, alpha)
                    + coverage_penalty(h.attention, beta)) for t in found]
        bleu = sacrebleu.corpus_bleu([h.text for h in best], [refs]).score
        unread = sum(bool(uncovered(h, translator.src_codec, min_coverage)) for h in best)
        print(f"| {beta} | {bleu:.2f} | {100 * unread / len(best):.1f}% |")


if __name__ == "__main__":
    main()
