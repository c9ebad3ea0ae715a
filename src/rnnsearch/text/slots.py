"""Slots: a unit the model copies in place of a source item (``text/items.py``) or of a name its
vocabulary lacks, restored verbatim (or in the target's convention) after the search.

A slot is one source unit, a character of Unicode's supplementary private use area that no
vocabulary holds, so the model reads <unk> there and writes <unk> where it copies it. Once the
output is known, the output's <unk>s are matched one to one with the sentence's slots through
the alignment (the alignment head's beta_ij where the model has one, else the attention): first
each <unk> whose best-aligned source unit is a slot, the most probable pairs first, then the
slots and <unk>s left, the same way. A slot the output never copied is put back where the output's
alignment crosses it least (``insertion_point``; before the sentence's closing punctuation), so that
nothing the source wrote is lost; an <unk> matched to no slot keeps what [UNK]
replacement gave it, unless that was a copy of a slot (then it is dropped: an item is written once).
"""
from __future__ import annotations

from dataclasses import replace
import re

import numpy as np

from rnnsearch.data.slotting import BASE, marker  # noqa: F401 (marker: the text stage's name for a slot)
from rnnsearch.data.tokenize import SPACE_PIECE
from rnnsearch.data.vocab import UNK, UNK_TOKEN
from rnnsearch.text import numbers




def slot_index(unit: str) -> int | None:
    """k where ``unit`` is slot k, else None."""
    return ord(unit) - BASE if len(unit) == 1 and BASE <= ord(unit) < BASE + 0xFFFE else None


def match(rows: np.ndarray, unks: list[int], slots: list[int]) -> dict[int, int]:
    """Output position -> source position for the output's <unk>s ``unks`` and the source's slot
    positions ``slots``, one to one: rows (T + 1, S + 1) of the alignment."""
    if not unks or not slots:
        return {}
    best = {i: int(np.argmax(rows[i, :-1])) for i in unks}
    pairs = sorted(((rows[i, j], i, j) for i in unks for j in slots), key=lambda x: -x[0])
    chosen: dict[int, int] = {}
    for natural in (True, False):
        for _, i, j in pairs:
            if i not in chosen and j not in chosen.values() and (best[i] == j or not natural):
                chosen[i] = j
    return chosen


def insertion_point(rows: np.ndarray, j: int, tokens: list[str], punctuation: list[bool]) -> int:
    """Where a slot at source position ``j`` the output did not copy goes: the gap between output words
    with the most words before it aligned to source units before j and after it aligned to units after
    j (the first such gap), before the output's closing punctuation marks."""
    end = len(tokens)
    while end > 0 and punctuation[end - 1]:
        end -= 1
    if not tokens:
        return 0
    aligned = rows[: len(tokens), :-1].argmax(1)  # (T,) each word's source unit
    before = np.concatenate([[0], np.cumsum(aligned < j)])  # (T + 1,) words left of each gap aligned before j
    after = np.concatenate([np.cumsum((aligned > j)[::-1])[::-1], [0]])  # (T + 1,) words right of it aligned after
    return int(np.argmax((before + after)[: end + 1]))


def _stand_ins(written: list[str], rows: np.ndarray, slots: set[int], source: list[str], vocab,
               numeric: set[int] = frozenset()):
    """The output's names written where the source had a slot: a capitalised word the source does not
    have, whose lower-case form the target vocabulary lacks (a name: "Warren", "Halifax"), aligned to a
    slot (the model wrote a name it knows for one it did not); and a number aligned to a slot of a number
    (``numeric``) that the source does not have ("6.1%" came out "6,1 9 p. 100", the model's 9 beside the slot
    put back) or that the output writes more often than the source does ("by 12% to $4.5 million" came out
    "de 12 à 12 millions", the second 12 for the slot), and so a mark ("(pp. 45-67)" came out "(pp. ))").
    Returns the first word of each such run (a stand-in for the slot, matched as an <unk> is) and each later
    word's first (dropped with it)."""
    first: dict[int, int] = {}
    extra: dict[int, int] = {}
    excess = {t: written.count(t) - source.count(t) for t in set(written)}  # copies beyond the source's
    for i, token in enumerate(written):
        j = int(np.argmax(rows[i, :-1]))
        number = j in numeric and numbers.WRITTEN.fullmatch(token) is not None
        mark = not any(c.isalnum() for c in token) and excess[token] > 0  # "(pp. 45-67)" came out "(pp. ))"
        ours = token in source and not (number and excess[token] > 0 or mark)  # the source's own word or number
        if (j not in slots or token == UNK_TOKEN or ours or not (number or mark or token[:1].isupper())
                or not (number or mark) and vocab.encode([token.lower()])[0] != UNK):
            continue
        excess[token] -= 1
        if i - 1 in first and first[i - 1] == j or i - 1 in extra and first[extra[i - 1]] == j:
            extra[i] = extra.get(i - 1, i - 1)
        else:
            first[i] = j
    return set(first), extra


