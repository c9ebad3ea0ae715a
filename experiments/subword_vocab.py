"""Joint SentencePiece vocabularies for the subword release (#87): one BPE model per size, trained on
the Hansards training pairs (both languages together) exactly as ``rnnsearch train`` trains one
(data/tokenize.py: train_sentencepiece), written as FILE.model for ``vocab.sp_model``, and what each
does to the dev set: pieces per word on each side, the share of words kept whole, and the share of
the dev set's capitalised words and numbers (names, amounts: what #85 needs carried) kept whole.

    python experiments/subword_vocab.py --sizes 8000 16000 32000 --out runs/sp

The size is then chosen by training with each (experiments/ablation_race.py --change
"sp16k=vocab.mode=sentencepiece,vocab.sp_model=runs/sp/joint16000.model,..."), dev BLEU and dev NLL
per character compared at equal updates (docs/results/subword_release.md).
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import time
from itertools import chain, islice
from pathlib import Path

from rnnsearch.data.io import corpus_file
from rnnsearch.data.tokenize import train_sentencepiece

HANSARDS = Path(__file__).resolve().parents[2] / "shared" / "data" / "hansards"
NAME_OR_NUMBER = re.compile(r"^(?:[A-Z][a-z]+|\d[\d.,]*)$")


def lines(path: Path, limit: int):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield from (line.rstrip("\n") for line in islice(fh, limit or None))


def dev_stats(sp, path: Path) -> dict:
    """Pieces per word, words kept whole, and capitalised words and numbers kept whole, over a dev side
    (words: whitespace-separated)."""
    words = pieces = whole = special = special_whole = 0
    for line in lines(path, 0):
        for word in line.split():
            n = len(sp.encode(word, out_type=str))
            words, pieces, whole = words + 1, pieces + n, whole + (n == 1)
            if NAME_OR_NUMBER.match(word):
                special, special_whole = special + 1, special_whole + (n == 1)
    return {"pieces_per_word": round(pieces / words, 3), "words_whole": round(whole / words, 4),
            "names_numbers_whole": round(special_whole / max(special, 1), 4)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[8000, 16000, 32000])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--pairs", type=int, default=0, help="training pairs read (0: all 1,021,889)")
    p.add_argument("--data", type=Path, default=HANSARDS)
    args = p.parse_args()
    import sentencepiece as spm
    args.out.mkdir(parents=True, exist_ok=True)
    report = {}
    for size in args.sizes:
        start = time.time()
        proto = train_sentencepiece(chain(lines(corpus_file(args.data, "train", "en"), args.pairs),
                                          lines(corpus_file(args.data, "train", "fr"), args.pairs)), size, "bpe")
        model = args.out / f"joint{size}.model"
        model.write_bytes(proto)
        sp = spm.SentencePieceProcessor(model_proto=proto)
        report[size] = {"model": str(model), "pieces": sp.get_piece_size(), "seconds": round(time.time() - start),
                        **{lang: dev_stats(sp, corpus_file(args.data, "dev", lang)) for lang in ("en", "fr")}}
        print(json.dumps({size: report[size]}), flush=True)
    (args.out / "vocab_report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
