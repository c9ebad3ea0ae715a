"""One sentence to translate with what its output must honour: ``Source(text, prefix=...)``.
``Translator.translate`` takes plain strings or these."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    text: str          # the raw source sentence
    prefix: str = ""   # the output begins with this text, and the model completes it ("": no prefix)


def as_source(item: str | Source) -> Source:
    """A plain string is a Source without a prefix."""
    return item if isinstance(item, Source) else Source(item)
