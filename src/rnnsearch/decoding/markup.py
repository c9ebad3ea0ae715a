"""Markup through the alignments (``translate --markup xml|html``): the tags are taken out of the
source, the plain text is translated, and each element is put back around the target words aligned to
its source words, as production systems carry markup with word alignments (the Bergamot translator's
HTML mode).

An element (``<b>...</b>``) covers the run of target words that best answers to its source words
through the alignment (the alignment head's where the model has one, else the attention): the words
mostly aligned to them, and they mostly aligned to those words, without a punctuation mark at an edge
where its source words have none, never inside a word (``decoding/placement.py``); it is kept inside its
parent's words and apart from its siblings' (in a stretch they leave free), so the output nests as the
input did. An element around no source word, a self-closing tag (``<br/>``, HTML's void elements), a
placeholder (``<x id="1"/>``) and what XML keeps as written (a comment, a processing instruction, a CDATA
section: never translated) go before the first target word aligned at or after their source
position. Every tag that comes in comes out, as it was written
(attributes untouched); the text is escaped (&, <, >).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import numpy as np

from rnnsearch.data.tokenize import SPACE_PIECE
from rnnsearch.decoding.placement import place, punctuation, token_spans, word_edges

TAG = re.compile(r"<(/?)([A-Za-z_][\w:.-]*)((?:\s[^<>]*?)?)\s*(/?)>")
KEPT = re.compile(r"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>", re.S)  # a comment, processing instruction, CDATA
MARKUP = re.compile(f"(?P<kept>{KEPT.pattern})|{TAG.pattern}", re.S)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
MODES = ("xml", "html")


class MarkupError(ValueError):
    """Markup that cannot be carried: one line saying where."""


@dataclass
class Element:
    start_tag: str                  # as written
    name: str
    start: int                      # character offsets in the plain text
    end: int = -1
    end_tag: str | None = None      # None: self-closing (or void) element
    children: list = field(default_factory=list)
    left: bool = False              # a self-closing tag written right after a word (no space): kept after it
    space: bool = False             # it stands for the spacing where it is (``&nbsp;``): written instead of it
    spaced: bool = False            # a tag of no words the source wrote between spaces: a space after it too
    spaced_before: bool = False     # one the source wrote after a space: a space before it where the output has none
    target: tuple[int, int] = (0, 0)  # the target words it covers (its position when empty)


def parse(text: str, mode: str = "xml") -> tuple[str, list[Element]]:
    """The plain text (entities unescaped) and the top-level elements; MarkupError when not well-formed."""
    plain, root, stack, pos = [], Element("", "", 0), [], 0
    length = 0
    for m in MARKUP.finditer(text):
        length += _text(text[pos:m.start()], plain, pos, mode)
        closing, name, self_closing = m.group(2), m.group(3) or "#kept", m.group(5) or m.group("kept")
        parent = stack[-1] if stack else root
        if closing:
            if not stack or stack[-1].name != name:
                raise MarkupError(f"</{name}> at character {m.start()} closes "
                                  f"{'<' + stack[-1].name + '>' if stack else 'no open element'}")
            element = stack.pop()
            element.end, element.end_tag = length, m.group(0)
        elif self_closing or (mode == "html" and name.lower() in VOID):
            left = bool(plain) and bool(plain[-1][-1:].strip())
            spaced = not left and text[m.end():m.end() + 1].isspace()
            parent.children.append(Element(m.group(0), name, length, length, left=left, spaced=spaced,
                                           spaced_before=bool(plain) and not left))
            if plain and plain[-1][-1:].strip() and text[m.end():m.end() + 1].strip():
                plain.append(" ")  # <br/> between two words: they stay two words
                length += 1
        else:
            element = Element(m.group(0), name, length)
            parent.children.append(element)
            stack.append(element)
        pos = m.end()
    _text(text[pos:], plain, pos, mode)
    if stack:
        raise MarkupError(f"<{stack[-1].name}> is never closed")
    return "".join(plain), root.children


XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}  # the named entities XML defines (others: &#...; or the character)
NAMED = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")


def _text(segment: str, plain: list, where: int, mode: str = "xml") -> int:
    if "<" in segment or ">" in segment:
        at = where + min(i for i in (segment.find("<"), segment.find(">")) if i >= 0)
        if segment.startswith(("<!--", "<?", "<![CDATA["), at - where):
            raise MarkupError(f"the comment, processing instruction or CDATA section at character {at} is never "
                              "closed (-->, ?>, ]]>)")
        raise MarkupError(f"a '<' or '>' that is not part of a tag at character {at} (write &lt; or &gt;)")
    undefined = next((m for m in NAMED.finditer(segment) if m.group(1) not in XML_ENTITIES), None) if mode == "xml" else None
    if undefined is not None:
        raise MarkupError(f"&{undefined.group(1)}; at character {where + undefined.start()} is not an XML entity "
                          "(XML has &amp; &lt; &gt; &quot; &apos; and &#...;): write the character itself, or read "
                          "the line as HTML (--markup html)")
    plain.append(html.unescape(segment))
    return len(plain[-1])


def render(elements: list[Element], tokens: list[str], text: str, entities: dict[str, list[str]] | None = None) -> str:
    """The detokenised ``text`` of ``tokens`` with the placed elements' tags put back, the text escaped
    (``entities``: a character -> the entities the source wrote it as, in order)."""
    spans = token_spans(text, tokens)
    events: dict[int, list[tuple[bool, str, bool, bool]]] = {}  # boundary -> (kept after the word before, tag,
    # it stands for the spacing there, a space before it where the output has none), in order

    def walk(nodes):
        for node in sorted(nodes, key=lambda n: (n.target[0], n.target[1] > n.target[0])):
            a, b = node.target
            b += b > a and b < len(tokens) and tokens[b - 1] == SPACE_PIECE  # a lone "▁" goes with the unit after it
            tag = node.start_tag + " " * (node.spaced and a < len(tokens))
            events.setdefault(a, []).append((node.left, tag, node.space, node.spaced_before and a > 0))
            walk(node.children)
            if node.end_tag is not None:
                events.setdefault(b, []).append((True, node.end_tag, False, False))
    walk(elements)
    _after_space_pieces(events, tokens)
    queues = {c: list(raws) for c, raws in (entities or {}).items()}

    def escaped(s: str) -> str:
        s = html.escape(s, quote=False)
        return "".join(_entity(c, queues) for c in s) if queues else s
    out, cursor = [], 0
    for k in range(len(tokens) + 1):
        start = spans[k][0] if k < len(tokens) else len(text)
        tags = events.get(k, [])
        closes = next((n for n, (left, _, _, _) in enumerate(tags) if not left), len(tags))
        gap = text[cursor:start]
        if any(space for _, _, space, _ in tags) and not gap.strip():
            gap = ""
        if gap and gap.isspace() and any(t.endswith(" ") for _, t, _, _ in tags[closes:]):
            gap = gap[:-1]  # the source's spaces around a tag of no words: the one after it goes with the tag
        if not gap and closes < len(tags) and tags[closes][3] and out and out[-1][-1:] not in "'\u2019":
            gap = " "
        out += [t for _, t, _, _ in tags[:closes]] + [escaped(gap)] + [t for _, t, _, _ in tags[closes:]]
        if k < len(tokens):
            out.append(escaped(text[start:spans[k][1]]))
            cursor = spans[k][1]
    return "".join(out)


def _after_space_pieces(events: dict[int, list], tokens: list[str]) -> None:
    """A start tag placed before a subword output's space piece (SentencePiece's "▁" alone, before a slot
    or a word it writes apart) goes after it, so that the space stays outside the element (``in <i>2019</i>``,
    not ``in<i> 2019</i>``), in place. (An end tag placed after such a piece goes after its unit: ``render``.)"""
    for k, token in enumerate(tokens):
        starts = [e for e in events.get(k, []) if not e[0]]
        if token != SPACE_PIECE or not starts:
            continue
        events[k] = [e for e in events[k] if e[0]]
        later = events.get(k + 1, [])
        ends = next((n for n, e in enumerate(later) if not e[0]), len(later))
        events[k + 1] = later[:ends] + starts + later[ends:]


def _entity(char: str, queues: dict[str, list[str]]) -> str:
    """``char`` as the source wrote it: its next entity in the source's order (the last one again once
    they are used up), or itself."""
    written = queues.get(char)
    if not written:
        return char
    return written.pop(0) if len(written) > 1 else written[0]


def transfer(source: str, mode: str, src_units: list[str], translation, alignment: np.ndarray) -> str:
    """The translation of ``source``'s plain text with ``source``'s markup put back: ``alignment``
    (T + 1, S + 1) rows of the output's words over the source units (</s> last in both)."""
    plain, elements = parse(source, mode)
    return put_back(plain, elements, src_units, translation, alignment)


