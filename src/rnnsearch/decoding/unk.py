"""[UNK] replacement from the attention (Luong et al. 2015; Jean et al. 2015).

Each <unk> the model writes is replaced by the source word it attends to most when it is
written (alpha_ij, the </s> column left out): ``copy`` puts that word itself, ``dict`` its most
likely translation in a lexical table built from forced alignments of the training data
(``rnnsearch lexicon``, analysis/lexicon.py), falling back to copy for words the table lacks. Word vocabularies only:
with SentencePiece there is no <unk> to replace.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rnnsearch.data.vocab import UNK_TOKEN
from rnnsearch.errors import UsageError
from rnnsearch.data.io import DataError

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
