"""Word alignments that guide the attention in training (``train.guided_alignment``; Chen et al.
2016, Marian's ``--guided-alignment``): Pharaoh links for the training pairs, read and checked
beside the corpus, and turned into one target distribution over source positions per target
position for each minibatch.

The links file has one line per line of the training files (before any filtering), links
``i-j`` 0-based, source unit first, indexing the units the model reads: word vocabularies' pre-
tokenised words (e.g. Moses tokens), or the pieces of a fixed ``vocab.sp_model``; eflomal or
fast_align run on the same units (experiments/guided_links.py writes either). A pair the corpus
drops (empty, too long) drops its links with it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from rnnsearch.data.io import DataError, read_lines

_LINK = re.compile(r"^(\d+)-(\d+)$")


def parse_pharaoh(line: str, where: str = "") -> set[tuple[int, int]]:
    """``"0-0 1-2"`` -> {(0, 0), (1, 2)}: (source, target) links, 0-based."""
    links = set()
    for token in line.split():
        m = _LINK.match(token)
        if not m:
            raise DataError(f"{where}: {token!r} is not a Pharaoh link i-j (0-based, source first)")
        links.add((int(m[1]), int(m[2])))
    return links


@dataclass(frozen=True)
class Links:
    """The links of every kept training pair, flat: pair k's are ``pairs[offsets[k]:offsets[k + 1]]``,
    rows (source word, target word)."""
    pairs: np.ndarray    # (L, 2) int32
    offsets: np.ndarray  # (N + 1,) int64

    def of(self, k: int) -> np.ndarray:
        return self.pairs[self.offsets[k]:self.offsets[k + 1]]


def read_links(path: str | Path, lines: int, keep: list[int], src_lens: list[int], tgt_lens: list[int]) -> Links:
    """The links of the kept pairs (``keep``: indices into the ``lines`` training lines), each
    checked against its pair's lengths in words; errors name the file and line."""
    text = read_lines(path)
    if len(text) != lines:
        raise DataError(f"{path} has {len(text)} lines but the training files have {lines}: "
                        "train.guided_alignment needs one line of links per training pair")
    pairs, offsets = [], [0]
    for k, i in enumerate(keep):
        links = sorted(parse_pharaoh(text[i], f"{path}:{i + 1}"))
        bad = [(s, t) for s, t in links if s >= src_lens[k] or t >= tgt_lens[k]]
        if bad:
            s, t = bad[0]
            raise DataError(f"{path}:{i + 1}: link {s}-{t} is outside the pair ({src_lens[k]} source, "
                            f"{tgt_lens[k]} target words)")
        pairs.extend(links)
        offsets.append(len(pairs))
    return Links(np.asarray(pairs, dtype=np.int32).reshape(-1, 2), np.asarray(offsets, dtype=np.int64))


def guide_matrix(links: Links, rows, src_lens: np.ndarray, tgt_lens: np.ndarray) -> torch.Tensor:
    """Target distributions (B, T, S) for the minibatch ``rows``, shaped like its attention (T and
    S with </s>): row i of pair b spreads 1 evenly over the source words target word i is linked
    to, </s> is linked to </s>, and a target word without links (and padding) gets a zero row,
    which the cost leaves out."""
    rows = np.asarray(rows)
    width, height = int(src_lens[rows].max()) + 1, int(tgt_lens[rows].max()) + 1
    guide = np.zeros((len(rows), height, width), dtype=np.float32)  # (B, T, S)
    for b, k in enumerate(rows):
        pairs = links.of(int(k))
        guide[b, pairs[:, 1], pairs[:, 0]] = 1.0
        guide[b, tgt_lens[k], src_lens[k]] = 1.0  # </s> -> </s>
    total = guide.sum(axis=2, keepdims=True)  # (B, T, 1)
    return torch.from_numpy(np.divide(guide, total, out=np.zeros_like(guide), where=total > 0))