def put_back(plain: str, elements: list[Element], src_units: list[str], translation, alignment: np.ndarray,
             entities: dict[str, list[str]] | None = None, labels=None, edges: np.ndarray | None = None) -> str:
    """The translation of ``plain`` with ``elements`` (parsed from its source) placed through
    ``alignment`` (T + 1, S + 1), a tag never inside a target word (``edges``: ``word_edges``'s by
    default); ``labels``: decoding/labels.Labels, spans read as labels'."""
    src_spans = token_spans(plain, src_units)
    tokens = translation.tokens
    marks = punctuation(src_units), punctuation(tokens)
    edges = word_edges(tokens, translation.text) if edges is None else edges
    place(elements, src_spans, alignment[: len(tokens), : len(src_units)], 0, len(tokens), marks, edges, labels,
          getattr(translation, "copies", None))
    return render(elements, tokens, translation.text, entities)


def alignment_of(translator, translation) -> np.ndarray:
    """The rows (T + 1, S + 1) to place tags by: the alignment head's where the model (an ensemble's first)
    has one, else the translation's attention; a model without attention (RNNencdec) has none to place them by."""
    from rnnsearch.decoding.unk import as_written, head_model, head_rows
    src_units = translation.source_tokens[:-1]
    if head_model(translator) is not None:  # an ensemble's: its first member's head, over the output as written
        ids = translator.tgt_codec.vocab.encode(as_written(translation))
        return head_rows(translator, [src_units], [ids])[0]
    if translation.attention is None:
        raise MarkupError("markup is placed through the alignments; this model has no attention (an RNNencdec)")
    return translation.attention
