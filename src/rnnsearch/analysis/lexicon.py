"""The lexical table of ``--replace-unk dict`` (``rnnsearch lexicon``): for each source word, the
target word its forced alignments link it to most often in training pairs, with p(target | source)
and the count. decoding/unk.py reads the table back."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from rnnsearch.analysis.force_align import force_align


def build_lexicon(alignments, min_count: int = 1) -> dict[str, tuple[str, float, int]]:
    """From forced alignments (``force_align.Alignment``): for each source word, its most frequent
    aligned target word with p(target | source) and the link count."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for a in alignments:
        for s, t in a.links:
            counts[a.source_words[s]][a.target_words[t]] += 1
    table = {}
    for source, targets in counts.items():
        target, n = targets.most_common(1)[0]
        if n >= min_count:
            table[source] = (target, n / sum(targets.values()), n)
    return table


def lexicon_from_corpus(translator, srcs: list[str], tgts: list[str], max_len: int = 80,
                        min_count: int = 1) -> tuple[dict, int, int]:
    """``build_lexicon`` over the forced alignments of raw sentence pairs, read as the model's
    Moses tokens; pairs empty or over ``max_len`` words are left out. Returns (table, used, dropped)."""
    pairs, dropped = [], 0
    for s, t in zip(srcs, tgts):
        sw, tw = translator.src_codec.words(s), translator.tgt_codec.words(t)
        if sw and tw and len(sw) <= max_len and len(tw) <= max_len:
            pairs.append((" ".join(sw), " ".join(tw)))
        else:
            dropped += 1
    return build_lexicon(force_align(translator, pairs), min_count), len(pairs), dropped


def write_lexicon(table: dict[str, tuple[str, float, int]], path) -> None:
    lines = [f"{s}\t{t}\t{p:.4f}\t{n}\n" for s, (t, p, n) in sorted(table.items(), key=lambda kv: -kv[1][2])]
    Path(path).write_text("".join(lines), encoding="utf-8")
