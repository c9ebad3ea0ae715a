"""Lexically constrained beam search: words or phrases each output must contain (``include``) or
must not contain (``avoid``: each phrase also with its first letter in the other case), as
target-vocabulary ids, per sentence.

The algorithm is dynamic beam allocation (Post & Vilar 2018, "Fast Lexically Constrained Decoding
with Dynamic Beam Allocation for Neural Machine Translation", NAACL): at each step a sentence's
candidates are the usual K best extensions of its K hypotheses, each hypothesis's best next word, and
each hypothesis extended by the next word of every constraint it has not met (the next word of the
phrase it is inside, if it is inside one); the candidates are grouped in banks by how many
constraint words they have met, and the K places of the beam are shared out between the banks,
taking the best of each bank in turn from the bank with most met. So hypotheses that have met more
constraints are kept beside better-scored ones that have met fewer, with no beam per constraint
(the work per step grows with the number of constraints, not the beam with it). A phrase is met
when its words are generated in a row; a hypothesis that leaves a phrase half-way loses those words.

A hypothesis may end (</s>) only once it has met every constraint; at the length limit it ends
anyway, and such a hypothesis is ranked after every one that met them. ``avoid``: a phrase's last
word is barred after its other words (a one-word phrase: always).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from rnnsearch.data.vocab import EOS


@dataclass(frozen=True)
class Constraints:
    """One sentence's constraints: phrases of target ids."""
    include: tuple[tuple[int, ...], ...] = ()
    avoid: tuple[tuple[int, ...], ...] = ()

    @property
    def words(self) -> int:
        """Constraint words an output must contain."""
        return sum(len(p) for p in self.include)


@dataclass(frozen=True)
class Progress:
    """What one hypothesis has met: the included phrases done, and the one it is inside (its index
    and how many of its words are generated; -1: none)."""
    done: frozenset = frozenset()
    inside: int = -1
    position: int = 0

    def met(self, c: Constraints) -> int:
        return sum(len(c.include[i]) for i in self.done) + self.position

    def after(self, c: Constraints, token: int) -> Progress:
        """The progress once ``token`` is generated."""
        if self.inside >= 0:
            phrase = c.include[self.inside]
            if phrase[self.position] == token:
                if self.position + 1 == len(phrase):
                    return Progress(self.done | {self.inside})
                return Progress(self.done, self.inside, self.position + 1)
            progress = Progress(self.done)  # left the phrase: its words are lost; the token may start another
        else:
            progress = self
        for i, phrase in enumerate(c.include):
            if i not in progress.done and phrase[0] == token:
                return Progress(progress.done | {i}) if len(phrase) == 1 else Progress(progress.done, i, 1)
        return progress

    def wanted(self, c: Constraints) -> set[int]:
        """The tokens that would meet one more constraint word."""
        if self.inside >= 0:
            return {c.include[self.inside][self.position]}
        return {p[0] for i, p in enumerate(c.include) if i not in self.done}


