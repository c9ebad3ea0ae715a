"""An HTML fragment as a tree of nodes, each with its source offsets, read by the standard library's
``html.parser`` (entities as written) as leniently as browsers read a page: ``parse_tree(text)``.

A fragment that is not well-formed is read all the same, with one warning for each fault naming its
character: an end tag that closes no open element is kept where it was (a "#keep" node); an element
never closed (or closed by the end tag of one around it) ends where its parent does, its end tag
written nowhere, as in the source. End tags HTML lets a writer leave out (``li``, ``p``, ``td``,
``tr``, ``option``, ...) are implied without a warning.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from rnnsearch.decoding.markup import VOID

BLOCK = {"address", "article", "aside", "blockquote", "body", "br", "caption", "center", "col", "colgroup", "dd",
         "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
         "h2", "h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu",
         "nav", "noscript", "ol", "optgroup", "option", "p", "pre", "script", "section", "select", "style",
         "summary", "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "title", "tr", "ul"}
OPAQUE = {"script", "style", "pre", "code", "kbd", "samp", "var", "textarea", "template", "svg", "math"}
OPTIONAL_END = {"li", "p", "td", "th", "tr", "dt", "dd", "option", "optgroup", "thead", "tbody", "tfoot",
                "colgroup", "caption", "html", "head", "body"}
IMPLIES_END = {  # a start tag -> the open elements it ends (up to the nearest of its scope)
    "li": ({"li"}, {"ul", "ol", "menu"}), "dt": ({"dt", "dd"}, {"dl"}), "dd": ({"dt", "dd"}, {"dl"}),
    "tr": ({"tr", "td", "th"}, {"table", "thead", "tbody", "tfoot"}), "td": ({"td", "th"}, {"tr", "table"}),
    "th": ({"td", "th"}, {"tr", "table"}), "option": ({"option"}, {"select", "datalist", "optgroup"}),
    "thead": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
    "tbody": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
    "tfoot": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
}


@dataclass
class Node:
    """One piece of the parsed fragment: an element (``tag``), text (``tag`` ""), an entity ("#entity"),
    or something kept as written ("#keep": a comment, a declaration, an end tag closing nothing)."""
    tag: str
    begin: int                     # character offsets in the source
    end: int = -1
    raw: str = ""                  # a start tag, text or entity as written
    end_tag: str = ""              # as written ("": none in the source)
    attrs: list = field(default_factory=list)
    children: list = field(default_factory=list)
    foreign: bool = False          # in another language than the source (``mark_foreign``): left as written

    def opaque(self) -> bool:
        classes = (dict(self.attrs).get("class") or "").split()
        return self.foreign or self.tag in OPAQUE or dict(self.attrs).get("translate") == "no" or "notranslate" in classes

    def container(self) -> bool:
        """Whether it bounds units: a block element, or an element holding one."""
        if self.tag in BLOCK:
            return True
        return bool(self.tag) and not self.tag.startswith("#") and not self.opaque() and any(
            c.container() and c.tag != "br" for c in self.children)


class _Tree(HTMLParser):
    """The fragment's nodes, each with its source offsets (``getpos``), lenient as browsers are."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=False)
        self.text, self.warnings = text, []
        self.root = Node("#root", 0, end=len(text))
        self.stack = [self.root]
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.events: list[tuple[int, Node, str]] = []  # (offset, node, "start" | "end" | "raw"), in order

    def _at(self) -> int:
        line, column = self.getpos()
        return self.starts[line - 1] + column

    def _add(self, node: Node, kind: str = "raw", open_: bool = False) -> None:
        self.stack[-1].children.append(node)
        self.events.append((node.begin, node, kind))
        if open_:
            self.stack.append(node)

    def handle_starttag(self, tag, attrs):
        self._implied_end(tag)
        self._add(Node(tag, self._at(), raw=self.get_starttag_text(), attrs=attrs), "start", tag not in VOID)

    def handle_startendtag(self, tag, attrs):
        self._add(Node(tag, self._at(), raw=self.get_starttag_text(), attrs=attrs), "start")

    def handle_endtag(self, tag):
        at = self._at()
        if tag not in [n.tag for n in self.stack[1:]]:
            self._add(Node("#keep", at))
            self.warnings.append(f"</{tag}> at character {at} closes no open element: kept where it was")
            return
        while self.stack[-1].tag != tag:
            self._close(self.stack.pop(), f"before </{tag}> at character {at}")
        self.events.append((at, self.stack.pop(), "end"))

    def _implied_end(self, tag: str) -> None:
        """Close the open elements that ``tag``'s start ends in HTML (``<li>`` an open ``li``, a block a ``p``)."""
        ends, scope = IMPLIES_END.get(tag, (set(), set()))
        if tag in BLOCK and tag != "br":
            ends, scope = ends | {"p"}, scope | {"div", "td", "th", "li", "blockquote", "section", "article"}
        for k in range(len(self.stack) - 1, 0, -1):
            if self.stack[k].tag in ends:
                while len(self.stack) > k:
                    self._close(self.stack.pop(), f"before <{tag}>")
                return
            if self.stack[k].tag in scope:
                return

    def _close(self, node: Node, where: str) -> None:
        if node.tag not in OPTIONAL_END:
            self.warnings.append(f"<{node.tag}> at character {node.begin} is not closed {where}: it ends there")

    def handle_data(self, data):
        self._add(Node("", self._at()))

    def handle_entityref(self, name):
        self._add(Node("#entity", self._at()))

    def handle_comment(self, data):
        self._add(Node("#keep", self._at()))

    handle_charref = handle_entityref
    handle_decl = unknown_decl = handle_pi = handle_comment

    def tree(self) -> Node:
        """The root, every node's text as written (each event runs to where the next begins)."""
        self.close()
        while len(self.stack) > 1:
            self._close(self.stack.pop(), "by the end of the text")
        bounds = [at for at, _, _ in self.events[1:]] + [len(self.text)]
        for (at, node, kind), b in zip(self.events, bounds):
            if kind == "end":
                node.end_tag = self.text[at:b]
            elif kind == "raw":
                node.raw = self.text[at:b]
            node.end = b
        return self.root


