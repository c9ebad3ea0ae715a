"""A release's Hansards test BLEU with the text stage's defaults against its card (#85: within 0.1).

The text stage changes what the model reads only on some lines: those it splits, and those with an
item, a name outside the vocabulary, or a capitalised word it reads in lower case. Every other line
reads the same units in one segment, so its output is the release's committed ``test.hyp.*``
(the same weights and search). ``--changed`` translates only the lines the text stage changes and
takes the committed output for the rest (minutes, not an hour); without it every line is translated.

    python experiments/text_hansards.py hansards_enfr_rnnsearch50 [--changed] [--out HYP]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import sacrebleu

from rnnsearch import Translator
from rnnsearch.decoding import pretrained
from rnnsearch.text.pipeline import LineStats, translate_lines
from rnnsearch.text.segments import segments_of
from rnnsearch.text.settings import TextSettings
from rnnsearch.decoding.source import Source

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hansards"


def changed(translator, lines: list[str], settings: TextSettings, committed: list[str]) -> list[int]:
    """The lines whose segments differ from the line read whole as the model's own units, and those whose
    committed output is empty (the search no longer ends an output before its first word)."""
    out = []
    for n, line in enumerate(lines):
        segs = segments_of(translator, Source(line), 0, settings)
        if len(segs) != 1 or segs[0].items or segs[0].units != translator.source_units(line) or not committed[n]:
            out.append(n)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--changed", action="store_true", help="translate only the lines the text stage changes")
    p.add_argument("--out", help="write the hypotheses here")
    args = p.parse_args()
    release = Path(pretrained.weights_path(pretrained.resolve(args.model))).parent
    translator = Translator.from_pretrained(args.model)
    src, tgt = translator.src_codec.lang, translator.tgt_codec.lang
    card = json.loads((release / "release.json").read_text())
    lines = (DATA / f"test.{src}").read_text(encoding="utf-8").splitlines()
    refs = (DATA / f"test.{tgt}").read_text(encoding="utf-8").splitlines()
    committed = (release / f"test.hyp.{tgt}").read_text(encoding="utf-8").splitlines()
    settings = TextSettings()
    todo = changed(translator, lines, settings, committed) if args.changed else list(range(len(lines)))
    stats = LineStats()
    outputs = [t.text for part in translate_lines(translator, [lines[n] for n in todo], None, settings, stats=stats)
               for t in part]
    hyps = list(committed)
    for n, text in zip(todo, outputs):
        hyps[n] = text
    if args.out:
        Path(args.out).write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    before = sacrebleu.corpus_bleu(committed, [refs]).score
    after = sacrebleu.corpus_bleu(hyps, [refs]).score
    print(json.dumps({"model": args.model, "card_bleu": round(card["test"]["bleu"], 2),
                      "committed_bleu": round(before, 2), "text_stage_bleu": round(after, 2),
                      "delta": round(after - before, 2), "lines_translated": len(todo),
                      "lines_changed": sum(h != c for h, c in zip(hyps, committed)), "slots": stats.slots,
                      "put_back": len(stats.put_back)}))


if __name__ == "__main__":
    main()
