"""One sentence to translate with what its output must honour: ``Source(text, prefix=...,
constraints=..., avoid=...)``. ``Translator.translate`` takes plain strings or these, and gives
back a ``Translation`` of each."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Source:
    """A sentence to translate and what its output must honour: ``Source("The bill passed.",
    prefix="Le projet", constraints=("projet de loi",), avoid=("loi",))``."""
    text: str          # the raw source sentence
    prefix: str = ""   # the output begins with this text, and the model completes it ("": no prefix)
    constraints: tuple[str, ...] = ()  # words or phrases (raw text) the output must contain
    avoid: tuple[str, ...] = ()        # words or phrases the output must not contain
    terms: tuple[tuple[int, int, str], ...] = ()  # (start, end, target term): a glossary's terms over their
    # source words: constraints of the sentence holding them (text/glossary.py)
    slots: tuple[tuple[int, int, str], ...] = ()  # (start, end, written as): character spans of text carried
    # by a slot the model copies, written out as given (the span itself: do not translate; text/segments.py)

    def __post_init__(self):
        for name in ("text", "prefix"):  # Source(None) failed later with "'NoneType' object has no attribute 'strip'"
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Source {name} must be a string, not {type(getattr(self, name)).__name__}")
        for name in ("constraints", "avoid"):  # one string was read letter by letter ("o e t j p r")
            given = getattr(self, name)
            if isinstance(given, str) or not all(isinstance(w, str) for w in given):
                raise TypeError(f"Source {name} must be a tuple of strings, not {given!r}: {name}=({given!r},)"
                                if isinstance(given, str) else f"Source {name} must be a tuple of strings: {given!r}")
        for span in self.slots:
            if len(span) != 3:  # (start, end) alone raised "not enough values to unpack" later
                raise TypeError(f"Source slots are (start, end, written as) triples, not {span!r}")

    @property
    def constrained(self) -> bool:
        return bool(self.constraints or self.avoid or self.terms)


def as_source(item: str | Source) -> Source:
    """A plain string is a Source without a prefix or constraints."""
    return item if isinstance(item, Source) else Source(item)


@dataclass(repr=False)
class Translation:
    """One output: ``text`` (detokenised), its units and the source's, ``score`` (log p(output + </s> |
    source)), the attention alpha_ij, the n best, and ``error`` where the sentence was not translated.
    Printed, its arrays are given by their shapes."""
    text: str                          # detokenised output
    tokens: list[str]                  # output units (</s> excluded)
    source_tokens: list[str]           # source units as the model read them, "</s>" last
    score: float                       # log p(output + </s> | source)
    attention: np.ndarray | None        # alpha (len(tokens) + 1, len(source_tokens)); None for RNNencdec
    nbest: list[Translation] = field(default_factory=list)  # the n best, this one first
    replaced: list[int] = field(default_factory=list)  # positions in tokens of <unk>s replaced (decoding/unk.py)
    error: str | None = None           # why the sentence was not translated (constraints it cannot honour)
    constraints_met: bool = True       # False: the output reached its length limit before meeting them
    alignment: np.ndarray | None = None  # rows (T + 1, S + 1) its slots and tags were placed by (text/pipeline.py)
    segments: list[Translation] = field(default_factory=list)  # a line's sentences, translated (text/pipeline.py)
    carried: list[int] = field(default_factory=list)  # source positions of slots, restored verbatim (text/slots.py)
    copies: dict[int, int] = field(default_factory=dict)  # a slot's source position -> its copy's in tokens

    def __repr__(self) -> str:
        def shape(a):
            return None if a is None else tuple(a.shape)
        extra = f", error={self.error!r}" if self.error else ""
        extra += "" if self.constraints_met else ", constraints_met=False"
        return (f"Translation(text={self.text!r}, score={self.score:.4f}, tokens={len(self.tokens)}, "
                f"attention={shape(self.attention)}, nbest={len(self.nbest)}{extra})")


def sentences_given(texts, name: str, kinds: tuple | type = (str, Source)) -> list:
    """``texts`` as a list (a generator read once), each checked: a TypeError in one line naming the argument and
    the first item that is not a sentence (one string was read letter by letter; a generator had no len())."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{name} must be a list of sentences, not one string: [{name[:-1]}]")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"{name} must be a list of sentences, not {type(texts).__name__}") from None
    bad = next((n for n, t in enumerate(texts) if not isinstance(t, kinds)), None)
    if bad is not None:
        raise TypeError(f"{name}[{bad}] is a {type(texts[bad]).__name__}, not a sentence (a string"
                        + (" or a Source)" if Source in (kinds if isinstance(kinds, tuple) else (kinds,)) else ")"))
    for n, t in enumerate(texts):
        text = t if isinstance(t, str) else t.text
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate: a UnicodeEncodeError deep in the text stage
            raise ValueError(f"{name}[{n}] holds a lone surrogate (character {exc.start}, {text[exc.start]!r}): "
                             "not text; decode the input with errors='replace'") from None
    return texts
