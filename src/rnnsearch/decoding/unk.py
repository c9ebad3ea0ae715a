"""[UNK] replacement from the attention (Luong et al. 2015; Jean et al. 2015).

Each <unk> the model writes is replaced by the source word it attends to most when it is
written (alpha_ij, the </s> column left out): ``copy`` puts that word itself, ``dict`` its most
likely translation in a lexical table built from forced alignments of the training data
(``build_lexicon``), falling back to copy for words the table lacks. Word vocabularies only:
with SentencePiece there is no <unk> to replace.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from rnnsearch.data.vocab import SPECIALS
from rnnsearch.errors import UsageError
from rnnsearch.data.io import DataError

UNK_TOKEN = SPECIALS[1]
MODES = ("copy", "dict")


def replace(tokens: list[str], source_units: list[str], attention: np.ndarray | None, mode: str,
            lexicon: dict[str, str] | None = None) -> list[str]:
    """``tokens`` with each <unk> replaced; ``attention`` is (len(tokens) + 1, len(source_units) + 1)."""
    if UNK_TOKEN not in tokens:
        return tokens
    if attention is None:
        raise UsageError("[UNK] replacement needs the attention of an RNNsearch model (this one has none)")
    out = list(tokens)
    for i, token in enumerate(tokens):
        if token == UNK_TOKEN and source_units:
            word = source_units[int(np.argmax(attention[i, : len(source_units)]))]
            out[i] = lexicon.get(word, word) if mode == "dict" and lexicon else word
    return out


def build_lexicon(alignments, min_count: int = 1) -> dict[str, tuple[str, float, int]]:
    """From forced alignments (``align.Alignment``): for each source word, its most frequent
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
    from rnnsearch.analysis.force_align import force_align
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


def read_lexicon(path) -> dict[str, str]:
    """A lexicon file: ``source<TAB>target[<TAB>prob<TAB>count]`` per line."""
    table = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2 or not fields[0] or not fields[1]:
            raise DataError(f"{path}:{number}: expected 'source<TAB>target', got {line[:60]!r}")
        table[fields[0]] = fields[1]
    return table
