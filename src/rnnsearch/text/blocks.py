"""HTML as translation units (``--markup html``), read as the Bergamot translator reads a page: with a
real parser (the standard library's ``html.parser``, entities as written), block elements (p, li, td,
th, h1-h6, div, br, ...) bound the units and each unit is translated on its own; a unit's inline
elements (b, a, span, ...) are put back through the alignment (``decoding/markup.py``). Everything
between units is written as the source wrote it (tags, attributes, spacing).

Passed through untranslated, as written: comments, declarations, ``script``, ``style``, ``pre``,
``code``, ``kbd``, ``samp``, ``var``, ``textarea`` and any element with ``translate="no"`` or the class
``notranslate``: between blocks in place; inside a unit, an inline one of plain text as a span the
model carries verbatim (``Unit.keep``: a slot, so it keeps its place in the sentence), any other as
a tag of no words placed through the alignment (like ``<img>``).

Entities: ``&amp; &lt; &gt;`` are the characters of the text they stand for (escaped again in the
output), as are a letter's (``&eacute;``: the letter), an apostrophe's and a hyphen's (written again
as the source did), and a currency sign's (``&euro;25`` is an amount, its sign written ``&euro;``
again); a space's (``&nbsp;``) stays between the words it separates, as a tag of no words; any other
symbol's or mark's (``&copy;``, ``&mdash;``, ``&quot;``) is a span the
model carries verbatim (``Unit.keep``), written again as the source wrote it; an entity the parser
does not know is kept as written, as a tag of no words.

A fragment that is not well-formed is translated all the same, read as ``text/html_tree.py`` says,
with one warning for each fault naming its character; an end tag that closes nothing stays where it
was, as a tag of no words.
"""
from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field, replace

from rnnsearch.decoding.markup import VOID, Element
from rnnsearch.text.html_tree import (BLOCK, Node, bare_ampersand, last_offset, mark_foreign, parse_tree,
                                      primary_language, whole)

INLINE_KEPT = {"code", "kbd", "samp", "var", "span", "em", "b", "i", "strong", "a", "abbr", "cite", "q", "small",
               "mark", "sub", "sup", "u", "s", "tt", "bdi", "bdo", "data", "time", "dfn"}  # kept as carried text
PLAIN_ENTITIES = "&<>"  # written again by escaping
FOOTNOTE = re.compile(r"[\d*†‡§,]+|[a-z]")  # a sup or sub of these is a mark, not words: 1, 2,3, *, a
IN_WORDS = "&<>'\u2019-\u2010\u2011"  # marks of the text itself: read by the model, not kept apart


@dataclass
class Unit:
    """A run of inline content translated on its own: its plain text and inline elements."""
    plain: str
    elements: list[Element]
    entities: dict[str, list[str]]  # a character -> the entities the source wrote it as, in order
    keep: list[tuple[int, int]] = field(default_factory=list)  # spans of plain carried verbatim (Source.slots)
    raw: str = ""  # the unit as the source wrote it (markup and all)

    def has_words(self) -> bool:
        """Whether it holds a word to translate outside the spans it carries verbatim (a ``<code>`` alone, a
        quotation in another language alone: nothing to translate)."""
        kept = {i for a, b in self.keep for i in range(a, b)}
        return any(c.isalnum() for i, c in enumerate(self.plain) if i not in kept)


@dataclass
class Page:
    """A fragment as units and what lies between them: ``pieces`` are text kept as written (str) or
    the index of a unit (int), in order."""
    pieces: list
    units: list[Unit]
    warnings: list[str]


def read(text: str, source_lang: str | None = None) -> Page:
    """The fragment's units and what lies between them, with a warning for each fault of form; given
    ``source_lang``, an element whose ``lang`` is another language is left as written (``mark_foreign``)."""
    page = Page([], [], [])
    root = parse_tree(text, page.warnings)
    if source_lang:
        foreign: list[Node] = []
        mark_foreign(root, source_lang, found=foreign)
        shown = [f"<{n.tag} lang={primary_language(dict(n.attrs).get('lang') or dict(n.attrs).get('xml:lang'))}>"
                 for n in foreign if any(c.isalnum() for c in whole(n, text)[len(n.raw):])]
        if shown:
            page.warnings.append(f"{len(shown)} element{'s' if len(shown) > 1 else ''} in another language than "
                                 f"{source_lang} left as written ({', '.join(dict.fromkeys(shown))})")
    _flatten(root.children, text, page)
    return page


