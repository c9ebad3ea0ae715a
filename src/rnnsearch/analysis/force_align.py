"""Forced alignment: the attention of a model reading given sentence pairs (teacher forcing),
merged from model units back to the whitespace-separated words of the input.

Each input word is turned into model units on its own (SentencePiece pieces, or Moses tokens),
so every unit belongs to exactly one word. The soft word alignment of target word t and
source word s is the mean, over t's units (the output steps that emitted them), of the
attention summed over s's units: rows stay distributions over the source words. The final
</s> row and column are left out. The hard alignment links each target word to the source
word with the highest weight (Pharaoh ``s-t``, 0-based, source first).

With ``forms`` the model reads other words than the given ones (``gold_text``: the WPT gold
set's words in natural form), each standing for one or more given words: a unit that stands
for several target words counts for each of them; a source unit's weight is shared equally by
the source words it stands for. Soft weights and links stay on the given words.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rnnsearch.analysis.gold_text import Group, as_written
from rnnsearch.analysis.links import SYMMETRIZATIONS, symmetrize
from rnnsearch.data.batching import make_batch
from rnnsearch.errors import UsageError
from rnnsearch.model import evaluating
from rnnsearch.model.align_head import head_alignment


SHIFTS = (-1, 0, 1, 2)
READINGS = ("attention", "posterior", "head", "head+posterior")


@dataclass
class Alignment:
    source_words: list[str]
    target_words: list[str]
    soft: np.ndarray                   # (target words, source words), rows sum to <= 1
    links: set[tuple[int, int]]        # (source word, target word), 0-based


def group_units(codec, groups: list[Group]) -> tuple[list[str], list[tuple[int, ...]]]:
    """The model units of each group's word and, for each unit, the given words it stands for."""
    units, owners = [], []
    for word, covered in groups:
        pieces = codec.units(word) or [word]
        units.extend(pieces)
        owners.extend([tuple(covered)] * len(pieces))
    return units, owners


