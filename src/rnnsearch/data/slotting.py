"""Slots in training pairs, so that a subword model learns to copy them.

At translation time the text stage (``text/slots.py``) reads an item (a URL, a number, an amount) as
one slot: a character of plane 15's private use area that no vocabulary holds, so the model reads
<unk> there, and the item is written back where the model writes <unk>. A word model learns that
copy from its own unknown words (a rare name is <unk> on both sides of many pairs); a subword model
never meets <unk> (its pieces spell every word), so it must be shown: in a share of the training
pairs (``data.slot_rate``), the tokens the pair writes the same on both sides and which the text stage
reads as items for such a model (a URL, an e-mail address, a plain integer, a label such as ``C-45``)
become one slot each, the same on both sides. Which pairs is fixed by their line number, so that ``rnnsearch prepare``
and the text path agree, and a resumed run reads the same pairs.
"""
from __future__ import annotations

import re
import zlib

BASE = 0xF0000  # slot k is chr(BASE + k): plane 15's private use characters
EDGE = "([{\"'«»“”‘’)]}.,;:!?"  # punctuation around a token that is not part of it
RULE = 2  # which tokens become slots: a dataset prepared by another rule is prepared again (data/prepared.py)
LABEL = r"[A-Z]{1,3}-?\d+[A-Za-z]?"  # Bill C-45, Form T4A, B52 (text/items.py reads the same as an item)
SHARED = re.compile(rf"(?:https?://|www\.)\S+|[^@\s]+@[^@\s]+\.\w+|\d+|{LABEL}")  # URL, e-mail, integer, label
SPACE = re.compile(r"(\s+)")


def marker(k: int) -> str:
    """Slot k's character."""
    return chr(BASE + k)


def _cores(text: str) -> list[str]:
    """Each whitespace-separated token of ``text`` without the punctuation around it."""
    return [t.strip(EDGE) for t in text.split()]


def shared_items(src: str, tgt: str) -> list[str]:
    """The tokens (punctuation around them aside) that are items and that each side writes exactly
    once, identically, in the source's order."""
    a, b = _cores(src), _cores(tgt)
    return [t for t in dict.fromkeys(a) if t and SHARED.fullmatch(t) and a.count(t) == 1 and b.count(t) == 1]


def _with_markers(text: str, items: list[str]) -> str:
    index = {item: k for k, item in enumerate(items)}
    parts = SPACE.split(text)
    for n in range(0, len(parts), 2):  # the tokens; the odd parts are the spaces between them
        core = parts[n].strip(EDGE)
        if core in index:
            lead = len(parts[n]) - len(parts[n].lstrip(EDGE))
            parts[n] = parts[n][:lead] + marker(index[core]) + parts[n][lead + len(core):]
    return "".join(parts)


def chosen(line: int, rate: float) -> bool:
    """Whether training pair ``line`` (its 1-based line number) is among the share ``rate`` that gets slots."""
    return rate > 0 and zlib.crc32(f"slot:{line}".encode()) < rate * 2**32


def slotted(src: str, tgt: str, line: int, rate: float) -> tuple[str, str]:
    """The pair with its shared items as slots on both sides where ``chosen(line, rate)``, else as it is."""
    if not chosen(line, rate):
        return src, tgt
    items = shared_items(src, tgt)
    if not items:
        return src, tgt
    return _with_markers(src, items), _with_markers(tgt, items)


def slotted_lines(srcs: list[str], tgts: list[str], first: int, rate: float) -> tuple[list[str], list[str], int]:
    """``slotted`` over parallel lines whose first is training line ``first``: both sides, and how many
    pairs got slots."""
    pairs = [slotted(s, t, first + k, rate) for k, (s, t) in enumerate(zip(srcs, tgts))]
    return [p[0] for p in pairs], [p[1] for p in pairs], sum(p[0] != s for p, s in zip(pairs, srcs))


def summary(slotted_pairs: int, pairs: int, rate: float) -> str:
    """The log line of how many training pairs got slots (a warning where none did)."""
    if not slotted_pairs:
        return (f"warning: data.slot_rate {rate:g}, but none of the {pairs:,} training pairs writes a URL, e-mail "
                "address, integer or label (C-45) the same on both sides: the model learns no slots")
    return f"slots: {slotted_pairs:,} of {pairs:,} training pairs have their shared items as slots (data.slot_rate {rate:g})"
