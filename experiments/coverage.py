"""Thresholds for ``--min-coverage`` and ``--min-length-ratio`` (#85), chosen on held-out data: the attention
mass below which a source word is named as one the translation may have left out, and the ratio of output
words to source words below which a line is (text/coverage.py).

The same sets as experiments/confidence.py (lines the release never trained on, translated with its
defaults; in and out of domain; one part of each to choose on, another to report on). Whether a line
lost something is judged against its reference: a line is "short" where the output has fewer than
SHORT x the reference's words. The coverage threshold is the one of the best F1 at telling short lines on
the "choose" sets (a grid of values), or ``--at``; then the length ratio's, of the best F1 of the two flags
together (a line flagged by either), or ``--ratio``. On the "report" sets, not used to choose them: for coverage alone, the
ratio alone and both, the share of lines flagged, how many of those are short (precision) and of the short
lines flagged (recall), and the sentence chrF of flagged and kept lines. A few lines of the report sets that
only the ratio flags go to stderr, to read.

    python experiments/coverage.py hansards_enfr_rnnsearch50 [--lines 400] [--at 0.15] [--ratio 0.55] [--rows FILE]

``--rows FILE`` keeps each line's reading in FILE (JSON) and reads it from there when it exists: no search again.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import sacrebleu
from confidence import sets

from rnnsearch import Translator
from rnnsearch.text.coverage import length_ratio, uncovered
from rnnsearch.text.pipeline import translate_lines

SHORT = 0.6
GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
RATIOS = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)


def rows_of(translator, sources: list[str], refs: list[str]) -> list[dict]:
    """Per translated line: its output, reference, whether it is short, its sentence chrF, the words named at
    each threshold of the grid, and its length ratio."""
    outs = [t for chunk in translate_lines(translator, sources) for t in chunk]
    rows = []
    for src, t, ref in zip(sources, outs, refs):
        if not t.tokens or t.error or t.attention is None:
            continue
        named = {str(g): uncovered(t, translator.src_codec, g) for g in GRID}
        rows.append({"src": src, "out": t.text, "short": len(t.text.split()) < SHORT * len(ref.split()),
                     "chrf": sacrebleu.sentence_chrf(t.text, [ref]).score, "named": named, "ratio": length_ratio(t)})
    return rows


def flag(row: dict, g: float | None, r: float | None) -> bool:
    """Whether the row is flagged by coverage at g or by the length ratio below r (None: that one not used)."""
    by_ratio = r is not None and row["ratio"] is not None and row["ratio"] < r
    return bool(g is not None and row["named"][str(g)]) or by_ratio


def f1(rows: list[dict], g: float | None, r: float | None = None) -> float:
    hit = sum(flag(x, g, r) and x["short"] for x in rows)
    flagged, short = sum(flag(x, g, r) for x in rows), sum(x["short"] for x in rows)
    return 2 * hit / (flagged + short) if flagged + short else 0.0


def read_rows(args) -> dict:
    """{(part, name): rows}, from ``--rows`` where it exists, else translated (and kept there)."""
    if args.rows and args.rows.exists():
        return {tuple(k.split("|")): v for k, v in json.loads(args.rows.read_text(encoding="utf-8")).items()}
    translator = Translator.from_pretrained(args.model)
    src, tgt = translator.src_codec.lang, translator.tgt_codec.lang
    scored = {(part, name): rows_of(translator, *pair)
              for part, named in sets(src, tgt, args.lines).items() for name, pair in named.items()}
    if args.rows:
        args.rows.write_text(json.dumps({"|".join(k): v for k, v in scored.items()}, ensure_ascii=False), encoding="utf-8")
    return scored


def table(scored: dict, g: float | None, r: float | None) -> None:
    print("| part | set | lines | short | flagged | precision | recall | chrF flagged | chrF kept |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
    mean = lambda v: f"{sum(x['chrf'] for x in v) / len(v):.1f}" if v else "-"  # noqa: E731
    for (part, name), rows in scored.items():
        flagged = [x for x in rows if flag(x, g, r)]
        kept = [x for x in rows if not flag(x, g, r)]
        hits, short = sum(x["short"] for x in flagged), sum(x["short"] for x in rows)
        print(f"| {part} | {name} | {len(rows)} | {pct(short, len(rows))} | {pct(len(flagged), len(rows))} | "
              f"{pct(hits, len(flagged))} | {pct(hits, short)} | {mean(flagged)} | {mean(kept)} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--lines", type=int, default=400, help="lines of each set")
    p.add_argument("--at", type=float, help="the coverage threshold to use, not the best one")
    p.add_argument("--ratio", type=float, help="the length ratio to use, not the best one (one of RATIOS)")
    p.add_argument("--rows", type=Path, help="keep each line's reading here (JSON), or read it from here")
    args = p.parse_args()
    scored = read_rows(args)
    choose = [x for (part, _), rows in scored.items() if part == "choose" for x in rows]
    if not choose:
        raise SystemExit(f"coverage: {args.model} gives no attention (RNNencdec): no words to name")
    best = max(GRID, key=lambda g: f1(choose, g))
    if args.at is not None:
        best = args.at if args.at in GRID else sys.exit(f"coverage: --at must be one of {GRID}")
    ratio = max(RATIOS, key=lambda r: f1(choose, best, r))
    if args.ratio is not None:
        ratio = args.ratio if args.ratio in RATIOS else sys.exit(f"coverage: --ratio must be one of {RATIOS}")
    print(f"{args.model}: F1 on the 'choose' sets at each coverage threshold: "
          + ", ".join(f"{g}: {f1(choose, g):.3f}" for g in GRID))
    print(f"{args.model}: min coverage {best} (F1 {f1(choose, best):.3f} at telling lines shorter than "
          f"{SHORT} x the reference, on the 'choose' sets)")
    print(f"{args.model}: F1 with the length ratio below each value too: "
          + ", ".join(f"{r}: {f1(choose, best, r):.3f}" for r in RATIOS))
    print(f"{args.model}: min length ratio {ratio} (F1 {f1(choose, best, ratio):.3f} with min coverage {best}; "
          f"the ratio alone {f1(choose, None, ratio):.3f})")
    for what, g, r in (("min coverage alone", best, None), ("min length ratio alone", None, ratio),
                       ("both (either flags)", best, ratio)):
        print(f"\n{what}:")
        table(scored, g, r)
    for (part, name), rows in scored.items():
        only = [x for x in rows if part == "report" and flag(x, None, ratio) and not flag(x, best, None)]
        for x in only[:4]:
            print(f"  {name}: ratio {x['ratio']:.2f} | {x['src'][:90]} => {x['out'][:90]}", file=sys.stderr)


if __name__ == "__main__":
    main()