def write(page: Page, outputs: list[str]) -> str:
    """The fragment with each unit's output (markup and all) in its place."""
    return "".join(outputs[p] if isinstance(p, int) else p for p in page.pieces)


def _flatten(children: list[Node], text: str, page: Page) -> None:
    run: list[Node] = []
    for k, child in enumerate(children):
        if child.tag == "br" and _mid_sentence(run, children[k + 1:]):
            run.append(child)  # The committee<br>met today: one sentence, its line break placed as a tag is
            continue
        if child.tag and not child.tag.startswith("#") and child.container() or (
                child.tag in BLOCK and child.opaque()):
            _emit(run, text, page)
            run = []
            if child.opaque():
                page.pieces.append(whole(child, text))
                continue
            page.pieces.append(child.raw)
            _flatten(child.children, text, page)
            page.pieces.append(child.end_tag)
        else:
            run.append(child)
    _emit(run, text, page)


def _mid_sentence(before: list[Node], after: list[Node]) -> bool:
    """Whether a ``<br>`` breaks a sentence's line rather than ending a unit: words before it that end with no
    mark of a sentence's end, and a small letter the first thing after it (an address's or a poem's lines
    begin with a capital or a digit, and stay units of their own)."""
    said = "".join(n.raw for n in before if n.tag == "").rstrip()
    following = next((n for n in after if n.tag != "" or n.raw.strip()), None)
    return bool(said) and said[-1] not in ".!?:;" and following is not None and following.tag == "" and \
        following.raw.lstrip()[:1].islower()


def _is_element(node: Node) -> bool:
    return bool(node.tag) and not node.tag.startswith("#") and not node.opaque() and node.tag not in VOID


def _holds_text(node: Node, text: str) -> bool:
    return any(c.isalnum() for c in whole(node, text)[len(node.raw):])


def _row(run: list[Node], text: str) -> bool:
    """Whether a run is a row of inline elements (``<a>Home</a> | <a>News</a>``): two or more holding
    text, and no letter or digit outside them. Each is then translated on its own, as a block is."""
    items = [n for n in run if _is_element(n) and _holds_text(n, text)]
    loose = [n for n in run if n.tag in ("", "#entity") and any(c.isalnum() for c in n.raw)]
    return len(items) >= 2 and not loose


def _emit(run: list[Node], text: str, page: Page) -> None:
    """A run of inline nodes as a unit (its spacing at either end kept outside), or as written where it
    holds nothing to translate."""
    if not run:
        return
    if _row(run, text):
        for node in run:  # a menu: each item a unit of its own
            if _is_element(node) and _holds_text(node, text):
                page.pieces.append(node.raw)
                _emit(list(node.children), text, page)
                page.pieces.append(node.end_tag)
            else:
                page.pieces.append(whole(node, text))
        return
    lead = run[0].raw[:len(run[0].raw) - len(run[0].raw.lstrip())] if run[0].tag == "" else ""
    trail = run[-1].raw[len(run[-1].raw.rstrip()):] if run[-1].tag == "" else ""
    inner = list(run)
    inner[0] = replace(inner[0], raw=inner[0].raw[len(lead):]) if lead else inner[0]
    inner[-1] = replace(inner[-1], raw=inner[-1].raw[:len(inner[-1].raw) - len(trail)]) if trail else inner[-1]
    unit = _unit(inner, text)
    written = "".join(whole(n, text) for n in run)
    if not any(c.isalnum() for c in unit.plain):
        page.pieces.append(written)
        return
    unit.raw = written[len(lead):len(written) - len(trail)]
    page.pieces += [lead, len(page.units), trail]
    page.units.append(unit)