def restore(translation, items: list[tuple[str, str]], rows: np.ndarray, tgt_codec, punctuation) -> tuple:
    """``translation`` (its units read slots) with each slot's rendering in the output and ``rows``
    as its alignment (edited as the output was), and the slots it had to put back (not copied by the
    model). ``items``: slot k's (source text, rendering); ``rows``: the alignment (T + 1, S + 1) of its
    output as written (<unk>s unreplaced) over its source units; ``punctuation``: tokens -> marks."""
    src = translation.source_tokens[:-1]
    slots = [j for j, u in enumerate(src) if slot_index(u) is not None]
    subword = tgt_codec.mode != "word"  # its pieces spell names: none stands in for a slot
    if not slots and not (subword and UNK_TOKEN in translation.tokens):  # (a subword <unk> of no slot: dropped)
        return replace(translation, alignment=rows), []
    written = [UNK_TOKEN if i in translation.replaced else t for i, t in enumerate(translation.tokens)]
    numeric = {j for j in slots if any(c.isdigit() for c in items[slot_index(src[j])][0])}
    stand_ins, extra = (set(), {}) if subword else _stand_ins(written, rows, set(slots), list(src), tgt_codec.vocab,
                                                              numeric)
    chosen = match(rows, [i for i, t in enumerate(written) if t == UNK_TOKEN or i in stand_ins], slots)
    origin: list[int | None] = []  # each output token's position in translation.tokens (None: put back)
    copy_of: list[int | None] = []  # each output token's slot (its source position), None for the others
    tokens: list[str] = []
    for i, token in enumerate(translation.tokens):
        if extra.get(i) in chosen:
            continue  # the rest of a name the model wrote for a slot
        if i not in chosen and (slot_index(token) is not None or subword and token == UNK_TOKEN):
            continue  # a second copy of a slot; a subword model's <unk> that is no slot's (it spells the rest)
        origin.append(i)
        copy_of.append(chosen.get(i))
        tokens.append(src[chosen[i]] if i in chosen else token)
    kept = [i for i in origin] + [len(translation.tokens)]  # and the </s> row
    rows = rows[kept]
    att = None if translation.attention is None else translation.attention[kept]
    missing = [j for j in slots if j not in chosen.values()]
    for j in sorted(missing, reverse=True):
        at = insertion_point(rows, j, tokens, punctuation(tokens))
        at -= subword and at > 0 and tokens[at - 1] == SPACE_PIECE  # not between a space piece and its unit
        for unit in (src[j], SPACE_PIECE) if subword else (src[j],):  # a subword slot after a space of its own
            tokens.insert(at, unit)
            origin.insert(at, None)
            copy_of.insert(at, j if unit == src[j] else None)
            rows = np.insert(rows, at, np.eye(rows.shape[1], dtype=rows.dtype)[j], axis=0)
            if att is not None:
                att = np.insert(att, at, np.eye(att.shape[1], dtype=att.dtype)[j], axis=0)
    text = tgt_codec.units_to_text(tokens)
    for k, (_, rendering) in enumerate(items):
        if rendering[:1].isdigit():  # a currency sign joins a number's slot as it joins a number ("$ 4.2 million")
            text = re.sub(rf"(?<!\w)([$£€¥]) (?={marker(k)})", r"\1", text)
        text = text.replace(marker(k) + "." if rendering.endswith(".") else marker(k), rendering)  # "p.m.." once
        text = text.replace(marker(k), rendering)
    text = numbers.seam(text, tgt_codec.lang)  # "à le 2 octobre": the model's "à" before a day's item
    shown = [items[slot_index(t)][1] if slot_index(t) is not None else t for t in tokens]
    source_tokens = [items[slot_index(u)][0] if slot_index(u) is not None else u for u in translation.source_tokens]
    replaced = [n for n, i in enumerate(origin) if i is not None and i in translation.replaced and i not in chosen]
    return replace(translation, text=text, tokens=shown, source_tokens=source_tokens, attention=att,
                   replaced=replaced, alignment=rows, carried=slots,
                   copies={j: i for i, j in enumerate(copy_of) if j is not None}), [items[slot_index(src[j])][0]
                                                                                    for j in missing]
