"""Text as the model should read it, whatever the keyboard or system wrote: ``clean(text)`` and
``clean_source(source)``.

- Unicode NFC: a letter and its combining accent as one character (macOS and some PDFs write ``é`` as ``e`` and
  U+0301): the model read ``Be\u0301langer`` as ``Be``, an unknown mark and ``langer``, and wrote ``M. ́ langer``.
- Invisible format characters inside words taken out: the soft hyphen (U+00AD), the zero-width space (U+200B),
  the word joiner (U+2060) and a byte-order mark inside the text (U+FEFF): ``commit\xadtee`` lost its word.
  (The zero-width joiner of an emoji sequence stays: it is part of the emoji.)

A Source's slots and terms (character spans) are moved with the text they cover.
"""
from __future__ import annotations

import unicodedata
from dataclasses import replace

from rnnsearch.decoding.source import Source

INVISIBLE = frozenset("\u00ad\u200b\u2060\ufeff")


def clean(text: str) -> tuple[str, list[int]]:
    """``text`` in NFC without the invisible characters, and where each of its offsets (0 .. len) went."""
    if text.isascii() or (unicodedata.is_normalized("NFC", text) and not INVISIBLE.intersection(text)):
        return text, list(range(len(text) + 1))
    out: list[str] = []
    where = [0] * (len(text) + 1)
    start = length = 0
    for end in range(1, len(text) + 1):  # clusters: a character and the combining marks after it
        if end < len(text) and unicodedata.combining(text[end]):
            continue
        where[start:end] = [length] * (end - start)
        cluster = unicodedata.normalize("NFC", "".join(c for c in text[start:end] if c not in INVISIBLE))
        out.append(cluster)
        length += len(cluster)
        start = end
    where[len(text)] = length
    return "".join(out), where


def clean_source(source: Source) -> Source:
    """``source`` with its text, prefix and terms cleaned, its slots and terms moved with their text."""
    text, where = clean(source.text)
    if text == source.text and source.prefix == clean(source.prefix)[0]:
        return source
    moved = [tuple((where[a], where[b], w) for a, b, w in spans) for spans in (source.slots, source.terms)]
    return replace(source, text=text, prefix=clean(source.prefix)[0], slots=moved[0], terms=moved[1],
                   constraints=tuple(clean(c)[0] for c in source.constraints),
                   avoid=tuple(clean(a)[0] for a in source.avoid))