def _pairs(owners: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit, word, 1 / words of that unit) for every word a unit stands for."""
    unit, word, share = [], [], []
    for u, covered in enumerate(owners):
        for w in covered:
            unit.append(u), word.append(w), share.append(1.0 / len(covered))
    return np.asarray(unit, dtype=int), np.asarray(word, dtype=int), np.asarray(share)


def merge(attention: np.ndarray, src_owner: list[tuple[int, ...]], tgt_owner: list[tuple[int, ...]], n_src: int,
          n_tgt: int) -> np.ndarray:
    """Unit attention (target units, source units) -> word alignment (target words, source
    words): summed over a source word's units, averaged over a target word's units. A unit's
    owner is the tuple of the indices of the words it stands for (``group_units``)."""
    s_unit, s_word, s_share = _pairs(src_owner)
    by_source = np.zeros((attention.shape[0], n_src))
    np.add.at(by_source.T, s_word, attention.T[s_unit] * s_share[:, None])  # sum columns per source word
    t_unit, t_word, _ = _pairs(tgt_owner)
    counts = np.bincount(t_word, minlength=n_tgt)[:, None]
    soft = np.zeros((n_tgt, n_src))
    np.add.at(soft, t_word, by_source[t_unit])
    return soft / np.maximum(counts, 1)


EXTRACTIONS = ("rows", "columns") + SYMMETRIZATIONS + ("threshold",)  # argmaxes, the two symmetrised, or weights


def check_reading(extract: str, balance: int, threshold: float | None = None) -> None:
    """A UsageError for an extraction ``hard_links`` cannot read (before any model is loaded)."""
    if extract not in EXTRACTIONS:
        raise UsageError(f"extract must be one of {', '.join(EXTRACTIONS)}, got {extract!r}")
    if balance < 0:
        raise UsageError(f"balance: a number of Sinkhorn iterations, 0 or more, got {balance}")
    if extract == "threshold" and (threshold is None or balance):
        raise UsageError("extract 'threshold' links only the weights at or above a threshold, as they are: "
                         "give --threshold W and no --balance")


def sinkhorn(soft: np.ndarray, iterations: int) -> np.ndarray:
    """``soft`` (target words, source words) balanced by Sinkhorn's iterations: each scales the rows
    to sum to 1, then the columns to sum to T/S, so that every source word gets the same total
    weight as every target word does (an optimal-transport reading of attention with uniform
    marginals). Weights below 1e-9 are raised to it, so that no row or column is empty."""
    balanced = np.maximum(soft, 1e-9)
    for _ in range(iterations):
        balanced = balanced / balanced.sum(1, keepdims=True)  # rows: 1 each
        balanced = balanced / balanced.sum(0, keepdims=True) * (soft.shape[0] / soft.shape[1])  # columns: T/S
    return balanced


def hard_links(soft: np.ndarray, threshold: float | None = None, extract: str = "rows",
               balance: int = 0) -> set[tuple[int, int]]:
    """Links {(source, target)} read from a soft alignment (target words, source words).

    ``extract``: "rows", each target word to its most attended source word (the default);
    "columns", each source word to the target word that attends to it most; or a symmetrisation
    (``links.symmetrize``: "intersection", "grow-diag", ...) of those two, as of two directions.
    ``balance``: read them from ``sinkhorn(soft, balance)`` instead. With a ``threshold``, also
    every (source, target) pair whose weight in ``soft`` is at least that; "threshold": only those
    (no argmax: a word whose weights all fall below it stays unaligned)."""
    check_reading(extract, balance, threshold)
    if soft.size == 0:
        return set()
    if extract == "threshold":
        return {(int(s), int(t)) for t, s in zip(*np.nonzero(soft >= threshold))}
    read = sinkhorn(soft, balance) if balance else soft
    rows = {(int(s), t) for t, s in enumerate(read.argmax(1))}
    columns = {(s, int(t)) for s, t in enumerate(read.argmax(0))}
    links = rows if extract == "rows" else columns if extract == "columns" else symmetrize(rows, columns, extract)
    if threshold is not None:
        links = links | {(int(s), int(t)) for t, s in zip(*np.nonzero(soft >= threshold))}
    return links


@torch.no_grad()
def force_align(translator, pairs: list[tuple[str, str]], batch_size: int | None = None, shift: int = 0,
                threshold: float | None = None, forms=None, extract: str = "rows", balance: int = 0,
                reading: str = "attention") -> list[Alignment]:
    """Alignments of (source text, target text) pairs under ``translator``'s model (RNNsearch).

    By default target unit y_i takes alpha_i, the attention of the step that emits it (its query
    is s_{i-1}). ``shift=1`` takes alpha_{i+1}: the step where y_i is the decoder's input, as
    Shift-Att reads a Transformer (Chen et al. 2020); here that step's query s_i has read c_i
    but not y_i, which only s_{i+1}, the query of ``shift=2``, has read. ``shift=-1``: alpha_{i-1}.
    ``reading``: ``attention`` (alpha, as above); ``posterior``: y_i takes the posterior of its
    alignment instead, alpha_i weighted by the probability of y_i given each h_j
    (``Seq2Seq.alignment_posterior``): alpha_i is the model's guess before it emits y_i, the
    posterior its reading once y_i is known; ``head``: the translator's alignment head
    (model/align_head.py, ``rnnsearch train-align-head``), which also reads y_i;
    ``head+posterior``: the mean of those two distributions.
    ``batch_size``: pairs read at once (None: the model's decode.batch_size).
    ``threshold``, ``extract``, ``balance``: see ``hard_links``. ``forms``: a (source, target) pair of functions, words ->
    groups (``gold_text``), giving the words the model reads."""
    if shift not in SHIFTS:
        raise UsageError(f"shift must be one of {', '.join(map(str, SHIFTS))}, got {shift}")
    if reading not in READINGS:
        raise UsageError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    if reading != "attention" and shift:
        raise UsageError(f"the {reading} reading is that of the step that emits y_i: it takes no shift")
    check_reading(extract, balance, threshold)
    model, src_codec, tgt_codec = translator.model, translator.src_codec, translator.tgt_codec
    if getattr(model, "arch", "rnnsearch") != "rnnsearch":
        raise UsageError("this model has no attention (arch: rnnencdec): nothing to align")
    read = _reader(translator, reading)
    batch_size = batch_size or translator.decode_cfg.batch_size
    out: list[Alignment] = []
    with evaluating(model):
        for start in range(0, len(pairs), batch_size):
            out.extend(_align_batch(src_codec, tgt_codec, pairs[start:start + batch_size],
                                    translator.device, shift, forms or (as_written, as_written),
                                    lambda soft: hard_links(soft, threshold, extract, balance), read))
    return out


def _reader(translator, reading: str):
    """batch -> (B, T, S) soft alignments of the target positions, as ``reading`` reads them."""
    model = translator.model
    if reading == "posterior":
        return lambda b: model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)[1]
    if reading in ("head", "head+posterior"):
        head = getattr(translator, "align_head", None)
        if head is None:
            raise UsageError("this model has no alignment head: train one with `rnnsearch train-align-head "
                             "CKPT --links FILE --out NEW.pt`")
        if reading == "head+posterior":  # the mean of the two distributions
            return lambda b: (head_alignment(model, head, b.src, b.src_mask, b.tgt_in, b.tgt_out)
                              + model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)[1]) / 2
        return lambda b: head_alignment(model, head, b.src, b.src_mask, b.tgt_in, b.tgt_out)
    return lambda b: model(b.src, b.src_mask, b.tgt_in)[1]


def _align_batch(src_codec, tgt_codec, pairs, device, shift, forms, links_of, read) -> list[Alignment]:
    words = [(s.split(), t.split()) for s, t in pairs]
    src = [group_units(src_codec, forms[0](sw)) for sw, _ in words]
    tgt = [group_units(tgt_codec, forms[1](tw)) for _, tw in words]
    batch = make_batch([src_codec.vocab.encode(u) for u, _ in src],
                       [tgt_codec.vocab.encode(u) for u, _ in tgt]).to(device)
    alphas = read(batch).float().cpu().numpy()  # (B, T, S)
    result = []
    for b, ((sw, tw), (su, so), (tu, to)) in enumerate(zip(words, src, tgt)):
        rows = np.clip(np.arange(len(tu)) + shift, 0, len(tu))  # alpha_{i+shift}, the last step at most (</s>)
        attention = alphas[b, rows, : len(su)]  # the </s> column left out
        soft = merge(attention, so, to, len(sw), len(tw)) if sw and tw else np.zeros((len(tw), len(sw)))
        result.append(Alignment(sw, tw, soft, links_of(soft)))
    return result


COMBINATIONS = SYMMETRIZATIONS + ("soft",)


def combine(forward: list[Alignment], backward: list[Alignment], method: str = "grow-diag-final-and",
            threshold: float | None = None, extract: str = "rows", balance: int = 0) -> list[Alignment]:
    """Alignments of both directions in one: ``forward`` of (source, target) pairs, ``backward``
    of the same pairs read the other way (a Fr->En model). ``method``: a symmetrisation of the two
    directions' links (``links.symmetrize``; soft weights stay the forward ones), or "soft": the
    product of the two soft alignments, alpha_ij of one times alpha_ji of the other, whose links
    are read as ``hard_links`` reads one (``threshold``, ``extract``, ``balance``)."""
    if method not in COMBINATIONS:
        raise UsageError(f"symmetrisation must be one of {', '.join(COMBINATIONS)}, got {method!r}")
    out = []
    for f, b in zip(forward, (turned(b) for b in backward), strict=True):  # b in the forward's order
        if method == "soft":
            soft = f.soft * b.soft  # (target words, source words)
            out.append(Alignment(f.source_words, f.target_words, soft, hard_links(soft, threshold, extract, balance)))
        else:
            links = symmetrize(f.links, b.links, method)
            out.append(Alignment(f.source_words, f.target_words, f.soft, links))
    return out


def turned(a: Alignment) -> Alignment:
    """``a`` the other way round: the target words as the source, links (t, s), soft weights transposed."""
    return Alignment(a.target_words, a.source_words, a.soft.T, {(t, s) for s, t in a.links})


def alignment_json(a: Alignment) -> dict:
    """One alignment as JSON: words, soft weights (5 decimals) and hard links."""
    return {"source": a.source_words, "target": a.target_words,
            "soft": [[round(float(x), 5) for x in row] for row in a.soft], "links": sorted(a.links)}
