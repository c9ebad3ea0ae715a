"""The lexical table of ``rnnsearch lexicon``: for each source word, the target words its forced
alignments link it to in training pairs, most often first, with p(target | source) and the count.
decoding/unk.py reads each source word's first row (``--replace-unk dict``); decoding/shortlist.py
reads its first N (``--shortlist``)."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from rnnsearch.analysis.force_align import force_align

Entry = tuple[str, float, int]  # target word, p(target | source), links


def build_lexicon(alignments, min_count: int = 1, per_source: int = 1) -> dict[str, list[Entry]]:
    """From alignments (``force_align.Alignment``s, or anything with source_words, target_words and
    links): for each source word, its ``per_source`` most frequent aligned target words (seen at
    least ``min_count`` times), most frequent first, with p(target | source) and the link count.
    Sources with none left are not in the table."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for a in alignments:
        for s, t in a.links:
            counts[a.source_words[s]][a.target_words[t]] += 1
    return _ranked(counts, min_count, per_source)


def _ranked(counts: dict[str, Counter], min_count: int, per_source: int) -> dict[str, list[Entry]]:
    table = {}
    for source, targets in counts.items():
        total = sum(targets.values())
        kept = [(t, n / total, n) for t, n in sorted(targets.items(), key=lambda tn: (-tn[1], tn[0]))[:per_source]
                if n >= min_count]
        if kept:
            table[source] = kept
    return table


def lexicon_from_corpus(translator, srcs: list[str], tgts: list[str], max_len: int = 80,
                        min_count: int = 1, per_source: int = 1) -> tuple[dict, int, int]:
    """``build_lexicon`` over the forced alignments of raw sentence pairs, read as the model's
    Moses tokens; pairs empty or over ``max_len`` words are left out. Returns (table, used, dropped)."""
    pairs, dropped = [], 0
    for s, t in zip(srcs, tgts):
        sw, tw = translator.src_codec.words(s), translator.tgt_codec.words(t)
        if sw and tw and len(sw) <= max_len and len(tw) <= max_len:
            pairs.append((" ".join(sw), " ".join(tw)))
        else:
            dropped += 1
    return build_lexicon(force_align(translator, pairs), min_count, per_source), len(pairs), dropped


def lexicon_from_links(translator, srcs: list[str], tgts: list[str], links: list[str], where: str = "links",
                       min_count: int = 1, per_source: int = 1) -> dict[str, list[Entry]]:
    """``build_lexicon`` over the links of another aligner (eflomal, fast_align), ``links`` one line
    per pair (Pharaoh ``i-j``, source word i, target word j, 0-based) of raw sentence pairs read as the
    model's words; a link that does not fit its pair is a DataError naming ``where`` and the line."""
    from rnnsearch.data.guided import parse_pharaoh
    from rnnsearch.data.io import DataError
    counts: dict[str, Counter] = defaultdict(Counter)
    for number, (s, t, line) in enumerate(zip(srcs, tgts, links, strict=True), start=1):
        sw, tw = translator.src_codec.words(s), translator.tgt_codec.words(t)
        for i, j in parse_pharaoh(line, f"{where}:{number}"):
            if i >= len(sw) or j >= len(tw):
                raise DataError(f"{where}:{number}: link {i}-{j} is outside the pair's {len(sw)} source and "
                                f"{len(tw)} target words (the links must index the words the model reads)")
            counts[sw[i]][tw[j]] += 1
    return _ranked(counts, min_count, per_source)


def write_lexicon(table: dict[str, list[Entry]], path) -> None:
    """``source<TAB>target<TAB>p<TAB>count`` lines: the sources by their best count (most first),
    each source's rows together, most frequent target first; written whole or not at all."""
    order = sorted(table.items(), key=lambda kv: (-kv[1][0][2], kv[0]))
    lines = [f"{s}\t{t}\t{p:.4f}\t{n}\n" for s, rows in order for t, p, n in rows]
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text("".join(lines), encoding="utf-8")
    partial.replace(path)
