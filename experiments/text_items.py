"""Sentences and items through a released model, before and after the text stage (#85).

Reads paragraphs of our own writing (experiments/data/paragraphs_en.jsonl: each a line of several
sentences and the strings its translation must hold, in the source's order: URLs, e-mail addresses,
phone numbers, amounts in the target's convention, names outside the vocabulary) and translates each
twice in one run: as a line is translated without the text stage (``--no-split --no-placeholders``)
and with the defaults.
Prints, per split (dev: looked at while building; held-out: not), the sentences in and out (the
output split by the same splitter) and the items that come through (spaces of any kind compared as
one; an item may list the ways it may be written: ``48,5 millions $`` or ``48,5 millions de dollars``),
and the lines of two or more items whose output holds them all in the source's order (an item in
another's place fails it). experiments/data/multi_slot_en.jsonl: sentences of several names and items.

    python experiments/text_items.py hansards_enfr_rnnsearch50 [--data FILE] [--show]
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from rnnsearch import Translator
from rnnsearch.text import sentences
from rnnsearch.text.items import find
from rnnsearch.text.pipeline import LineStats, TextSettings, translate_lines

DATA = Path(__file__).parent / "data" / "paragraphs_en.jsonl"
SPACE = re.compile(r"[\s\u00a0\u202f]+")


def spaced(text: str) -> str:
    return SPACE.sub(" ", text)


def holds(output: str, item) -> bool:
    """Whether the output holds the item (a string, or a list of the ways it may be written)."""
    return any(spaced(i) in spaced(output) for i in ([item] if isinstance(item, str) else item))


def measure(translator, rows: list[dict], settings: TextSettings, beam: int | None) -> tuple[list[str], LineStats]:
    stats = LineStats()
    search = translator.search_settings(beam=beam)
    outputs = [t.text for part in translate_lines(translator, [r["text"] for r in rows], search, settings, stats=stats)
               for t in part]
    return outputs, stats


def sentence_count(text: str, lang: str) -> int:
    """Sentences of a text, as the splitter reads them with its items kept whole."""
    keep = [(i.start, i.end) for i in find(text, lang, "en" if lang == "fr" else "fr")]
    return sum(1 for a, b in sentences.split(text, lang, keep) if text[a:b].strip())


def position(output: str, item) -> int:
    """Where the output first writes the item (any of its ways), -1 where it does not."""
    found = [spaced(output).find(spaced(i)) for i in ([item] if isinstance(item, str) else item)]
    return min((f for f in found if f >= 0), default=-1)


def in_order(output: str, row_items: list) -> bool:
    """Whether the items come in the order the row lists them (the source's), all present."""
    at = [position(output, i) for i in row_items]
    return all(a >= 0 for a in at) and at == sorted(at)


def counts(rows: list[dict], outputs: list[str], src_lang: str, tgt_lang: str) -> dict:
    sent_in = sum(sentence_count(r["text"], src_lang) for r in rows)
    sent_out = sum(sentence_count(o, tgt_lang) for o in outputs)
    short = sum(sentence_count(o, tgt_lang) < sentence_count(r["text"], src_lang) for r, o in zip(rows, outputs))
    items = sum(len(r["items"]) for r in rows)
    kept = sum(holds(o, i) for r, o in zip(rows, outputs) for i in r["items"])
    several = [(r, o) for r, o in zip(rows, outputs) if len(r["items"]) > 1]
    return {"lines": len(rows), "sentences_in": sent_in, "sentences_out": sent_out, "lines_short": short,
            "items": items, "items_kept": kept, "several": len(several),
            "ordered": sum(in_order(o, r["items"]) for r, o in several)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--beam", type=int, default=None)
    p.add_argument("--show", action="store_true", help="print each output")
    args = p.parse_args()
    rows = [json.loads(line) for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line.strip()]
    translator = Translator.from_pretrained(args.model)
    langs = translator.src_codec.lang, translator.tgt_codec.lang
    runs = {"before (--no-split --no-placeholders)": TextSettings(split=False, placeholders=False),
            "after (defaults)": TextSettings()}
    print("| run | split | lines | sentences in | sentences out | lines with fewer sentences | items kept "
          "| lines of 2+ items with all in the source's order |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    shown = {}
    for name, settings in runs.items():
        outputs, stats = measure(translator, rows, settings, args.beam)
        shown[name] = outputs
        for split in ("dev", "held-out"):
            chosen = [(r, o) for r, o in zip(rows, outputs) if r["split"] == split]
            c = counts([r for r, _ in chosen], [o for _, o in chosen], *langs)
            print(f"| {name} | {split} | {c['lines']} | {c['sentences_in']} | {c['sentences_out']} | {c['lines_short']} "
                  f"| {c['items_kept']} of {c['items']} | {c['ordered']} of {c['several']} |")
        if stats.slots:
            print(f"|   slots: {stats.slots}, put back by the alignment (the model dropped them): "
                  f"{len(stats.put_back)} | | | | | | | |")
    if args.show:
        for n, r in enumerate(rows):
            print(f"\n[{r['split']}] {r['text']}")
            for name, outputs in shown.items():
                missing = [i for i in r["items"] if not holds(outputs[n], i)]
                print(f"  {name.split()[0]}: {outputs[n]}" + (f"   MISSING {missing}" if missing else ""))


if __name__ == "__main__":
    main()
