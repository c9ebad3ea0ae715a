"""Source words a translation may have left out (#85): ``uncovered(translation, codec, min_mass)``.

The attention alpha_ij is the model's own account of which source unit j it read to write output
unit i. The mass a source word gets over the whole output, sum_i alpha_ij (i over the output's units,
the </s> step left out: it looks back over the sentence), is about one for a word the output
translates and near zero for one it leaves out ("Name: John Smith" -> "Name :", John 0.19, Smith
0.09). Counted are the words with a letter or digit, except

- the source vocabulary's ``COMMON`` most frequent units (a tenth of a small one) ("the", "of", "'s": their attention goes to
  their neighbours, so a translated one often gets little);
- the units a slot carried (``Translation.carried``: the pipeline puts each one back);
- a word the output writes as the source did (a name or number the model copied).

A number of the source that the output does not write (its digits, in any grouping) is named too,
whatever its attention (the model wrote ``17 200 tonnes`` for "imported 17 tons of CFCs" and ``Voir la page 3.`` for
"See Figure 3 and page 12."); not one a slot carried, nor an integer up to ``IN_WORDS``, which a
translation as often writes in words. One the output spells in words is named all the same (``15``:
``quinze``): on the Hansards test's 475 English lines with a number, 15 are named, and in 13 of them the
reference writes the number the output left out.

A SentencePiece word's mass is the largest of its pieces'. A model without attention (RNNencdec)
names none. The threshold for each release was chosen on held-out data (experiments/coverage.py,
docs/text.md).

A phrase the model drops whole can leave no word with little attention: the words after it take the
mass (`« Le Canada est de retour », a déclaré la ministre.` -> `"We are back".`). ``length_ratio(t)``, the
output's words over the source's, tells those: a line of at least ``MIN_WORDS`` source words whose ratio is
below ``min_length_ratio`` (chosen on held-out data as the coverage threshold is) may leave part of it out.
"""
from __future__ import annotations

import re

import numpy as np

from rnnsearch.data.slotting import BASE
from rnnsearch.data.tokenize import SPACE_PIECE
from rnnsearch.data.vocab import EOS_TOKEN
from rnnsearch.decoding.source import Translation
from rnnsearch.text.numbers import WRITTEN

MIN_WORDS = 8  # a line of fewer source words is not measured by its length ratio ("Oui." -> "Yes, indeed.")
COMMON = 100  # the most frequent source units, not counted
IN_WORDS = 10  # an integer up to this one is as often written in words ("dix ans", "un million"): not named
NUMBER = WRITTEN  # a number in any grouping (1 500, 12.5)


