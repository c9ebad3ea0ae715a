"""Lexical shortlists: each sentence is translated over a few thousand candidate target words instead
of the whole vocabulary, as Marian's ``--shortlist`` does (Jean et al. 2015's candidate lists): the
output layer, most of a decoding step's work, then multiplies only their rows of W_o
(model/shortlist.py).

A sentence's candidates: the special ids, the ``frequent`` most frequent target words (the
vocabulary's first ids), for each of its source words the ``best`` target words that word is most
often aligned to in a lexicon (``rnnsearch lexicon --per-source N``: forced alignments of training
pairs), and the words of its prefix and constraints. A source word the lexicon lacks brings no
candidates (a name it never saw comes out as <unk>, which [UNK] replacement copies from the source).
Each sentence's softmax is over its own candidates, so its output does not depend on the sentences
batched with it; the batch shares one product over the union. Word vocabularies only (a lexicon's
rows are words); the torch back end, float32 or int8.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from rnnsearch.data.io import DataError
from rnnsearch.data.vocab import SPECIALS, Vocab
from rnnsearch.decoding.constraints import Constraints
from rnnsearch.decoding.search import Hypothesis
from rnnsearch.decoding.unk import lexicon_pairs
from rnnsearch.model.packed import PackedLinear
from rnnsearch.model.shortlist import output_shortlist

FREQUENT = 100  # candidates of every sentence: the most frequent target words
BEST = 100  # candidates per source word: its most frequent translations in the lexicon


@dataclass
class ShortlistTable:
    """The candidates of each source word as target ids, (source vocabulary, best), -1 padded."""
    table: torch.Tensor  # (V_src, best)
    frequent: int
    vocab: int  # V, the target vocabulary's size

    @classmethod
    def read(cls, path, src_vocab: Vocab, tgt_vocab: Vocab, frequent: int = FREQUENT,
             best: int = BEST) -> ShortlistTable:
        """A lexicon file (``source<TAB>target[<TAB>p<TAB>count]``, each source's rows most frequent
        first) for the models' vocabularies; a bad line is a DataError naming it."""
        if frequent < 0 or best < 0:
            raise DataError(f"shortlist sizes must be at least 0, got frequent {frequent}, best {best}")
        rows: dict[int, list[int]] = {}
        for source_word, target_word in lexicon_pairs(path):
            source, target = src_vocab.stoi.get(source_word), tgt_vocab.stoi.get(target_word)
            if source is not None and target is not None and len(rows.setdefault(source, [])) < best:
                rows[source].append(target)
        table = torch.full((len(src_vocab), max(best, 1)), -1, dtype=torch.long)  # (V_src, best)
        for source, targets in rows.items():
            table[source, : len(targets)] = torch.tensor(targets)
        return cls(table, frequent, len(tgt_vocab))

    def candidates(self, src: torch.Tensor, mask: torch.Tensor, prefix: torch.Tensor | None = None,
                   constraints: list | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Source ids (B, S) and mask (B, S), the search's prefix (B, P) and constraints (one
        decoding.constraints.Constraints or None per sentence) -> the batch's candidate ids (V',),
        ascending, and which are each sentence's (B, V')."""
        member = torch.zeros(src.size(0), self.vocab, dtype=torch.bool)  # (B, V)
        member[:, : len(SPECIALS) + self.frequent] = True
        cand = self.table[src.cpu()].masked_fill(~mask.cpu()[..., None], -1).flatten(1)  # (B, S * best)
        member.scatter_(1, cand.clamp_min(0), True)  # -1 -> id 0, <pad>: a candidate already
        for row, ids in enumerate(forced_words(src.size(0), prefix, constraints)):
            member[row, ids] = True
        ids = member.any(0).nonzero().squeeze(1)  # (V',)
        return ids, member[:, ids]  # (V',), (B, V')


class Shortlisted:
    """A model whose vocabulary is a batch's candidate words: their ids, in vocabulary order, are its
    words 0..V'-1 (the special ids 0-3, candidates of every sentence, keep their numbers), so that
    the search (decoding/search.py, which calls it as it calls the model) runs over V' columns, not
    V. Its encoder's output carries the output layer over those words (model/shortlist.py)."""

    def __init__(self, model, ids: torch.Tensor, allowed: torch.Tensor):
        self.model = model
        self.shortlist = output_shortlist(model.decoder.W_o, ids, allowed)
        self.ids = ids.to(model.decoder.embed.weight.device)  # (V',) word -> vocabulary id
        self.word = torch.full((model.decoder.W_o.out_features,), -1, dtype=torch.long)  # (V,) vocabulary id -> word
        self.word[ids] = torch.arange(len(ids))

    def encode(self, src, mask):
        return dataclasses.replace(self.model.encode(src, mask), shortlist=self.shortlist)

    def init_state(self, enc):
        return self.model.init_state(enc)

    def step(self, y_prev, state, enc):
        """y_{i-1} (N,) as words of the list -> log p (N, V') over the list, as Seq2Seq.step."""
        return self.model.step(self.ids[y_prev], state, enc)

    def listed(self, prefix: torch.Tensor | None, constraints: list | None):
        """A prefix (B, P) and constraints (decoding.constraints.Constraints or None per sentence) as
        words of the list; an avoided phrase with a word off the list is dropped (it cannot be written)."""
        if prefix is not None:
            prefix = self.word.to(prefix.device)[prefix]  # (B, P); candidates all, <pad> included
        if constraints is not None:
            constraints = [c if c is None else Constraints(self._words(c.include), self._words(c.avoid, drop=True))
                           for c in constraints]
        return prefix, constraints

    def _words(self, phrases, drop: bool = False) -> tuple:
        words = [tuple(self.word[list(p)].tolist()) for p in phrases]
        return tuple(w for w in words if not drop or min(w) >= 0)

    def unlisted(self, hyps: list[list[Hypothesis]]) -> list[list[Hypothesis]]:
        """The search's hypotheses with their tokens as vocabulary ids again."""
        ids = self.ids.tolist()
        return [[dataclasses.replace(h, tokens=[ids[t] for t in h.tokens]) for h in found] for found in hyps]


