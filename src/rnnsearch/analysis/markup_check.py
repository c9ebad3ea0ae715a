"""What a translation did to an HTML fragment's markup: ``damage(source, output)`` lists each fault,
as a reader of the page would see it: a tag (with its attributes), comment or entity lost, added or
changed; an element that held text in the source left empty (list items merged into one); a tag
written inside a word where the source had none there. Read by ``experiments/text_html.py`` and the
tests of ``--markup html``."""
from __future__ import annotations

import html
import re
from collections import Counter

from rnnsearch.decoding.placement import ELIDED
from rnnsearch.text.html_tree import BLOCK, Node, bare_ampersand, parse_tree


def damage(source: str, output: str) -> list[str]:
    """The faults of ``output`` against ``source`` (none: the markup came through)."""
    src, out = parse_tree(source), parse_tree(output)
    faults = []
    a, b = Counter(_marks(src)), Counter(_marks(out))
    faults += [f"lost {m}" for m in sorted((a - b).elements())]
    faults += [f"added {m}" for m in sorted((b - a).elements())]
    held = _holding(src)
    faults += [f"{raw} emptied" for (raw, k), has in _holding(out).items() if held.get((raw, k)) and not has]
    inside = _inside_words(output, out) - _inside_words(source, src)
    faults += [f"{m} inside a word" for m in sorted(inside)]
    return faults


def _walk(node: Node):
    for child in node.children:
        yield child
        yield from _walk(child)


def _marks(root: Node) -> list[str]:
    """Every tag, comment and entity as written, but a letter's and the escapes of the text's own
    ``& < >`` (characters the model translates as the text's)."""
    out = []
    for n in _walk(root):
        if n.tag in ("#keep", "#entity"):
            out += [] if _letter(n.raw) else [n.raw]
        elif n.tag:
            out += [n.raw] + ([n.end_tag] if n.end_tag else [])
    return out


def _letter(raw: str) -> bool:
    """An entity the text reads as its own characters: a letter, ``& < >``, or a bare ampersand before
    letters (``AT&T``: no entity, text as a browser shows it)."""
    char = html.unescape(raw)
    return (len(char) == 1 and (char.isalpha() or char in "&<>")) or bare_ampersand(raw)


def _elements(root: Node) -> list[Node]:
    return [n for n in _walk(root) if n.tag and not n.tag.startswith("#")]


def _holding(root: Node) -> dict[tuple[str, int], bool]:
    """(start tag as written, its occurrence) -> whether that element holds text."""
    seen: Counter = Counter()
    out = {}
    for n in _elements(root):
        out[(n.raw, seen[n.raw])] = bool(_text(n).strip())
        seen[n.raw] += 1
    return out


def _text(node: Node) -> str:
    return "".join(c.raw if c.tag in ("", "#entity") else _text(c) for c in node.children)


def _inside_words(text: str, root: Node) -> set[str]:
    """The inline tags written between two letters or digits (a block's break the line)."""
    found = set()
    for n in _walk(root):
        if not n.tag or n.tag == "#entity" or n.tag in BLOCK:
            continue
        for at, raw in ((n.begin, n.raw), (n.end - len(n.end_tag), n.end_tag)):
            if raw and 0 < at and at + len(raw) < len(text) and _word_before(text[:at]) and \
                    text[at + len(raw)].isalnum():
                found.add(raw)
    return found


def _word_before(text: str) -> bool:
    """Whether ``text`` ends inside a word: a letter or digit, or an apostrophe after one that is not an
    elided article's (``aujourd'``, not ``l'``)."""
    if text[-1:].isalnum():
        return True
    word = re.search(r"(\w*)$", text[:-1]).group(1)
    return text[-1:] in "'\u2019" and bool(word) and word.lower() not in ELIDED
