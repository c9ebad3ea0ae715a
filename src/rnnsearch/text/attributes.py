"""HTML attributes a reader sees, translated on request (``TextSettings.translate_attributes``,
``--translate-attributes``): the values of ``alt``, ``title``, ``placeholder`` and ``aria-label`` in the
tags of a page, and the ``content`` of a ``<meta>`` that describes it (``description``, ``og:title``,
``og:description``, ``twitter:title``, ``twitter:description``: what a search result or a shared link
shows), read by ``--markup html`` (``text/documents.read``), each value translated once as running text,
its entities read and written again (``&quot;`` inside a quoted value). Every other attribute, and these
by default, stays as the source wrote it. A value that could not be translated stays as written.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

ATTRIBUTES = ("alt", "title", "placeholder", "aria-label")
TAG = re.compile(r"<[A-Za-z][^<>]*>")  # a start tag (end tags, comments and text hold no such attribute)
VALUE = re.compile(r"(\s(?:" + "|".join(ATTRIBUTES) + r")\s*=\s*)(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)
DESCRIBING = re.compile(r"<meta\b[^<>]*\s(?:name|property)\s*=\s*[\"']?(?:description|(?:og|twitter):(?:title|description))"
                        r"(?=[\"'\s/>])", re.IGNORECASE)  # the page's <meta> a reader sees
CONTENT = re.compile(r"(\scontent\s*=\s*)(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)


def quoted(value: str, quote: str) -> str:
    """``value`` as an attribute's value between ``quote``s: ``& < >`` and that quote escaped, the other quote as it is
    (``aujourd'hui`` between double quotes, not ``aujourd&#x27;hui``)."""
    return quote + html.escape(value, quote=False).replace(quote, "&quot;" if quote == '"' else "&#x27;") + quote


def _patterns(tag: str) -> tuple[re.Pattern, ...]:
    """The patterns of the values to translate in a start tag."""
    return (VALUE, CONTENT) if DESCRIBING.match(tag) else (VALUE,)


def translate_attributes(translator, marked: Sequence, search, settings) -> None:
    """The pages of ``marked`` (``text/documents.Marked``) with those attribute values translated in place,
    all of them searched together as plain lines (``text/pipeline.translate_lines``)."""
    from rnnsearch.text.pipeline import translate_lines
    holders = [(m.page.pieces, k) for m in marked if not m.error for k, p in enumerate(m.page.pieces)
               if isinstance(p, str)]
    elements = [e for m in marked if not m.error for u in m.units for e in _all(u.elements)]
    values = list(dict.fromkeys(html.unescape(v) for text in [p[k] for p, k in holders] + [e.start_tag for e in elements]
                                for tag in TAG.findall(text) for pattern in _patterns(tag)
                                for _, *quoted in pattern.findall(tag)
                                for v in [quoted[0] or quoted[1]] if v.strip()))
    if not values:
        return
    plain = settings.model_copy(update={"translate_attributes": False}) if settings is not None else None
    found = next(translate_lines(translator, values, search, plain), [])
    done = {v: t.text for v, t in zip(values, found) if t.text and not t.error}

    def value(m: re.Match) -> str:
        written = m.group(2) if m.group(2) is not None else m.group(3)
        quote = '"' if m.group(2) is not None else "'"
        out = done.get(html.unescape(written))
        return m.group(0) if out is None else f"{m.group(1)}{quoted(out, quote)}"

    def translated(tag: str) -> str:
        for pattern in _patterns(tag):
            tag = pattern.sub(value, tag)
        return tag

    def retagged(text: str) -> str:
        return TAG.sub(lambda t: translated(t.group(0)), text)
    for pieces, k in holders:
        pieces[k] = retagged(pieces[k])
    for element in elements:
        element.start_tag = retagged(element.start_tag)


def _all(elements: list):
    for e in elements:
        yield e
        yield from _all(e.children)
