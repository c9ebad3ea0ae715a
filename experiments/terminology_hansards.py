"""Terminology on the Hansards test (#61): constrained decoding with 1-2 reference terms per sentence
that the free output misses, against free decoding, at beam 5 and 12.

The constraints file (``build``; committed as docs/results/terminology_hansards.tsv, ``line<TAB>source
words<TAB>target term``, no sentence text) comes from the model's free output at beam 5: for each
test sentence, the reference's content words (alphabetic, outside the 100 most frequent target
units, in the target vocabulary) that the output lacks and that the alignment head (teacher-forced
on the source and reference) ties to a content word of the source; the two whose source words are
rarest, each extended to a two-word term when the next reference word is also such a missed word.
A sentence with none stays free: every run translates the whole test set in one batch mix.

``measure`` translates the test set four ways (beam 5 and 12, free and constrained, the same model
loaded once, 2 threads, each timed alone) and reports the share of terms met (each term's units in a
row in the output), the sentences refused, BLEU (sacreBLEU, the test references) and output units per
second of translation (loading excluded). The constraints come from the references, so constrained
BLEU is an oracle's gain (as in Post & Vilar 2018), not a free-translation score.

    python experiments/terminology_hansards.py build --out docs/results/terminology_hansards.tsv
    python experiments/terminology_hansards.py measure --constraints docs/results/terminology_hansards.tsv \\
        --out docs/results/terminology_hansards.md
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.analysis.force_align import force_align
from rnnsearch.data.io import read_lines
from rnnsearch.data.vocab import UNK
from rnnsearch.decoding.source import Source
from rnnsearch.decoding.translator import Translator

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "hansards"
FREQUENT = 100  # units ranked above this (after the 4 specials) are function words here


def content(unit: str, vocab) -> bool:
    """Alphabetic, in the vocabulary, and neither it nor its lowercase among the most frequent units."""
    ranks = [vocab.stoi.get(unit, UNK), vocab.stoi.get(unit.lower(), 4 + FREQUENT)]
    return unit.isalpha() and ranks[0] != UNK and min(ranks) >= 4 + FREQUENT


def choose_terms(src_units, ref_units, out_units, links, src_vocab, tgt_vocab, most: int = 2, longest: int = 3):
    """Up to ``most`` (source words, target term) of one sentence, as the module says: runs of adjacent
    missed reference words (at most ``longest``) tied to content source words, rarest source first."""
    produced = set(out_units)
    missed = {j for j, u in enumerate(ref_units) if content(u, tgt_vocab) and u not in produced}
    source_of: dict[int, set[int]] = {}
    for s, t in links:
        if t in missed and content(src_units[s], src_vocab):
            source_of.setdefault(t, set()).add(s)
    runs: list[list[int]] = []
    for t in sorted(source_of):
        if runs and runs[-1][-1] == t - 1 and len(runs[-1]) < longest:
            runs[-1].append(t)
        else:
            runs.append([t])
    rarity = lambda run: -max(src_vocab.stoi.get(src_units[s], UNK) for t in run for s in source_of[t])  # noqa: E731
    terms = []
    for run in sorted(runs, key=rarity):
        words = sorted({s for t in run for s in source_of[t]})
        term = " ".join(ref_units[t] for t in run)
        if term not in [x[1] for x in terms]:
            terms.append((" ".join(src_units[s] for s in words), term))
        if len(terms) == most:
            break
    return terms


def build(args) -> None:
    translator = Translator.from_pretrained(args.model)
    sources, refs = test_set(args.lines)
    settings = translator.search_settings(beam=5)
    start = time.monotonic()
    free = translator.translate(sources, settings)
    print(f"free output, beam 5: {time.monotonic() - start:.0f} s")
    src_units = [translator.source_units(s) for s in sources]
    ref_units = [translator.tgt_codec.units(r) for r in refs]
    pairs = [(" ".join(s), " ".join(r)) for s, r in zip(src_units, ref_units)]
    alignments = force_align(translator, pairs, reading="head" if translator.align_head is not None else "attention")
    rows = [f"# {args.model}: reference terms its free beam-5 output misses (experiments/terminology_hansards.py)",
            "# line\tsource words\ttarget term"]
    for n, (s, r, t, a) in enumerate(zip(src_units, ref_units, free, alignments), 1):
        for source, term in choose_terms(s, r, t.tokens, a.links, translator.src_codec.vocab, translator.tgt_codec.vocab):
            rows.append(f"{n}\t{source}\t{term}")
    Path(args.out).write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(rows) - 2} terms for {len({r.split(chr(9))[0] for r in rows[2:]})} of {len(sources)} sentences "
          f"-> {args.out}")


def test_set(lines: int) -> tuple[list[str], list[str]]:
    sources, refs = read_lines(DATA / "test.en"), read_lines(DATA / "test.fr")
    return (sources[:lines], refs[:lines]) if lines else (sources, refs)


def read_terms(path) -> dict[int, list[str]]:
    terms: dict[int, list[str]] = {}
    for line in read_lines(path):
        if line and not line.startswith("#"):
            n, _, term = line.split("\t")
            terms.setdefault(int(n), []).append(term)
    return terms


def contains(tokens: list[str], phrase: list[str]) -> bool:
    return any(tokens[i:i + len(phrase)] == phrase for i in range(len(tokens) - len(phrase) + 1))


def run(translator, sources, refs, terms, beam: int, constrained: bool) -> dict:
    texts = [Source(s, constraints=tuple(terms.get(n, ()))) if constrained else s
             for n, s in enumerate(sources, 1)]
    start = time.monotonic()
    out = translator.translate(texts, translator.search_settings(beam=beam))
    seconds = time.monotonic() - start
    units = sum(len(t.tokens) for t in out)
    wanted = [(n, term) for n, ts in terms.items() for term in ts]
    met = sum(contains(out[n - 1].tokens, translator.tgt_codec.units(term)) for n, term in wanted)
    bleu, _ = corpus_bleu([t.text for t in out], refs)
    return {"beam": beam, "constrained": constrained, "seconds": round(seconds, 1), "units": units,
            "units_per_s": round(units / seconds, 1), "bleu": round(bleu, 2), "terms": len(wanted), "met": met,
            "refused": sum(t.error is not None for t in out),
            "incomplete": sum(not t.constraints_met for t in out)}


def measure(args) -> None:
    translator = Translator.from_pretrained(args.model)
    sources, refs = test_set(args.lines)
    terms = {n: t for n, t in read_terms(args.constraints).items() if n <= len(sources)}
    rows = []
    for beam in (5, 12):
        for constrained in (False, True):
            rows.append(run(translator, sources, refs, terms, beam, constrained))
            print(json.dumps(rows[-1]), flush=True)
    lines = [f"Terminology on the Hansards test ({len(sources)} sentences), {args.model}: {rows[0]['terms']} "
             f"reference terms its free beam-5 output misses, for {len(terms)} sentences "
             f"({args.constraints}); the other sentences are translated free in the same runs.", "",
             "| beam | constraints | terms met | refused | BLEU | output units/s | time |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        met = f"{r['met'] / r['terms']:.1%} ({r['met']:,}/{r['terms']:,})"
        lines.append(f"| {r['beam']} | {'yes' if r['constrained'] else 'no'} | {met} | {r['refused']} | {r['bleu']:.2f} | "
                     f"{r['units_per_s']:,.0f} | {r['seconds']:,.0f} s |")
    for beam in (5, 12):
        free, bound = (r for r in rows if r["beam"] == beam)
        lines.append(f"\nBeam {beam}: constrained decoding takes {bound['seconds'] / free['seconds']:.2f}x the time "
                     f"of free decoding ({free['units_per_s'] / bound['units_per_s']:.2f}x per output unit).")
    lines += ["", f"Command: `python experiments/terminology_hansards.py measure --model {args.model} --constraints "
              f"{args.constraints}` (torch, {translator.model.__class__.__name__}, threads: torch's default)."]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
        Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("build", "measure"))
    p.add_argument("--model", default="hansards_enfr_rnnsearch50")
    p.add_argument("--constraints", default="docs/results/terminology_hansards.tsv")
    p.add_argument("--out")
    p.add_argument("--lines", type=int, default=0, help="the first N test sentences (0: all)")
    args = p.parse_args()
    build(args) if args.step == "build" else measure(args)


if __name__ == "__main__":
    main()
