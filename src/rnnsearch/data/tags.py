"""Whether a text's angle brackets are HTML: ``html_tags(text)``. A PO msgid or a memory's segment may hold HTML
(``Click <a href="x.html">here</a>``), or brackets that are no markup (``<members@example.org>``, ``x<b and c>d``,
``Usage: report <file> <output>``), which read as HTML lost their text. It is HTML where every tag names an HTML
element, each attribute has a value (or is one of HTML's few boolean ones), and each element that is not void
is closed as often as it is opened.
"""
from __future__ import annotations

import re

ELEMENTS = frozenset(
    "a abbr acronym address area article aside audio b bdi bdo big blockquote body br button caption center cite "
    "code col colgroup data dd del details dfn dialog div dl dt em embed fieldset figcaption figure font footer "
    "form h1 h2 h3 h4 h5 h6 head header hr html i iframe img input ins kbd label legend li link main mark menu meta "
    "meter nav noscript object ol optgroup option output p param picture pre progress q rp rt ruby s samp script "
    "section select small source span strike strong style sub summary sup table tbody td template textarea tfoot "
    "th thead time title tr track tt u ul var video wbr".split())
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
BOOLEAN = frozenset("checked disabled hidden multiple readonly required selected open".split())
TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)((?:\s+[^\s<>=/]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s<>\"']+))?)*)\s*(/?)>")
ATTR = re.compile(r"\s+([^\s<>=/]+)(\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s<>\"']+))?")


def html_tags(text: str) -> bool:
    """Whether ``text`` holds tags and every one of them is HTML (see the module's docstring)."""
    tags = list(TAG.finditer(text))
    if not tags:
        return False
    opened: dict[str, int] = {}
    for m in tags:
        closing, name, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if name not in ELEMENTS or closing and attrs.strip():
            return False
        if any(not value and key.lower() not in BOOLEAN for key, value in ATTR.findall(attrs)):
            return False
        if name not in VOID and not m.group(4):
            opened[name] = opened.get(name, 0) + (-1 if closing else 1)
    return not any(opened.values())