def parse_tree(text: str, warnings: list[str] | None = None) -> Node:
    """The fragment's nodes under a root (each fault of form read through added to ``warnings``)."""
    parser = _Tree(text)
    parser.feed(text)
    root = parser.tree()
    if warnings is not None:
        warnings += parser.warnings
    return root


def primary_language(tag: str | None) -> str:
    """A language tag's primary subtag in small letters: ``en-GB``, ``en_US``, ``EN`` -> ``en``."""
    return re.split(r"[-_]", (tag or "").strip())[0].lower()


def mark_foreign(node: Node, source: str, inherited: str = "", found: list | None = None) -> bool:
    """Mark each element whose ``lang`` (inherited, its primary subtag) is not ``source`` and that holds nothing
    in ``source`` as ``foreign``: a quotation in another language, or a part translated already (``<p
    lang="fr">`` in a page given to an English model); ``found`` gets each. The ``<html>`` element's own
    ``lang`` is not read (a page's is often a template's; translate-file reads the page's text for its language).
    Returns whether ``node`` holds text in ``source``."""
    element = bool(node.tag) and not node.tag.startswith("#")
    attrs = dict(node.attrs) if element and node.tag != "html" else {}
    lang = primary_language(attrs.get("lang") or attrs.get("xml:lang")) or inherited
    holds = [mark_foreign(c, source, lang, found) for c in node.children]
    if lang and lang != source and not any(holds):
        node.foreign = element
        if element and found is not None:
            found.append(node)
        return False
    return not lang or lang == source or any(holds)


def bare_ampersand(raw: str) -> bool:
    """Whether an entity as written is no entity but an ampersand before letters (``&T`` of ``AT&T``),
    which a browser shows as it is written."""
    return html.unescape(raw) == raw and not raw.endswith(";")


def whole(node: Node, text: str) -> str:
    """A node as the source wrote it, its content and end tag included."""
    return text[node.begin:last_offset(node)]


def last_offset(node: Node) -> int:
    """Where a node ends in the source, its content and end tag included."""
    return max([node.end] + [last_offset(c) for c in node.children])
