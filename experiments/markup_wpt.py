"""Tag placement on WPT 2003 (#61): how often ``--markup`` puts a tag pair around exactly the right
target words, with the alignment head and with plain attention.

For each of the 447 WPT 2003 En-Fr sentences, 1-3 spans of 1-4 source words (seeded, apart from each
other; random, or phrase pairs of the gold links: no link leaves the span and its projection) are
wrapped in tags; the reference target span of each is the first to the last French
word that the gold links (sure and possible) tie to its words (a span with no linked word is left out).
The model reads the gold pair with teacher forcing (as ``rnnsearch align`` does, reading WPT's
lowercased text as Hansards writes it: ``--natural``), and decoding/markup.py places the tags on the
given French words from that alignment (the head's, or the attention's), as ``--markup`` does on a
translation. Reported: exact-span accuracy on the held-out half (224-447) and on 1-223, and the share
of outputs that are well-formed with every tag kept; and, as a bound, the same placement from the gold
links themselves (each French word's links shared equally): a random span is often no phrase pair
(its words' translations mingle with others'), and its exact span cannot be told from any alignment.

    python experiments/markup_wpt.py --model hansards_enfr_rnnsearch50 --out docs/results/markup_wpt.md
"""
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from rnnsearch.analysis.force_align import force_align
from rnnsearch.analysis.gold_text import natural_forms
from rnnsearch.analysis.links import read_wpt_gold
from rnnsearch.data.io import read_lines
from rnnsearch.decoding.markup import parse, render
from rnnsearch.decoding.placement import place, punctuation, token_spans
from rnnsearch.decoding.translator import Translator

WPT = Path(__file__).resolve().parents[2] / "shared" / "data" / "alignment" / "hansards_enfr"
HELD_OUT = range(223, 447)  # sentences 224-447, 0-based


def spans(words: int, rng: random.Random) -> list[tuple[int, int]]:
    """1-3 spans of 1-4 words, apart from each other, in order."""
    chosen: list[tuple[int, int]] = []
    for _ in range(rng.randint(1, 3)):
        length = rng.randint(1, min(4, words))
        start = rng.randint(0, words - length)
        if all(start + length <= a or b <= start for a, b in chosen):
            chosen.append((start, start + length))
    return sorted(chosen)


def phrase_spans(words: int, links, rng: random.Random) -> list[tuple[int, int]]:
    """Up to 3 spans of 1-4 words that form phrase pairs with the gold links (no link leaves the span and
    its projection: the units tags wrap in real documents), apart from each other, in order."""
    candidates = [(a, b) for a in range(words) for b in range(a + 1, min(a + 5, words + 1))
                  if _projection(links, a, b) is not None]
    chosen: list[tuple[int, int]] = []
    for a, b in rng.sample(candidates, min(3, len(candidates))):
        if all(b <= c or d <= a for c, d in chosen):
            chosen.append((a, b))
    return sorted(chosen)


def _projection(links, a: int, b: int) -> tuple[int, int] | None:
    """The target span the links give source words [a, b), if no link leaves the pair."""
    target = [t for s, t in links if a <= s < b]
    if not target:
        return None
    lo, hi = min(target), max(target) + 1
    return None if any((a <= s < b) != (lo <= t < hi) for s, t in links) else (lo, hi)


def tagged(words: list[str], chosen: list[tuple[int, int]]) -> str:
    out = []
    for i, w in enumerate(words):
        out += [f"<t{k}>" for k, (a, _) in enumerate(chosen) if a == i] + [w.replace("&", "&amp;")]
        out += [f"</t{k}>" for k, (_, b) in enumerate(chosen) if b == i + 1]
    return re.sub(r"(<t\d+>) ", r"\1", re.sub(r" (</t\d+>)", r"\1", " ".join(out)))


