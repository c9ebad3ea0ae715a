"""Markup in ``POST /translate`` (``"markup": "xml" | "html"``): each text read as units
(text/documents.py: in HTML each block a unit), the units translated as texts of their own, and each
text written again with its tags put back; a text whose markup is refused gets its own error, the
others are translated."""
from __future__ import annotations

from rnnsearch.serve.errors import ServeError


def where(field: str, i: int) -> str:
    """Text i of the request as an error names it: ``text``, or ``texts[i]``."""
    return field if field == "text" else f"{field}[{i}]"


def read_texts(translator, texts: list[str], mode: str) -> list:
    """Each text read for translation (``text/documents.read``)."""
    from rnnsearch.text.documents import read
    if getattr(translator.model, "arch", "rnnsearch") != "rnnsearch":
        raise ServeError(422, "not_supported", "markup is placed through the alignments; this model has no "
                         "attention (an RNNencdec)", field="markup")
    return [read(text, mode) for text in texts]


def with_errors_named(results: list, field: str) -> list:
    """Each text's error, if it has one, naming the text (``texts[2]: ...``)."""
    from dataclasses import replace
    return [replace(r, error=f"{where(field, i)}: {r.error}") if r.error else r for i, r in enumerate(results)]
