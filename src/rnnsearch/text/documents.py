"""Lines with markup through the text stage (``translate --markup xml|html``, the API's ``"markup"``).

Each line is read as units: in HTML, each block (``text/blocks.py``); in XML, the line whole
(``decoding/markup.parse``, which refuses what is not well-formed). The units are translated as lines
of their own (``text/pipeline.py``: sentences, slots), each output gets its unit's inline tags back
through its alignment (``decoding/markup.put_back``: a tag never inside a word), and the line is
written again around them: one Translation per line, whose ``text`` is the marked output.

A line's ``avoid`` terms go to each of its units; its ``constraints`` to its unit where it has one,
and a line of several blocks with constraints is not translated (a term belongs to one block: give
each block a line of its own, or use a glossary, which is matched block by block).
"""
from __future__ import annotations

import copy
import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from rnnsearch.data.vocab import EOS_TOKEN
from rnnsearch.decoding.markup import MarkupError, alignment_of, parse, put_back, render
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source, Translation
from rnnsearch.text import blocks
from rnnsearch.text.pipeline import join, translate_lines
from rnnsearch.text.segments import items_of
from rnnsearch.text.normalize import clean
from rnnsearch.text.settings import TextSettings


@dataclass
class Marked:
    """One line read for translation: its units (``page``), or why it is not translated (``error``)."""
    page: blocks.Page
    error: str | None = None
    constraints_met: bool = True  # False: refused for its constraints
    @property
    def units(self) -> list[blocks.Unit]:
        return [] if self.error else self.page.units

    def sources(self) -> list[Source]:
        """Each unit as a Source, its spans carried verbatim as slots."""
        return [Source(u.plain, slots=tuple((a, b, u.plain[a:b]) for a, b in u.keep)) for u in self.units]


def read(text: str, mode: str, source_lang: str | None = None) -> Marked:
    """A line's units and what lies between them (``blocks.Page``; its ``warnings``: faults of form read
    through); in XML a line not well-formed has its ``error``; in HTML an element in another language than
    ``source_lang`` (its ``lang``) is left as written. The text is read in NFC, without soft hyphens
    (``text/normalize.py``)."""
    text = clean(text)[0]
    if mode == "html":
        return Marked(blocks.read(text, source_lang))
    try:
        plain, elements = parse(text, mode)
        if _row(plain, elements):  # <g>Save</g><g>As</g>: two labels, not the word "SaveAs" (one element emptied)
            text = re.sub(r"(</[^<>]+>)(?=<[A-Za-z])", r"\1 ", text)
            plain, elements = parse(text, mode)
    except MarkupError as exc:
        return Marked(blocks.Page([], [], []), error=str(exc))
    return Marked(blocks.Page([0], [blocks.Unit(plain, elements, {}, keep=_protected(elements), raw=text)], []))


def _row(plain: str, elements: list) -> bool:
    """Whether a line is a row of two or more elements holding words side by side, and nothing else (as HTML's
    ``blocks._row``): each one's words are its own."""
    words = [e for e in elements if e.end_tag and any(c.isalnum() for c in plain[e.start:e.end])]
    inside = sum(e.end - e.start for e in words)
    return len(words) >= 2 and not "".join(plain[a.end:b.start] for a, b in zip(words, words[1:])).strip() and \
        inside == len(plain.strip()) and any(a.end == b.start for a, b in zip(words, words[1:]))


PROTECTED = re.compile(r"""\s(?:[\w-]+:)?translate\s*=\s*["']no["']|\smtype\s*=\s*["']protected["']""")


def _protected(elements: list) -> list[tuple[int, int]]:
    """The spans of plain text inside an element marked not to translate (XLIFF's ``<mrk mtype="protected">``, ITS's
    ``its:translate="no"``, XLIFF 2's ``translate="no"``): carried verbatim, as HTML's are (``Bill C-45`` came out
    ``projet de loi C-45``)."""
    out: list[tuple[int, int]] = []
    for e in elements:
        if PROTECTED.search(e.start_tag) and e.end > e.start:
            out.append((e.start, e.end))
        else:
            out += _protected(e.children)
    return sorted(out)


def read_lines(texts: Sequence[str], mode: str, warn) -> list[Marked]:
    """Each line read (``read``), with ``warn`` called for each fault of form read through and each
    line refused (``line N: ...``)."""
    marked = []
    for n, text in enumerate(texts, 1):
        m = read(text, mode)
        for warning in m.page.warnings:
            warn(f"line {n}: {warning}")
        if m.error:
            warn(f"line {n}: not translated: {m.error}")
        marked.append(m)
    return marked


TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s+[\w:.-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*\s*/?>"  # <b>, </a>, <br/>
                 r"|&(?:[A-Za-z][A-Za-z0-9]{1,30}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")  # &nbsp;, &#39;: read as words too


def unmarked_tags(texts: Sequence[str], shown: int = 3) -> str | None:
    """A warning for lines read as plain text that hold tags or entities (``<b>``, ``</a>``, ``&nbsp;``), which
    the model then reads as words and translates badly (``The <b>vote</b> passes`` came out as another sentence,
    ``page&nbsp;12`` as ``page nbsp, 12``); None where none does."""
    found = [(n, markup_kinds(text)) for n, text in enumerate(texts, 1) if TAG.search(text)]
    if not found:
        return None
    lines = ", ".join(str(n) for n, _ in found[:shown]) + (f" and {len(found) - shown} more" if len(found) > shown else "")
    kinds = list(dict.fromkeys(k for _, marks in found for k in marks))
    named = ", ".join(kinds[:shown]) + (", ..." if len(kinds) > shown else "")
    return (f"line{'s' * (len(found) > 1)} {lines} hold{'s' * (len(found) == 1)} markup ({named}), read as words: "
            "give --markup html or --markup xml to keep the markup out of the sentence and put it back")


def markup_kinds(text: str) -> list[str]:
    """The kinds of tag and entity ``text`` holds, each once (``<b>``, ``&nbsp;``)."""
    return list(dict.fromkeys(m if m.startswith("&") else re.sub(r"^</?([\w:.-]+).*", r"<\1>", m, flags=re.DOTALL)
                              for m in TAG.findall(text)))


def with_item_spaces(translator, marked: Sequence[Marked], settings: TextSettings | None) -> None:
    """Each unit's space entities inside an item (``613&nbsp;555&nbsp;0199``, ``10&nbsp;dollars``) made part of the
    item's text, written back as the source wrote them, rather than tags of no words placed through the alignment
    (which cannot point inside an item's slot: they dangled after it, ``613 555 0199&nbsp;&nbsp;.``); and so a
    symbol's entity, which is otherwise a span of its own (``20&#176;C`` came out ``20 &#176;``, the C lost)."""
    settings = TextSettings.given(settings)
    for m in marked:
        m.page.units[:] = [_item_spaces(translator, u, settings) for u in m.units]


def _item_spaces(translator, unit: blocks.Unit, settings: TextSettings) -> blocks.Unit:
    spans = [(i.start, i.end) for i in items_of(translator, unit.plain, settings)]
    keep = [(a, b) for a, b in unit.keep  # a symbol's entity inside an item: the item's
            if not (b - a == 1 and unit.plain[a] in unit.entities and any(s <= a and b <= e for s, e in spans))]
    unit = replace(unit, keep=keep)
    folded: list = []

    def outside(elements: list) -> list:
        kept = [e for e in elements if not (e.space and any(a < e.start < b for a, b in spans))]
        folded.extend(e for e in elements if e not in kept)
        for e in kept:
            e.children = outside(e.children)
        return kept
    if not spans or not any(e.space for e in _all(unit.elements)):
        return unit
    elements = outside(copy.deepcopy(unit.elements))
    plain, entities = list(unit.plain), {c: list(raws) for c, raws in unit.entities.items()}
    for e in sorted(folded, key=lambda e: e.start):
        plain[e.start] = html.unescape(e.start_tag)
        entities.setdefault(plain[e.start], []).append(e.start_tag)
    plain = "".join(plain)
    if [(i.start, i.end) for i in items_of(translator, plain, settings)] != spans:
        return unit  # the items read otherwise with the entities' characters: the tags as they were
    return replace(unit, plain=plain, elements=elements, entities=entities)


def _all(elements: list) -> Iterator:
    for e in elements:
        yield e
        yield from _all(e.children)


def unit_sources(sources: Sequence[Source], marked: Sequence[Marked]) -> list[Source]:
    """The units of every line as Sources, in order, each with its line's terms (a line with
    constraints and several units is given an ``error`` and no units)."""
    out = []
    for n, (source, m) in enumerate(zip(sources, marked)):
        if source.constraints and len(m.units) > 1:
            marked[n].constraints_met = False
            marked[n].error = (f"its constraints go with one block, and it has {len(m.units)}: give each block "
                               "a line of its own, or use a glossary (matched block by block)")
        out += [replace(u, constraints=source.constraints, avoid=source.avoid) for u in m.sources()]
    return out


