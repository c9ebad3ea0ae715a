"""Markup in ``POST /translate`` (``"markup": "xml" | "html"``): the texts' plain text for the search, and
each translation with its source's tags put back through its alignment (decoding/markup.py); a text
whose markup is not well-formed gets its own error, the others are translated."""
from __future__ import annotations

from rnnsearch.serve.errors import ServeError


def where(field: str, i: int) -> str:
    """Text i of the request as an error names it: ``text``, or ``texts[i]``."""
    return field if field == "text" else f"{field}[{i}]"


def plain_texts(translator, texts: list[str], mode: str, field: str) -> tuple[list[str], dict[int, str]]:
    """The texts without their markup ('' where it is not well-formed), and why each such text is refused."""
    from rnnsearch.decoding.markup import MarkupError, parse
    if getattr(translator.model, "arch", "rnnsearch") != "rnnsearch":
        raise ServeError(422, "not_supported", "markup is placed through the alignments; this model has no "
                         "attention (an RNNencdec)", field="markup")
    plain, refused = [], {}
    for i, text in enumerate(texts):
        try:
            plain.append(parse(text, mode)[0])
        except MarkupError as exc:
            plain.append("")
            refused[i] = f"{where(field, i)}: {exc}"
    return plain, refused


def with_markup(marked: list[str], mode: str, results: list, refused: dict[int, str]) -> list:
    """Each translation with its source's markup put back in ``text`` (decoding/markup.py); a text whose
    markup is not well-formed gets its error."""
    from dataclasses import replace
    from rnnsearch.decoding.markup import MarkupError, parse, render, transfer
    out = []
    for i, (m, r) in enumerate(zip(marked, results)):
        if i in refused:
            out.append(replace(r, text="", error=refused[i]))
        elif r.tokens:
            out.append(replace(r, text=transfer(m, mode, r.source_tokens[:-1], r, r.alignment)))
        else:
            try:
                out.append(replace(r, text=render(parse(m, mode)[1], [], "")))  # a text of tags alone keeps them
            except MarkupError:
                out.append(r)
    return out
