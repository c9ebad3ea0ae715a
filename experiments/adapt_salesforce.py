"""A translator's case (#88): the Salesforce help strings ids 1-1000 (../shared/data/markup_salesforce)
as a 1,000-segment translation memory (TMX, written by translate-toolkit), read by ``rnnsearch data
import``, the released Hansards RNNsearch-50 adapted on ids 1-800 (1-700 to train on, 701-800 to
validate on) for a small budget, and ids 801-1000 scored before and after by the dataset's official
scripts/evaluate.py (experiments/text_salesforce.py, ``--markup xml``, beam 5).

    python experiments/adapt_salesforce.py tmx --out runs/sf/memory.tmx
    rnnsearch data import runs/sf/memory.tmx --out runs/sf/corpus --dev 100 --test 200
    rnnsearch train configs/hansards_rnnsearch.yaml --init hansards_enfr_rnnsearch50 --out runs/sf/run \\
        --set data.dir=runs/sf/corpus --set data.max_len=80 --set train.optimizer=adam --set train.lr=1e-4 \\
        --set train.batch_size=20 --set train.valid_every=35 --set train.valid_max_sentences=100 \\
        --set train.max_core_hours=0.5 --set train.patience=4
    python experiments/text_salesforce.py hansards_enfr_rnnsearch50 --ids 801-1000 --out runs/sf/before
    python experiments/text_salesforce.py runs/sf/run/best.pt --ids 801-1000 --out runs/sf/after

``tmx --half b`` writes the other half, ids 1001-2000 (read from the dataset's repository: not in
../shared), so that a model adapted on it is scored on all of ids 1-1000, the strings #85 scores
(docs/results/adapt_salesforce.md, second table):

    python experiments/adapt_salesforce.py tmx --half b --out runs/sfb/memory.tmx
    rnnsearch data import runs/sfb/memory.tmx --out runs/sfb/corpus --dev 100 --test 0
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from text_salesforce import SALESFORCE  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "markup_salesforce"


def half_b(salesforce: Path) -> tuple[list[str], list[str]]:
    """Ids 1001-2000 (English, French) in the dataset's order, read from its repository's dev JSON."""
    from text_salesforce import strings
    with tempfile.TemporaryDirectory() as tmp:
        source, target = strings("b", salesforce, Path(tmp))
        english = source.read_text(encoding="utf-8").splitlines()
        french = list(json.loads(target.read_text(encoding="utf-8"))["text"].values())
    return english, french


def tmx(out: Path, half: str, salesforce: Path) -> None:
    """One half of the dev strings as a TMX memory, each string as the dataset writes it (inline XML as
    text): ``a``, ids 1-1000 (../shared), or ``b``, ids 1001-2000."""
    from translate.storage import tmx as tmxfile
    if half == "a":
        english = (DATA / "dev_a.en").read_text(encoding="utf-8").splitlines()
        french = (DATA / "dev_a.fr").read_text(encoding="utf-8").splitlines()
    else:
        english, french = half_b(salesforce)
    memory = tmxfile.tmxfile(sourcelanguage="en", targetlanguage="fr")
    for en, fr in zip(english, french, strict=True):
        memory.addtranslation(en, "en", fr, "fr")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bytes(memory))
    print(f"{out}: {len(english)} units, en->fr")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    q = sub.add_parser("tmx", help="write one half of the dev strings as a TMX memory")
    q.add_argument("--out", type=Path, required=True)
    q.add_argument("--half", choices=("a", "b"), default="a", help="a: ids 1-1000 (../shared); b: ids 1001-2000")
    q.add_argument("--salesforce", type=Path, default=SALESFORCE, help="git directory of salesforce/localization-xml-mt")
    args = p.parse_args()
    tmx(args.out, args.half, args.salesforce)


if __name__ == "__main__":
    main()