def assemble(translator, marked: Sequence[Marked], found: Sequence[Translation]) -> list[Translation]:
    """Each line's Translation from its units' (``found``, in the order of ``unit_sources``): the text
    its markup written again around the units' outputs, the rest joined as sentences are; a line with
    a unit not translated has its ``error`` and an empty text, as a line of plain text has."""
    out, k = [], 0
    for m in marked:
        mine = list(found[k:k + len(m.units)])
        k += len(m.units)
        out.append(_line(translator, m, mine))
    return out


NOTHING = "the model wrote nothing for it"  # a unit with words whose output is empty


def _line(translator, m: Marked, mine: list[Translation]) -> Translation:
    if m.error:
        return Translation("", [], [EOS_TOKEN], 0.0, None, error=m.error, constraints_met=m.constraints_met)
    texts = [_unit_output(translator, u, t) for u, t in zip(m.units, mine)]
    line = join([(t, " ") for t in mine]) if mine else Translation("", [], [EOS_TOKEN], 0.0, None)
    failed = [(n, why) for n, (u, t) in enumerate(zip(m.units, mine), 1) if (why := _not_translated(u, t))]
    error = None
    if failed:
        n, why = failed[0]
        error = f"block {n} of {len(mine)}: {why}" if len(mine) > 1 else why
    return replace(line, text="" if error else blocks.write(m.page, texts), error=error)  # not translated: empty


def _not_translated(unit: blocks.Unit, t: Translation) -> str | None:
    """Why a unit was not translated: its error, or an empty output for words (None: it was)."""
    return t.error or (NOTHING if not t.tokens and any(c.isalnum() for c in unit.plain) else None)


def _unit_output(translator, unit: blocks.Unit, t: Translation) -> str:
    """A unit's output with its tags put back (a unit the model gave no words keeps its tags)."""
    if not t.tokens:
        return render(unit.elements, [], "", unit.entities)
    rows = t.alignment if t.alignment is not None else alignment_of(translator, t)  # (T + 1, S + 1)
    return put_back(unit.plain, unit.elements, t.source_tokens[:-1], t, rows, unit.entities)


def _prepared(translator, marked: Sequence[Marked], search, settings: TextSettings | None) -> None:
    """The pages' items kept whole across ``&nbsp;`` and, on request, their attributes translated."""
    with_item_spaces(translator, marked, settings)
    if settings is not None and settings.translate_attributes:
        from rnnsearch.text.attributes import translate_attributes
        translate_attributes(translator, marked, search, settings)


def translate_marked(translator, sources: Sequence[Source], marked: Sequence[Marked],
                     search: SearchSettings | None = None, settings: TextSettings | None = None,
                     part_size: int | None = None, progress=None, terms=None) -> Iterator[list[Translation]]:
    """One Translation per line (``marked``: each line read by ``read``), in parts of ``part_size``
    lines (None: one part) yielded in order, each part's units searched together; ``terms``: the
    unit Sources with a glossary's terms added (matched unit by unit)."""
    size = part_size or max(len(sources), 1)
    _prepared(translator, marked, search, settings)
    for first in range(0, len(sources), size):
        lines, part = list(sources[first:first + size]), list(marked[first:first + size])
        units = unit_sources(lines, part)
        units = terms(units) if terms and units else units
        numbers = [first + n + 1 for n, m in enumerate(part) for _ in m.units]  # each unit's line, in warnings
        found = next(translate_lines(translator, units, search, settings, alignments=True, numbers=numbers),
                     []) if units else []
        yield assemble(translator, part, found)
        if progress is not None:
            progress(len(lines))


def translate_units(translator, marked: Sequence[Marked], search: SearchSettings | None = None,
                    settings: TextSettings | None = None, progress=None, terms=None
                    ) -> list[list[tuple[str, str | None, Translation]]]:
    """For each line read (``marked``), each unit's output with its tags put back and None, or its
    source as written and why it was not translated, with the unit's Translation (its confidence and
    attention; None for a unit with nothing to translate, which stays as written): the units of every
    line searched together, so a document can keep the units translated where one fails (``text/files.py``);
    ``terms``: the unit Sources with a glossary's terms added."""
    _prepared(translator, marked, search, settings)
    units = [u for m in marked for u in m.units]
    sources = [s for m in marked for u, s in zip(m.units, m.sources()) if u.has_words()]
    sources = terms(sources) if terms and sources else sources
    found = iter(next(translate_lines(translator, sources, search, settings, progress=progress, alignments=True),
                      []) if sources else [])
    done = []
    for unit in units:
        t = next(found) if unit.has_words() else None  # a unit of nothing to translate stays as written
        why = _not_translated(unit, t) if t is not None else None
        done.append((unit.raw, why, t) if why or t is None else (_unit_output(translator, unit, t), None, t))
    out, k = [], 0
    for m in marked:
        out.append(done[k:k + len(m.units)])
        k += len(m.units)
    return out