def gold_rows(pairs, gold, sure_only: bool = False) -> list[SimpleNamespace]:
    """The gold links (sure and possible, or the sure ones only) as alignments: each French word's links,
    shared equally."""
    out = []
    for (src, tgt), (sure, possible) in zip(pairs, gold):
        soft = np.zeros((len(tgt.split()), len(src.split())))
        for s, t in sure if sure_only else possible:
            soft[t, s] = 1
        out.append(SimpleNamespace(soft=soft / np.maximum(soft.sum(1, keepdims=True), 1)))
    return out


def evaluate(translator: Translator, reading: str, pairs, gold, seed: int, phrases: bool = False) -> dict:
    alignments = gold_rows(pairs, gold, reading == "gold sure links") if reading.startswith("gold") else force_align(
        translator, pairs, forms=natural_forms(translator.src_codec, translator.tgt_codec), reading=reading)
    return {"reading": reading, **score([a.soft for a in alignments], pairs, gold, seed, phrases)}


def score(alignments, pairs, gold, seed: int, phrases: bool, groups: dict | None = None) -> dict:
    """Tags placed by ``alignments`` (one (French words, English words) array a pair): the exact share
    in each group of sentences (default: the held-out half and 1-223), and the well-formed share."""
    groups = groups or {"held_out": HELD_OUT, "first_half": range(HELD_OUT.start)}
    rng = random.Random(seed)
    hits = {name: [0, 0] for name in groups}
    well_formed = 0
    for k, ((src, tgt), (_, possible), alignment) in enumerate(zip(pairs, gold, alignments)):
        words, target = src.split(), tgt.split()
        chosen = phrase_spans(len(words), possible, rng) if phrases else spans(len(words), rng)
        source = tagged(words, chosen)
        plain, elements = parse(source)
        place(elements, token_spans(plain, words), alignment, 0, len(target), (punctuation(words), punctuation(target)))
        out = render(elements, target, " ".join(target))
        try:
            kept = sorted(re.findall(r"<[^<>]+>", out)) == sorted(re.findall(r"<[^<>]+>", source))
            well_formed += parse(out)[0].split() == target and kept
        except ValueError:
            pass
        for element, (a, b) in zip(elements, chosen):
            linked = [t for s, t in possible if a <= s < b]
            for name in (name for name, rows in groups.items() if k in rows and linked):
                hits[name][0] += element.target == (min(linked), max(linked) + 1)
                hits[name][1] += 1
    return {**{h: {"exact": round(n / max(total, 1), 4), "spans": total} for h, (n, total) in hits.items()},
            "well_formed": round(well_formed / len(pairs), 4)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="hansards_enfr_rnnsearch50")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    translator = Translator.from_pretrained(args.model)
    pairs = [tuple(x.strip() for x in line.split("|||")) for line in read_lines(WPT / "test.en-fr")]
    gold = read_wpt_gold(WPT / "test.gold")
    readings = ["head", "attention"] if translator.align_head is not None else ["attention"]
    readings += ["gold links", "gold sure links"]
    rows = [{**evaluate(translator, r, pairs, gold, args.seed, phrases), "spans": kind}
            for kind, phrases in (("random", False), ("phrase pairs", True)) for r in readings]
    lines = [f"Tag placement on WPT 2003 En-Fr ({len(pairs)} sentences), {args.model}: 1-3 tagged spans of 1-4 "
             f"source words per sentence (seed {args.seed}), random or phrase pairs of the gold links; exact target "
             "span of each tag pair against the gold links' (sure and possible) projection. Placement: the run of target "
             "words that best answers to the tagged words (decoding/markup.py); 'gold links': the same placement from "
             "the gold links themselves, a bound; 'gold sure links': from the 4,038 sure links only "
             "(of 17,438 sure and possible); both have an AER of 0 (every link possible, every sure link there).",
             "", "| tagged spans | alignment | held out (224-447): exact | spans | 1-223: exact | spans | "
             "well-formed, every tag kept |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['spans']} | {r['reading']} | {r['held_out']['exact']:.1%} | {r['held_out']['spans']} | "
                     f"{r['first_half']['exact']:.1%} | {r['first_half']['spans']} | {r['well_formed']:.0%} |")
    lines += ["", f"Command: `python experiments/markup_wpt.py --model {args.model} --seed {args.seed}`."]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
