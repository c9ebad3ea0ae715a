"""[UNK] replacement from the alignment (Luong et al. 2015; Jean et al. 2015).

Each <unk> the model writes is replaced by the source word it is aligned to: with an alignment head
(model/align_head.py), the head's beta_ij read once the output is known, else the attention alpha_ij
of the step that wrote it (the </s> column left out). ``copy`` puts that word itself, ``dict`` its most
likely translation in a lexical table built from forced alignments of the training data (``rnnsearch
lexicon``, analysis/lexicon.py), falling back to copy for words the table lacks. Word vocabularies
and attention only: with SentencePiece there is no <unk>, an RNNencdec has no alignment to read.
A released model replaces by default (``Translator.from_checkpoint``; ``--keep-unk`` keeps them).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from rnnsearch.data.batching import make_batch
from rnnsearch.data.io import DataError
from rnnsearch.data.vocab import UNK, UNK_TOKEN
from rnnsearch.decoding.backends import Ensemble
from rnnsearch.errors import UsageError
from rnnsearch.model.align_head import head_alignment

MODES = ("copy", "dict")
LEXICON_FILE = "lexicon.tsv"  # a release's lexicon for ``dict``, when it has one


def problem(translator, mode: str | None, lexicon) -> str | None:
    """Why ``translator`` cannot replace <unk> in ``mode`` (None: it can, or nothing is asked)."""
    if mode is None:
        return None
    if mode not in MODES:
        return f"replace-unk must be one of {MODES}, got {mode!r}"
    if translator.tgt_codec.mode != "word":
        return "[UNK] replacement needs a word vocabulary (this model uses SentencePiece)"
    if getattr(translator.model, "arch", "rnnsearch") != "rnnsearch":
        return "[UNK] replacement needs attention; this model is an RNNencdec"
    if mode == "dict" and lexicon is None:
        return "replace-unk dict needs a lexicon (rnnsearch lexicon ... --out F; --lexicon F)"
    return None


def release_default(translator, release: Path) -> None:
    """A release replaces <unk> (through its lexicon.tsv, when it has one) where the model can."""
    table = release / LEXICON_FILE
    lexicon = read_lexicon(table) if table.is_file() else None
    mode = "dict" if lexicon else "copy"
    if problem(translator, mode, lexicon) is None:
        translator.set_unk_replacement(mode, lexicon)


def default_replacement(translator, release: Path | None, init: dict | None) -> None:
    """A release replaces <unk> by default (``release_default``), as does a run adapted from one
    (``train --init``: ``meta.init.replace_unk``); any other checkpoint writes them as they are."""
    if release is not None:
        release_default(translator, release)
    elif init and init.get("replace_unk") and problem(translator, init["replace_unk"], None) is None:
        translator.set_unk_replacement(init["replace_unk"])


HEAD_PAIRS = 8  # (source, output) pairs per pass of the head: its (B, T, S, A) tensor stays under ~60 MB


def head_model(translator):
    """The PyTorch model whose states the translator's alignment head reads: the translator's, or an
    ensemble's first member (the model of the checkpoint that holds the head); None without a head,
    or with no such model (ONNX graphs)."""
    if translator.align_head is None:
        return None
    model = translator.model
    model = model.models[0] if isinstance(model, Ensemble) else model
    return model if isinstance(model, torch.nn.Module) and hasattr(model, "decoder") else None


@torch.no_grad()
def head_rows(translator, sources: list[list[str]], outputs: list[list[int]]) -> list[np.ndarray]:
    """The alignment head's beta (len(output) + 1, len(source) + 1) of each pair of source units and
    output ids, read with teacher forcing once the output is known, HEAD_PAIRS pairs per pass."""
    rows = []
    for first in range(0, len(outputs), HEAD_PAIRS):
        src = [translator.src_codec.vocab.encode(s) for s in sources[first:first + HEAD_PAIRS]]
        outs = outputs[first:first + HEAD_PAIRS]
        batch = make_batch(src, outs).to(translator.device)
        beta = head_alignment(head_model(translator), translator.align_head, batch.src, batch.src_mask, batch.tgt_in,
                              batch.tgt_out)  # (N, T, S)
        rows += [beta[n, : len(out) + 1, : len(s) + 1].float().cpu().numpy() for n, (s, out) in enumerate(zip(src, outs))]
    return rows


def alignments(translator, sources: list[list[str]], found: list[list]) -> list[list[np.ndarray | None]]:
    """Per sentence (its source units and hypotheses), per hypothesis, the rows to replace its <unk>
    from: the head's where the model has one (and the hypothesis an <unk>; those of the whole batch
    read together), else its attention."""
    if head_model(translator) is None:
        return [[h.attention for h in hyps] for hyps in found]
    todo = [(n, i) for n, hyps in enumerate(found) for i, h in enumerate(hyps) if UNK in h.tokens]
    read = head_rows(translator, [sources[n] for n, _ in todo], [found[n][i].tokens for n, i in todo]) if todo else []
    rows = dict(zip(todo, read))
    return [[rows.get((n, i), h.attention) for i, h in enumerate(hyps)] for n, hyps in enumerate(found)]


def replace(tokens: list[str], source_units: list[str], attention: np.ndarray | None, mode: str,
            lexicon: dict[str, str] | None = None) -> list[str]:
    """``tokens`` with each <unk> replaced; ``attention``: an alignment (len(tokens) + 1, len(source_units) + 1)."""
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


def as_written(translation) -> list[str]:
    """A Translation's output units with each replaced <unk> back (what ``--keep-unk`` shows)."""
    return [UNK_TOKEN if i in translation.replaced else t for i, t in enumerate(translation.tokens)]


def lexicon_pairs(path) -> Iterator[tuple[str, str]]:
    """The (source, target) of each line of a lexicon file, ``source<TAB>target[<TAB>prob<TAB>count]``,
    in its order (``rnnsearch lexicon``: each source's rows together, most frequent first); a bad
    line is a DataError naming it."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2 or not fields[0] or not fields[1]:
            raise DataError(f"{path}:{number}: expected 'source<TAB>target', got {line[:60]!r}")
        yield fields[0], fields[1]


def read_lexicon(path) -> dict[str, str]:
    """A lexicon file's first row of each source word (its most frequent translation)."""
    table = {}
    for source, target in lexicon_pairs(path):
        table.setdefault(source, target)
    return table
