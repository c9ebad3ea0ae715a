"""How often ``translate-file``'s language check (text/language.py: ``read_as_other``) refuses a file, on
real text in the source language (never, one hopes) and in other languages (as often as it can).

Each set is read whole, its blank lines left out; from it, DRAWS draws of 1, 3 and 10 lines in a row
(seeded), tags taken out as the check takes them out, are given to the check with English, then French,
as the model's source. Printed: for each set, size and source, the share of draws refused.

    python experiments/language_check.py [--draws 300]
"""
from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from rnnsearch.text.language import read_as_other

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS = {"hansards test": "hansards/test", "newstest2013": "wmt14/newstest2013", "multi30k val": "multi30k/val",
        "salesforce dev_a": "markup_salesforce/dev_a"}
TAG = re.compile(r"<[^<>]*>")


def lines(path: Path) -> list[str]:
    return [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=300)
    args = parser.parse_args()
    print("| set | language | lines a draw | refused, model from en | refused, model from fr |")
    print("|---|---|---:|---:|---:|")
    for name, stem in SETS.items():
        for lang in ("en", "fr", "de"):
            path = DATA / f"{stem}.{lang}"
            if not path.exists():
                continue
            found = lines(path)
            for size in (1, 3, 10):
                rng = random.Random(f"{name} {lang} {size}")
                draws = [TAG.sub(" ", " ".join(found[k:k + size]))
                         for k in (rng.randrange(len(found) - size) for _ in range(args.draws))]
                shares = [sum(read_as_other(d, source) is not None for d in draws) / len(draws) for source in ("en", "fr")]
                print(f"| {name} | {lang} | {size} | {shares[0]:.1%} | {shares[1]:.1%} |")


if __name__ == "__main__":
    main()
