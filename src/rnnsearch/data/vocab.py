"""Vocabularies: the paper's word shortlist, with fixed special ids."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

PAD, UNK, BOS, EOS = 0, 1, 2, 3  # ids
PAD_TOKEN, UNK_TOKEN, BOS_TOKEN, EOS_TOKEN = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = [PAD_TOKEN, UNK_TOKEN, BOS_TOKEN, EOS_TOKEN]  # ids 0-3 of every vocabulary


class Vocab:
    """Maps units (words or subword pieces) to ids; ids 0-3 are <pad> <unk> <s> </s>."""

    def __init__(self, itos: list[str]):
        if itos[:4] != SPECIALS:
            raise ValueError(f"vocabulary must start with {SPECIALS}, got {itos[:4]}")
        self.itos = list(itos)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        # what text may map to: a "<pad>", "<s>" or "</s>" written in a sentence (whitespace
        # tokenisation keeps them whole) is a word the model does not know, not a control id
        self._text_ids = {s: i for s, i in self.stoi.items() if i not in (PAD, BOS, EOS)}

    @classmethod
    def build(cls, sentences: Iterable[list[str]], size: int, min_freq: int = 1) -> "Vocab":
        """The ``size`` most frequent units (ties broken alphabetically), specials included."""
        return cls.from_counts(Counter(tok for sent in sentences for tok in sent), size, min_freq)

    @classmethod
    def from_counts(cls, counts: Counter, size: int, min_freq: int = 1) -> "Vocab":
        """As :meth:`build`, from the units' counts (which it changes)."""
        for special in SPECIALS:
            counts.pop(special, None)
        ranked = sorted((c, w) for w, c in counts.items() if c >= min_freq)
        ranked.sort(key=lambda cw: (-cw[0], cw[1]))
        return cls(SPECIALS + [w for _, w in ranked[: max(0, size - len(SPECIALS))]])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: list[str]) -> list[int]:
        """Units of text -> ids; unknown units, and the control tokens written out, are <unk>."""
        return [self._text_ids.get(t, UNK) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids -> units, stopping at </s> and skipping <pad> and <s>."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS:
                break
            if i not in (PAD, BOS):
                out.append(self.itos[i])
        return out

    def has_unk(self, tokens: list[str]) -> bool:
        return any(t not in self._text_ids for t in tokens)