def _unit(run: list[Node], text: str) -> Unit:
    builder = _Builder(text)
    elements: list[Element] = []
    builder.nodes(run, elements)
    return Unit("".join(builder.parts), elements, builder.entities, builder.keep)


class _Builder:
    """A unit's plain text and inline elements (``decoding/markup.Element``), node by node."""

    def __init__(self, text: str):
        self.text, self.parts, self.length, self.entities, self.keep = text, [], 0, {}, []
        self.spaced = False  # an atom after a space was the last thing added: the spacing after it is its

    def add(self, s: str) -> None:
        if self.spaced:
            s = s.lstrip()
            self.spaced = not s
        if s:
            self.parts.append(s)
            self.length += len(s)

    def _after_word(self) -> bool:
        return bool(self.parts) and bool(self.parts[-1][-1:].strip())

    def atom(self, raw: str, into: list, following: str = "", space: bool = False, seen: bool = True) -> None:
        """Something kept as written and placed through the alignment, of no words; one a reader sees
        (``<img>``, not a comment) between two words written together keeps them two."""
        apart = not self._after_word() and not space  # at the start, or after a space
        into.append(Element(raw, "#", self.length, self.length, left=not apart, space=space,
                            spaced=apart and following.isspace(), spaced_before=apart and bool(self.parts)))
        if space or (seen and self._after_word() and following.strip() and following != "<"):  # "<": a tag, no word
            self.add(" ")
        self.spaced = apart

    def nodes(self, nodes: list[Node], into: list) -> None:
        for n in nodes:
            following = self.text[last_offset(n):last_offset(n) + 1]
            if n.tag == "":
                self.add(n.raw)
            elif n.tag == "#entity":
                self.entity(n.raw, into, following)
            elif n.tag in ("sup", "sub") and _footnote(n, following):  # kept on the word it follows
                self.atom(whole(n, self.text), into, "" if following == "<" else following)
            elif n.opaque() and n.children and all(c.tag == "" for c in n.children) and n.tag in INLINE_KEPT:
                self.kept(n, into)
            elif n.tag == "#keep" or n.opaque() or n.tag in VOID or n.raw.endswith("/>"):
                self.atom(whole(n, self.text), into, following, seen=n.tag != "#keep" or n.raw.startswith("</"))
            else:
                element = Element(n.raw, n.tag, self.length)
                into.append(element)
                self.nodes(n.children, element.children)
                element.end, element.end_tag = self.length, n.end_tag

    def kept(self, n: Node, into: list) -> None:
        """An element of plain text not to translate: its text a span the model carries verbatim."""
        element = Element(n.raw, n.tag, self.length)
        into.append(element)
        start = self.length
        self.add("".join(c.raw for c in n.children))
        self.keep.append((start, self.length))
        element.end, element.end_tag = self.length, n.end_tag

    def entity(self, raw: str, into: list, following: str) -> None:
        char = html.unescape(raw)
        category = unicodedata.category(char) if len(char) == 1 else ""
        if bare_ampersand(raw):
            self.add(raw)  # a bare ampersand before letters (``AT&T``): text, as a browser shows it
        elif char == raw:
            self.atom(raw, into, following)  # not an entity the parser knows
        elif category in ("Zs", "Zl", "Zp"):
            self.atom(raw, into, following, space=True)
        elif category == "Cf":
            self.atom(raw, into, following)
        elif category[:1] in ("S", "P") and char not in IN_WORDS and category != "Sc":  # a currency sign: an amount's
            self.keep.append((self.length, self.length + 1))
            self.add(char)
            self.entities.setdefault(char, []).append(raw)
        else:
            self.add(char)
            if category[:1] not in ("L", "M", "N", "") and char not in PLAIN_ENTITIES:
                self.entities.setdefault(char, []).append(raw)


def _footnote(n: Node, following: str) -> bool:
    """Whether a ``sup`` or ``sub`` is a footnote mark: a number, ``*`` or one small letter, with no word
    written right after it (``Today<sup>1</sup> the``, not ``H<sub>2</sub>O``)."""
    return bool(FOOTNOTE.fullmatch("".join(c.raw for c in n.children))) and not following.isalnum()