class Tracker:
    """The constraints of a beam search's sentences and the progress of each of its N K rows (each
    sentence's K hypotheses together), kept in the beam's order. Only the sentences with constraints
    cost Python work per step; the others keep the plain search's choice."""

    def __init__(self, constraints: list[Constraints | None], k: int):
        self.constraints = [c or Constraints() for c in constraints]  # (B,)
        self.k = k
        self.rows = [Progress() for _ in range(len(constraints) * k)]  # (N K,)
        self.context = max((len(p) for c in self.constraints for p in c.avoid), default=1) - 1  # avoid's words before

    def restrict(self, logp: torch.Tensor, alive: list[int], history: torch.Tensor, at_limit: torch.Tensor) -> None:
        """In place on logp (N K, V): bar each row's avoided words, and </s> before its constraints are
        met (except at its length limit, at_limit (N K,))."""
        sentences = [(s, self.constraints[b]) for s, b in enumerate(alive)
                     if self.constraints[b].include or self.constraints[b].avoid]
        if not sentences:
            return
        width = min(self.context, history.size(1))
        past = history[:, history.size(1) - width:].tolist() if width else None  # (N K, <= context)
        limit = at_limit.tolist()
        for s, c in sentences:
            for row in range(s * self.k, (s + 1) * self.k):
                for phrase in c.avoid:
                    if len(phrase) == 1 or (past and tuple(past[row][-(len(phrase) - 1):]) == phrase[:-1]):
                        logp[row, phrase[-1]] = float("-inf")
                if not limit[row] and self.rows[row].met(c) < c.words:
                    logp[row, EOS] = float("-inf")

    def extend(self, scores: torch.Tensor, logp: torch.Tensor, open_slots: torch.Tensor, alive: list[int], best):
        """Each sentence's K extensions chosen by dynamic beam allocation: scores (N, K), logp (N, K, V),
        open_slots (N,) places still open per sentence, best: the plain search's (scores, tokens,
        hypothesis indices), (N, K) each (search._best_extensions: the K best of the sentence's K x V
        candidates) -> the same three (unused places: -inf); the rows' progress follows. Sentences
        without constraints to meet keep ``best``."""
        n, k, _ = logp.shape
        top, token, beam_of = best
        rows = [Progress()] * (n * k)
        bound = [s for s in range(n) if self.constraints[alive[s]].include]  # sentences with words to meet
        if not bound:
            self.rows = rows
            return top, token, beam_of
        index = torch.tensor(bound, device=logp.device)
        best_each = logp.index_select(0, index).argmax(2).tolist()  # (C, K) each hypothesis's best word
        near = (beam_of.index_select(0, index).tolist(), token.index_select(0, index).tolist())  # (C, K) each
        candidates = [self._candidates(s, alive[s], best_each[i], near[0][i], near[1][i]) for i, s in enumerate(bound)]
        flat_rows = [s * k + hyp for s, pairs in zip(bound, candidates) for hyp, _ in pairs]
        flat_toks = [tok for pairs in candidates for _, tok in pairs]
        values = (scores.reshape(-1)[flat_rows] + logp.reshape(n * k, -1)[flat_rows, flat_toks]).tolist()
        top, token, beam_of = top.clone(), token.clone(), beam_of.clone()
        at, slots = 0, open_slots.tolist()
        for s, pairs in zip(bound, candidates):
            chosen = self._allocate(s, alive[s], pairs, values[at:at + len(pairs)], int(slots[s]))
            at += len(pairs)
            pad = k - len(chosen)
            top[s] = torch.tensor([x[0] for x in chosen] + [float("-inf")] * pad, dtype=top.dtype)
            token[s] = torch.tensor([x[2] for x in chosen] + [EOS] * pad)
            beam_of[s] = torch.tensor([x[1] for x in chosen] + [0] * pad)
            rows[s * k:s * k + len(chosen)] = [x[3] for x in chosen]
        self.rows = rows
        return top, token, beam_of

    def _candidates(self, s: int, sentence: int, best_each: list[int], near_hyp: list[int], near_tok: list[int]):
        """Sentence s's (hypothesis, token) candidates: the K best extensions, each hypothesis's best
        word, and each hypothesis's next constraint words."""
        c, pairs = self.constraints[sentence], set(zip(near_hyp, near_tok))
        for hyp in range(self.k):
            pairs.add((hyp, best_each[hyp]))
            pairs.update((hyp, tok) for tok in self.rows[s * self.k + hyp].wanted(c))
        return sorted(pairs)

    def _allocate(self, s: int, sentence: int, pairs, values: list[float], slots: int):
        """Up to ``slots`` (score, hypothesis, token, progress) of sentence s, shared out between banks."""
        c, banks = self.constraints[sentence], {}
        for (hyp, tok), score in zip(pairs, values):
            if score == float("-inf"):
                continue
            progress = self.rows[s * self.k + hyp].after(c, tok)
            banks.setdefault(progress.met(c), []).append((score, hyp, tok, progress))
        queues = [sorted(banks[m], key=lambda x: -x[0]) for m in sorted(banks, reverse=True)]
        chosen = []
        while len(chosen) < slots and any(queues):
            for queue in queues:  # one from each bank in turn, the bank with most met first
                if queue and len(chosen) < slots:
                    chosen.append(queue.pop(0))
        return sorted(chosen, key=lambda x: -x[0])

    def met_all(self, row: int, sentence: int) -> bool:
        c = self.constraints[sentence]
        return self.rows[row].met(c) >= c.words

    def select(self, rows: list[int]) -> None:
        self.rows = [self.rows[r] for r in rows]