def search(run, model, table: ShortlistTable, src: torch.Tensor, mask: torch.Tensor, prefix: torch.Tensor | None,
           constraints: list | None) -> list[list[Hypothesis]]:
    """``run(model, prefix, constraints)``, a search over ``model``, over the candidates of the batch
    src (B, S), mask (B, S) in ``table``; its hypotheses in vocabulary ids."""
    listed = Shortlisted(model, *table.candidates(src, mask, prefix, constraints))
    return listed.unlisted(run(listed, *listed.listed(prefix, constraints)))


def problem(translator) -> str | None:
    """Why ``translator`` cannot decode with a shortlist (None: it can)."""
    model = translator.model
    if translator.tgt_codec.mode != "word" or translator.src_codec.mode != "word":
        return "a shortlist needs word vocabularies (a lexicon's rows are words; this model uses SentencePiece)"
    if not hasattr(model, "decoder"):
        return "a shortlist goes with one PyTorch model: the torch backend, without --ensemble"
    output = model.decoder.W_o
    if isinstance(output, PackedLinear) or isinstance(output, torch.nn.Linear) and output.weight.dtype == torch.bfloat16:
        return "a shortlist takes float32 or int8 weights, not --dtype bf16"
    return None


def forced_words(rows: int, prefix: torch.Tensor | None, constraints: list | None) -> list[list[int]]:
    """Per sentence, the target ids its output is made to contain: its prefix's (B, P) and its
    constraints' (decoding/constraints.Constraints or None each)."""
    words = [[] for _ in range(rows)] if prefix is None else prefix.cpu().tolist()
    for row, c in enumerate(constraints or []):
        if c is not None:
            words[row] += [i for phrase in c.include for i in phrase]
    return words