def common_units(codec, n: int = COMMON) -> frozenset[str]:
    """The n most frequent units of the codec's vocabulary (after <pad> <unk> <s> </s>; a tenth of a
    vocabulary of fewer than 10 n), ▁ dropped."""
    itos = codec.vocab.itos
    return frozenset(u.replace(SPACE_PIECE, "") for u in itos[4:4 + min(n, len(itos) // 10)])


def word_masses(t: Translation) -> list[tuple[str, float, list[int]]]:
    """(word, mass, its source positions) for each source word: the attention it got over the output
    (</s> step left out); pieces joined into words where the units are SentencePiece's."""
    units = t.source_tokens[:-1]
    mass = np.asarray(t.attention, dtype=np.float64)[:-1, :len(units)].sum(0)  # (S,)
    pieces = any(u.startswith(SPACE_PIECE) for u in units)
    words: list[tuple[str, float, list[int]]] = []
    for j, u in enumerate(units):
        if pieces and words and not u.startswith(SPACE_PIECE):
            word, m, at = words[-1]
            words[-1] = (word + u, max(m, float(mass[j])), at + [j])
        else:
            words.append((u.replace(SPACE_PIECE, ""), float(mass[j]), [j]))
    return words


def uncovered(t: Translation, codec, min_mass: float) -> list[str]:
    """The source words of ``t`` whose attention mass is below ``min_mass`` (the rules above), in source
    order; none where ``min_mass`` is 0, the model has no attention, or nothing was translated."""
    if min_mass <= 0 or t.attention is None or not t.tokens or t.error:
        return []
    common, carried = common_units(codec), set(t.carried)
    written = {w.replace(SPACE_PIECE, "").lower() for w in t.tokens} | set(t.text.lower().split())  # any case
    numbers = {_digits(n) for n in NUMBER.findall(t.text)}
    words = word_masses(t)
    names = [w for w, _, _ in words]
    left = [word for n, (word, m, at) in enumerate(words) if not carried.intersection(at) and (
        NUMBER.fullmatch(word) and _digits(word) not in numbers and not (word.isdigit() and int(word) <= IN_WORDS)
        and not _per_cent_at(names, n)  # "15 p. 100": the Hansards' French per cent
        or m < min_mass and any(c.isalnum() for c in word) and word not in common and word.lower() not in common
        and word.lower() not in written)]
    return left + _per_cents_left_out(words, t)


def _per_cents_left_out(words: list[tuple[str, float, list[int]]], t: Translation) -> list[str]:
    """``N%`` for each of the source's per cents that no per cent of the output reads ("grew by 12% to" ->
    "de 12 à": the model dropped the sign, and the figure's meaning with it): each of the output's per cents
    taken, one to one, by the source per cent its attention reads most. A per cent is ``%``, ``p. 100``,
    ``pour cent`` / ``per cent`` or ``percent``, in either language."""
    source = [w for w, _, _ in words]
    marks = [n for n in range(len(source)) if _per_cent_at(source, n)]
    if not marks:
        return []
    written = [u.replace(SPACE_PIECE, "") for u in t.tokens]
    att = np.asarray(t.attention, dtype=np.float64)  # (T + 1, S + 1)
    for i in (i for i in range(len(written)) if _per_cent_at(written, i) and marks):
        marks.remove(max(marks, key=lambda n: att[i, words[n][2]].max()))
    first = [n - (source[n] in ("100", "cent")) for n in marks]  # "p." of "p. 100", "pour" of "pour cent"
    return [source[n] if len(source[n]) > 1 and source[n].endswith("%")  # "15%" one word
            else f"{source[n - 1] if n and NUMBER.fullmatch(source[n - 1]) else ''}%" for n in first]


def _per_cent_at(units: list[str], n: int) -> bool:
    """Whether ``units[n]`` ends a per cent."""
    w, before = units[n].lower(), units[n - 1].lower() if n else ""
    return w.endswith("%") or w == "percent" or w == "100" and before == "p." or w == "cent" and before in ("pour", "per")


def words(units: list[str]) -> int:
    """The words among a sentence's units: those with a letter, a digit or a slot (a SentencePiece word, its
    pieces joined at their word marks, once); </s> left out."""
    units = [u for u in units if u != EOS_TOKEN]
    if any(u.startswith(SPACE_PIECE) for u in units):
        units = "".join(units).replace(SPACE_PIECE, " ").split()
    return sum(any(c.isalnum() or ord(c) >= BASE for c in u) for u in units)


def length_ratio(t: Translation) -> float | None:
    """The output's words over the source's (``words``); None where nothing was translated or the source has
    fewer than ``MIN_WORDS``, unless the output has no word at all for two or more (``Click here & save.`` came
    out ``& !``): 0 then."""
    if not t.tokens or t.error:
        return None
    source, output = words(t.source_tokens), words(t.tokens)
    return output / source if source >= MIN_WORDS or source >= 2 and not output else None


def short_warning(t: Translation, min_ratio: float, setting: str = "--min-length-ratio") -> str:
    """The warning for a translation whose length ratio is below ``min_ratio``."""
    return (f"the translation has {words(t.tokens)} words for the source's {words(t.source_tokens)} (below "
            f"{setting} {min_ratio}): it may leave part of the line out")


def _digits(number: str) -> str:
    return re.sub(r"\D", "", number)


def left_out_warning(words: list[str], min_mass: float, setting: str = "--min-coverage") -> str:
    """The warning that names ``words`` (``setting``: the threshold as the caller's edge calls it): the numbers
    the output does not write, then the words that got almost no attention."""
    numbers = [w for w in words if NUMBER.fullmatch(w.removesuffix("%")) or w == "%"]  # and a per cent ("12%")
    others = [w for w in words if w not in numbers]
    said = [f"{', '.join(repr(w) for w in numbers)} {'is' if len(numbers) == 1 else 'are'} not in the translation"
            ] if numbers else []
    said += [f"{', '.join(repr(w) for w in others)} got almost no attention (below {setting} {min_mass})"] if others else []
    return "; ".join(said) + ": the translation may leave them out" + (" or change them" if numbers else "")
