"""Markup through the alignments (``translate --markup xml|html``): the tags are taken out of the
source, the plain text is translated, and each element is put back around the target words aligned to
its source words, as production systems carry markup with word alignments (the Bergamot translator's
HTML mode).

An element (``<b>...</b>``) covers the run of target words that best answers to its source words
through the alignment (the alignment head's where the model has one, else the attention): the words
mostly aligned to them, and they mostly aligned to those words (``_best_span``), without a punctuation
mark at an edge where its source words have none (``_without_stray_marks``); it is kept inside its
parent's words and apart from its siblings' (in a stretch they leave free), so the output nests as the
input did. An element around no source word, a self-closing tag (``<br/>``, HTML's void elements) and a
placeholder (``<x id="1"/>``) go before the first target word aligned at or after their source
position. Every tag that comes in comes out, as it was written
(attributes untouched); the text is escaped (&, <, >).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import numpy as np

TAG = re.compile(r"<(/?)([A-Za-z_][\w:.-]*)((?:\s[^<>]*?)?)\s*(/?)>")
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
    target: tuple[int, int] = (0, 0)  # the target words it covers (its position when empty)


def parse(text: str, mode: str = "xml") -> tuple[str, list[Element]]:
    """The plain text (entities unescaped) and the top-level elements; MarkupError when not well-formed."""
    plain, root, stack, pos = [], Element("", "", 0), [], 0
    length = 0
    for m in TAG.finditer(text):
        length += _text(text[pos:m.start()], plain, m.start())
        closing, name, self_closing = m.group(1), m.group(2), m.group(4)
        parent = stack[-1] if stack else root
        if closing:
            if not stack or stack[-1].name != name:
                raise MarkupError(f"</{name}> at character {m.start()} closes "
                                  f"{'<' + stack[-1].name + '>' if stack else 'no open element'}")
            element = stack.pop()
            element.end, element.end_tag = length, m.group(0)
        elif self_closing or (mode == "html" and name.lower() in VOID):
            left = bool(plain) and bool(plain[-1][-1:].strip())
            parent.children.append(Element(m.group(0), name, length, length, left=left))
            if plain and plain[-1][-1:].strip() and text[m.end():m.end() + 1].strip():
                plain.append(" ")  # <br/> between two words: they stay two words
                length += 1
        else:
            element = Element(m.group(0), name, length)
            parent.children.append(element)
            stack.append(element)
        pos = m.end()
    _text(text[pos:], plain, pos)
    if stack:
        raise MarkupError(f"<{stack[-1].name}> is never closed")
    return "".join(plain), root.children


def _text(segment: str, plain: list, where: int) -> int:
    if "<" in segment or ">" in segment:
        raise MarkupError(f"a '<' or '>' that is not part of a tag near character {where} (write &lt; or &gt;)")
    plain.append(html.unescape(segment))
    return len(plain[-1])


def token_spans(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """Each token's character span in ``text`` (found in order; SentencePiece's ▁ dropped); a token not
    found where expected gets an empty span at the current position."""
    spans, cursor = [], 0
    for token in tokens:
        piece = token.replace("\u2581", "")
        at = text.find(piece, cursor) if piece else -1
        if at < 0 or text[cursor:at].strip():
            spans.append((cursor, cursor))
            continue
        spans.append((at, at + len(piece)))
        cursor = at + len(piece)
    return spans


COLUMNS = 0.25  # _best_span: the weight of the source units' side (chosen on WPT 2003 sentences 1-223)


def punctuation(tokens: list[str]) -> list[bool]:
    """Which tokens are punctuation marks alone (no letter or digit; SentencePiece's ▁ aside)."""
    return [bool(t.replace("\u2581", "")) and not any(c.isalnum() for c in t) for t in tokens]


def place(elements: list[Element], src_spans: list[tuple[int, int]], soft: np.ndarray, lo: int, hi: int,
          marks: tuple[list[bool], list[bool]]) -> None:
    """Give each element (and its children) its target words [a, b) within [lo, hi): ``soft`` (T, S)
    holds each target word's alignment over the source units (rows sum to at most 1); ``marks``: which
    source units and which target words are punctuation (``punctuation``)."""
    aligned = soft.argmax(1) if soft.size else np.zeros(len(soft), dtype=int)  # (T,) each word's source unit
    taken: list[tuple[int, int]] = []
    for element in elements:
        point = element.end_tag is None or element.end <= element.start  # no words of its own
        inside = [] if point else [j for j, (a, b) in enumerate(src_spans) if a < element.end and b > element.start]
        span = _best_span(soft, inside, _free(lo, hi, taken)) if inside else None
        if span is None:
            p = _position(element.start, src_spans, aligned, lo, hi, point and element.left)
            span = (p, p)
        else:
            span = _without_stray_marks(span, inside, *marks)
            taken.append(span)
        element.target = span
        place(element.children, src_spans, soft, *element.target, marks)


def _without_stray_marks(span: tuple[int, int], inside: list[int], src_marks: list[bool],
                         tgt_marks: list[bool]) -> tuple[int, int]:
    """``span`` without the punctuation marks at an edge where the element's source words have none
    (``<b>then</b>,`` -> ``<b>ensuite</b>,``), keeping one word at least."""
    c, d = span
    if not src_marks[inside[-1]]:
        while d - c > 1 and tgt_marks[d - 1]:
            d -= 1
    if not src_marks[inside[0]]:
        while d - c > 1 and tgt_marks[c]:
            c += 1
    return c, d


def _free(lo: int, hi: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of [lo, hi) that no sibling's span covers."""
    stretches, start = [], lo
    for a, b in sorted(taken):
        if a > start:
            stretches.append((start, min(a, hi)))
        start = max(start, b)
    return stretches + ([(start, hi)] if start < hi else [])


def _best_span(soft: np.ndarray, inside: list[int], stretches: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The target words [c, d), within one stretch, that best answer to the source units ``inside``:
    the most of sum_t (2 m_t - 1) + COLUMNS sum_s (2 n_s - 1), t over [c, d), s over ``inside``, m_t the
    share of word t's alignment on those units, n_s the share of unit s's (its column, normalised) on
    [c, d): the words mostly aligned inside, and the units mostly aligned there (the earliest such
    span of equal score; None: no target word)."""
    on = soft[:, inside]  # (T, I)
    rows = on.sum(1)  # (T,) m_t
    columns = on / np.maximum(on.sum(0, keepdims=True), 1e-9)  # (T, I)
    best, span = -np.inf, None
    for lo, hi in stretches:
        r = np.concatenate([[0.0], np.cumsum(2 * rows[lo:hi] - 1)])  # (W + 1,)
        c = np.concatenate([np.zeros((1, len(inside))), np.cumsum(columns[lo:hi], 0)])  # (W + 1, I)
        score = (r[None, :] - r[:, None]) + COLUMNS * (2 * (c[None, :, :] - c[:, None, :]) - 1).sum(2)  # (W + 1, W + 1)
        score[np.tril_indices(hi - lo + 1)] = -np.inf  # d > c only
        at = int(score.argmax())
        if score.flat[at] > best:
            best, span = score.flat[at], (lo + at // (hi - lo + 1), lo + at % (hi - lo + 1))
    return span


def _position(char: int, src_spans, aligned: np.ndarray, lo: int, hi: int, left: bool = False) -> int:
    """Before the first target word in [lo, hi) aligned to a source word at or after ``char``; ``left``:
    after the last one aligned to the source word that ends there, where there is one."""
    if left:
        before = [j for j, (_, b) in enumerate(src_spans) if b == char]
        words = [i for i in range(lo, hi) if before and aligned[i] == before[-1]]
        if words:
            return max(words) + 1
    after = [j for j, (a, _) in enumerate(src_spans) if a >= char]
    first = after[0] if after else len(src_spans)
    return next((i for i in range(lo, hi) if aligned[i] >= first), hi)


def render(elements: list[Element], tokens: list[str], text: str) -> str:
    """The detokenised ``text`` of ``tokens`` with the placed elements' tags put back, the text escaped."""
    spans = token_spans(text, tokens)
    events: dict[int, list[tuple[bool, str]]] = {}  # boundary -> (kept after the word before, tag), in order

    def walk(nodes):
        for node in sorted(nodes, key=lambda n: (n.target[0], n.target[1] > n.target[0])):
            a, b = node.target
            events.setdefault(a, []).append((node.left, node.start_tag))
            walk(node.children)
            if node.end_tag is not None:
                events.setdefault(b, []).append((True, node.end_tag))
    walk(elements)
    out, cursor = [], 0
    for k in range(len(tokens) + 1):
        start = spans[k][0] if k < len(tokens) else len(text)
        tags = events.get(k, [])
        closes = next((n for n, (left, _) in enumerate(tags) if not left), len(tags))
        gap = text[cursor:start]
        out += [t for _, t in tags[:closes]] + [html.escape(gap, quote=False)] + [t for _, t in tags[closes:]]
        if k < len(tokens):
            out.append(html.escape(text[start:spans[k][1]], quote=False))
            cursor = spans[k][1]
    return "".join(out)


def transfer(source: str, mode: str, src_units: list[str], translation, alignment: np.ndarray) -> str:
    """The translation of ``source``'s plain text with ``source``'s markup put back: ``alignment``
    (T + 1, S + 1) rows of the output's words over the source units (</s> last in both)."""
    plain, elements = parse(source, mode)
    src_spans = token_spans(plain, src_units)
    tokens = translation.tokens
    marks = punctuation(src_units), punctuation(tokens)
    place(elements, src_spans, alignment[: len(tokens), : len(src_units)], 0, len(tokens), marks)
    return render(elements, tokens, translation.text)


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


def plain_texts(texts: list[str], mode: str, warn, refused: set[int] | None = None) -> list[str]:
    """Each line's plain text for the search ('' where its markup is not well-formed, with a warning
    naming the line, and its index added to ``refused``)."""
    plain = []
    for n, text in enumerate(texts, 1):
        try:
            plain.append(parse(text, mode)[0])
        except MarkupError as exc:
            warn(f"line {n}: not translated: {exc}")
            plain.append("")
            if refused is not None:
                refused.add(n - 1)
    return plain
