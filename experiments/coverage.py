"""A threshold for ``--min-coverage`` (#85), chosen on held-out data: the attention mass below which a
source word is named as one the translation may have left out (text/coverage.py).

The same sets as experiments/confidence.py (lines the release never trained on, translated with its
defaults; in and out of domain; one part of each to choose on, another to report on). Whether a line
lost something is judged against its reference: a line is "short" where the output has fewer than
SHORT x the reference's words. The threshold is the one of the best F1 at telling short lines on the
"choose" sets (a grid of values); then, on the "report" sets not used to choose it: the share of lines
flagged (some word named), how many of those are short (precision) and of the short lines flagged
(recall), and the sentence chrF of flagged and kept lines. A few flagged lines of the report sets go to
stderr, to read.

    python experiments/coverage.py hansards_enfr_rnnsearch50 [--lines 400]
"""
from __future__ import annotations

import argparse
import sys

import sacrebleu
from confidence import sets

from rnnsearch import Translator
from rnnsearch.text.coverage import uncovered
from rnnsearch.text.pipeline import translate_lines

SHORT = 0.6
GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def rows_of(translator, sources: list[str], refs: list[str]) -> list[dict]:
    """Per translated line: its output, reference, whether it is short, its sentence chrF, and the
    words named at each threshold of the grid."""
    outs = [t for chunk in translate_lines(translator, sources) for t in chunk]
    rows = []
    for src, t, ref in zip(sources, outs, refs):
        if not t.tokens or t.error or t.attention is None:
            continue
        named = {g: uncovered(t, translator.src_codec, g) for g in GRID}
        rows.append({"src": src, "out": t.text, "short": len(t.text.split()) < SHORT * len(ref.split()),
                     "chrf": sacrebleu.sentence_chrf(t.text, [ref]).score, "named": named})
    return rows


def f1(rows: list[dict], g: float) -> float:
    hit = sum(bool(r["named"][g]) and r["short"] for r in rows)
    flagged, short = sum(bool(r["named"][g]) for r in rows), sum(r["short"] for r in rows)
    return 2 * hit / (flagged + short) if flagged + short else 0.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--lines", type=int, default=400, help="lines of each set")
    p.add_argument("--at", type=float, help="report at this threshold, not the best one")
    args = p.parse_args()
    translator = Translator.from_pretrained(args.model)
    src, tgt = translator.src_codec.lang, translator.tgt_codec.lang
    scored = {(part, name): rows_of(translator, *pair)
              for part, named in sets(src, tgt, args.lines).items() for name, pair in named.items()}
    choose = [r for (part, _), rows in scored.items() if part == "choose" for r in rows]
    if not choose:
        raise SystemExit(f"coverage: {args.model} gives no attention (RNNencdec): no words to name")
    best = max(GRID, key=lambda g: f1(choose, g))
    if args.at is not None:
        best = args.at if args.at in GRID else sys.exit(f"coverage: --at must be one of {GRID}")
    print(f"{args.model}: F1 on the 'choose' sets at each threshold: "
          + ", ".join(f"{g}: {f1(choose, g):.3f}" for g in GRID))
    print(f"{args.model}: min coverage {best} (best F1 {f1(choose, best):.3f} at telling lines shorter than "
          f"{SHORT} x the reference, on the 'choose' sets)")
    print("| part | set | lines | short | flagged | precision | recall | chrF flagged | chrF kept |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (part, name), rows in scored.items():
        flagged = [r for r in rows if r["named"][best]]
        kept = [r for r in rows if not r["named"][best]]
        short = [r for r in rows if r["short"]]
        pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
        mean = lambda v: f"{sum(r['chrf'] for r in v) / len(v):.1f}" if v else "-"  # noqa: E731
        hits = sum(r["short"] for r in flagged)
        print(f"| {part} | {name} | {len(rows)} | {pct(len(short), len(rows))} | {pct(len(flagged), len(rows))} | "
              f"{pct(hits, len(flagged))} | {pct(hits, len(short))} | {mean(flagged)} | {mean(kept)} |")
        if part == "report":
            for r in flagged[:4]:
                print(f"  {name}: {r['named'][best]} | {r['src'][:90]} => {r['out'][:90]}", file=sys.stderr)


if __name__ == "__main__":
    main()