MARKUP = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>|&(?:[A-Za-z][A-Za-z0-9]{1,30}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")


def from_text(include: tuple[str, ...], avoid: tuple[str, ...], tgt_codec, source_units: int,
              max_len_ratio: float) -> Constraints | str:
    """A sentence's constraints as target ids, its units as the model writes them (its tokeniser and
    vocabulary), or why they cannot be honoured (one line): a phrase with a unit the model's
    vocabulary lacks, or more words than the output length limit holds."""
    from rnnsearch.data.vocab import UNK

    def ids(kind: str, text: str) -> tuple[int, ...] | str:
        tag = MARKUP.search(text)
        if tag:  # the model would write "< b > enregistrer < / b >"
            return (f"{kind} {text!r} holds markup ({tag.group()}): give its words alone (--markup puts the "
                    "source's tags around them)")
        units = tgt_codec.units(text) if text.strip() else []
        if not units:
            return f"{kind} {text!r} is empty"
        encoded = tuple(tgt_codec.vocab.encode(units))
        unknown = [u for u, i in zip(units, encoded) if i == UNK]
        if unknown:
            return (f"{kind} {text!r}: {', '.join(repr(u) for u in unknown)} not in the model's target vocabulary "
                    "(it cannot write it; a glossary entry with its source term carries it through a slot)")
        return encoded

    def avoided(text: str) -> list[tuple[int, ...] | str]:
        """The phrase as given and with its first letter in the other case ("comité" bars "Comité" too),
        each form the vocabulary can write; the error of the phrase as given where it can write none."""
        forms = [ids("avoid", t) for t in dict.fromkeys((text, text[:1].upper() + text[1:], text[:1].lower() + text[1:]))]
        return [f for f in forms if not isinstance(f, str)] or forms[:1]

    phrases = {"constraints": [ids("constraint", t) for t in include],
               "avoid": list(dict.fromkeys(f for t in avoid for f in avoided(t)))}
    for phrase in phrases["constraints"] + phrases["avoid"]:
        if isinstance(phrase, str):
            return phrase
    barred = [(a, form) for a in avoid for form in avoided(a)]  # each avoided phrase's forms, with its text
    clash = next(((t, a) for t, want in zip(include, phrases["constraints"]) for a, bar in barred if _holds(want, bar)),
                 None)
    if clash is not None:
        return f"constraint {clash[0]!r} holds {clash[1]!r}, which the line also avoids: no output can meet both"
    c = Constraints(tuple(phrases["constraints"]), tuple(phrases["avoid"]))
    limit = int(source_units * max_len_ratio) + 5 - 1  # words before </s> (search.max_lengths)
    if c.words > limit:
        return (f"constraints of {c.words} words do not fit the output length limit of {limit} words for this "
                "source (decode.max_len_ratio x source units + 4)")
    return c


def _holds(phrase: tuple[int, ...], part: tuple[int, ...]) -> bool:
    """Whether ``part`` occurs in ``phrase`` (as ids)."""
    return any(phrase[k:k + len(part)] == part for k in range(len(phrase) - len(part) + 1))


def per_sentence(units: list[list[str]], given: list | None, tgt_codec, max_len_ratio: float) -> list | None:
    """Each sentence's (include, avoid) texts as Constraints (:func:`from_text`), None where it has none,
    or why they are refused; None when no sentence has any."""
    if not given or not any(include or avoid for include, avoid in given):
        return None
    return [from_text(include, avoid, tgt_codec, len(u), max_len_ratio) if include or avoid else None
            for u, (include, avoid) in zip(units, given)]


def read_glossary(path) -> list[tuple[str, str]]:
    """A glossary file: one ``source term<TAB>target term`` a line (blank lines and lines starting
    with # skipped); a malformed line is a DataError naming the file and line."""
    from rnnsearch.data.io import DataError, read_lines
    terms, seen = [], {}
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise DataError(f"{path}:{n}: expected 'source term<TAB>target term', got {line!r}")
        source, target = parts[0].strip(), parts[1].strip()
        if not terms and not seen and {source.lower(), target.lower()} <= HEADER_WORDS:
            seen[""] = n  # a header naming the columns (source<TAB>target, en<TAB>fr), not a term
            continue
        if source in seen and terms[seen[source]][1] != target:  # House and house are two terms: a name's and a word's
            raise DataError(f"{path}:{n}: {source!r} is given {target!r} here and {terms[seen[source]][1]!r} before: "
                            "keep one")
        seen.setdefault(source, len(terms))
        terms.append((source, target))
    return terms


HEADER_WORDS = {"source", "target", "src", "tgt", "term", "terms", "source term", "target term", "translation",
                "en", "fr", "english", "french", "de", "es", "it", "german", "spanish", "italian", "anglais", "français"}
