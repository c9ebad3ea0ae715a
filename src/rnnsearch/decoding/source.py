"""One sentence to translate with what its output must honour: ``Source(text, prefix=...,
constraints=..., avoid=...)``. ``Translator.translate`` takes plain strings or these."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    text: str          # the raw source sentence
    prefix: str = ""   # the output begins with this text, and the model completes it ("": no prefix)
    constraints: tuple[str, ...] = ()  # words or phrases (raw text) the output must contain
    avoid: tuple[str, ...] = ()        # words or phrases the output must not contain

    @property
    def constrained(self) -> bool:
        return bool(self.constraints or self.avoid)


def as_source(item: str | Source) -> Source:
    """A plain string is a Source without a prefix or constraints."""
    return item if isinstance(item, Source) else Source(item)
