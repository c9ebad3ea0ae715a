"""Where each element of a line's markup goes in its translation (``decoding/markup.py`` reads and
writes the markup): the run of target words that best answers to its source words through the
alignment (``place``), never inside a word as the output writes it (``word_edges``), and no element
with words of its own left without one where a sibling can spare it (``_take_a_word``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rnnsearch.data.tokenize import SPACE_PIECE
from rnnsearch.decoding.labels import Labels, as_label, verbatim, whole_sentences, with_gloss

if TYPE_CHECKING:
    from rnnsearch.decoding.markup import Element

# typographic marks and the plain ones the model reads for them (text/typography.py): one for one
APOSTROPHES = str.maketrans("\u2019\u2018\u201b", "\'\'\'")  # typographic apostrophes as the straight one
PLAIN_MARKS = {**APOSTROPHES, **str.maketrans("\u201c\u201d\u201f\u2013\u2014\u2011", "\"\"\"---")}  # quotes, dashes,
# a non-breaking hyphen (non\u2011confidence: "non ‑")


def token_spans(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """Each token's character span in ``text`` (found in order, in any case: the text stage reads a
    capitalised first word in lower case; a typographic mark as the plain one it reads, ``PLAIN_MARKS``;
    SentencePiece's ▁ dropped); a token not found where expected gets an empty span at the current
    position."""
    plain = text.translate(PLAIN_MARKS)
    hay = plain.lower() if len(plain.lower()) == len(plain) else plain
    spans, cursor = [], 0
    for token in tokens:
        piece = token.replace(SPACE_PIECE, "").translate(PLAIN_MARKS)
        piece = piece.lower() if hay is not plain and len(piece.lower()) == len(piece) else piece
        at = hay.find(piece, cursor) if piece else -1
        if at < 0 or text[cursor:at].strip():
            spans.append((cursor, cursor))
            continue
        spans.append((at, at + len(piece)))
        cursor = at + len(piece)
    return spans


COLUMNS = 0.25  # _best_span: the weight of the source units' side (chosen on WPT 2003 sentences 1-223)


def punctuation(tokens: list[str]) -> list[bool]:
    """Which tokens are punctuation marks alone (no letter or digit; SentencePiece's ▁ aside)."""
    return [bool(t.replace(SPACE_PIECE, "")) and not any(c.isalnum() for c in t) for t in tokens]


def place(elements: list[Element], src_spans: list[tuple[int, int]], soft: np.ndarray, lo: int, hi: int,
          marks: tuple[list[bool], list[bool]], edges: np.ndarray | None = None, labels: Labels | None = None,
          copies: dict[int, int] | None = None) -> None:
    """Give each element (and its children) its target words [a, b) within [lo, hi): ``soft`` (T, S)
    holds each target word's alignment over the source units (rows sum to at most 1); ``marks``: which
    source units and which target words are punctuation (``punctuation``); ``edges`` (2, T + 1): the
    boundaries where an element may begin (and a tag of no words stand) and where one may end
    (``word_edges``; None: any); ``labels``: the span of an element is then also read as a label's
    (``decoding/labels.py``); ``copies``: each slot's source unit -> its copy's target word: an element around slots
    alone goes around their copies alone (``<b>%s</b>`` took the model's words beside it)."""
    edges = np.ones((2, len(soft) + 1), dtype=bool) if edges is None else edges
    aligned = soft.argmax(1) if soft.size else np.zeros(len(soft), dtype=int)  # (T,) each word's source unit
    taken: list[tuple[int, int]] = []
    starved, insides = [], {}
    for element in elements:
        point = element.end_tag is None or element.end <= element.start  # no words of its own
        inside = [] if point else [j for j, (a, b) in enumerate(src_spans) if a < element.end and b > element.start]
        insides[id(element)] = inside
        free = _free(lo, hi, taken)
        span = _best_span(soft, inside, free, edges) if inside else None
        copied = sorted(copies[j] for j in inside) if copies and inside and all(j in copies for j in inside) else []
        if copied and copied[-1] - copied[0] == len(copied) - 1 and any(
                a <= copied[0] and copied[-1] < b for a, b in free):  # its slots' copies, side by side
            span = (copied[0], copied[-1] + 1)
            taken.append(span)
            element.target = span
            if labels is not None:
                labels.remember(inside, span)
            continue
        kept = verbatim(inside, labels, free, edges, soft) if span and labels else None
        kept = (whole_sentences(inside, labels, soft, lo, hi, taken) if span and labels else None) or kept
        if kept is not None:
            kept = with_gloss(kept, inside, labels, hi, taken)
            taken.append(kept)
            span = kept
        elif span is None:
            p = _position(element.start, src_spans, aligned, lo, hi, point and element.left)
            while p > lo and not edges[0][p]:
                p -= 1
            span = (p, p)
            starved += [(element, inside)] if inside else []
        else:
            span = _without_stray_marks(span, inside, *marks, edges)
            span = as_label(span, inside, labels, marks[1], edges, soft, hi, taken) if labels is not None else span
            taken.append(span)
        if labels is not None:
            labels.remember(inside, span)
        element.target = span
    for _ in range(2 * len(starved)):  # a word taken from a sibling of one word leaves that one to take another
        if not starved:
            break
        element, inside = starved.pop(0)
        emptied = _take_a_word(element, inside, elements, insides, soft, lo, hi, edges)
        if emptied is not None:
            starved.append(emptied)
    for element in elements:
        place(element.children, src_spans, soft, *element.target, marks, edges, labels, copies)


def _take_a_word(element: Element, inside: list[int], siblings: list[Element], insides: dict, soft: np.ndarray,
                 lo: int, hi: int, edges: np.ndarray):
    """An element with words of its own left none by its siblings: the word in [lo, hi) most aligned
    to its words, taken from the sibling that holds it (which keeps the longer side), so that no
    element comes out empty. A sibling of that one word alone gives it up where that word is less
    its own than the element's; it is then returned (element, its source units), to take another."""
    if hi <= lo:
        return None
    w = lo + int(soft[lo:hi, inside].sum(1).argmax())
    a = max([k for k in range(lo, w + 1) if edges[0][k]] or [lo])  # the whole word
    b = min([k for k in range(w + 1, hi + 1) if edges[1][k]] or [hi])
    owner = next((s for s in siblings if s is not element and s.target[0] <= a and b <= s.target[1]
                  and s.target[1] > s.target[0]), None)
    if owner is None:
        return None
    if any(s is not element and s is not owner and s.target[0] < b and a < s.target[1] for s in siblings):
        return None
    c, d = owner.target
    element.target = (a, b)
    if (c, d) != (a, b):
        owner.target = (c, a) if a - c >= d - b else (b, d)
        return None
    theirs = insides[id(owner)]
    if not theirs or soft[a:b, theirs].sum() >= soft[a:b, inside].sum():
        element.target = (a, a)
        return None
    owner.target = (a, a)
    return owner, theirs


def _without_stray_marks(span: tuple[int, int], inside: list[int], src_marks: list[bool],
                         tgt_marks: list[bool], edges: np.ndarray) -> tuple[int, int]:
    """``span`` without the punctuation marks at an edge where the element's source words have none
    (``<b>then</b>,`` -> ``<b>ensuite</b>,``), keeping one word at least and its edges between words."""
    c, d = span
    if not src_marks[inside[-1]]:
        while d - c > 1 and tgt_marks[d - 1] and edges[1][d - 1]:
            d -= 1
    if not src_marks[inside[0]]:
        while d - c > 1 and tgt_marks[c] and edges[0][c + 1]:
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


def _best_span(soft: np.ndarray, inside: list[int], stretches: list[tuple[int, int]],
               edges: np.ndarray) -> tuple[int, int] | None:
    """The target words [c, d), within one stretch, that best answer to the source units ``inside``:
    the most of sum_t (2 m_t - 1) + COLUMNS sum_s (2 n_s - 1), t over [c, d), s over ``inside``, m_t the
    share of word t's alignment on those units, n_s the share of unit s's (its column, normalised) on
    [c, d): the words mostly aligned inside, and the units mostly aligned there (the earliest such
    span of equal score; c and d where ``edges`` allows; None: no target word)."""
    on = soft[:, inside]  # (T, I)
    rows = on.sum(1)  # (T,) m_t
    columns = on / np.maximum(on.sum(0, keepdims=True), 1e-9)  # (T, I)
    best, span = -np.inf, None
    for lo, hi in stretches:
        r = np.concatenate([[0.0], np.cumsum(2 * rows[lo:hi] - 1)])  # (W + 1,)
        c = np.concatenate([np.zeros((1, len(inside))), np.cumsum(columns[lo:hi], 0)])  # (W + 1, I)
        score = (r[None, :] - r[:, None]) + COLUMNS * (2 * (c[None, :, :] - c[:, None, :]) - 1).sum(2)  # (W + 1, W + 1)
        score[np.tril_indices(hi - lo + 1)] = -np.inf  # d > c only
        score[~edges[0][lo:hi + 1], :] = -np.inf  # c and d between words only
        score[:, ~edges[1][lo:hi + 1]] = -np.inf
        if not np.isfinite(score).any():
            continue
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


ELIDED = {"l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu", "presqu", "quelqu"}


def word_edges(tokens: list[str], text: str) -> np.ndarray:
    """(2, T + 1): at each boundary between output units, whether an element may begin there and
    whether one may end there: neither inside a word as ``text`` writes it (``aujourd'`` + ``hui``,
    ``don`` + ``'t``); after an elided word (``l'``, ``d'``) one may begin (``d'<a>Ottawa</a>``) but
    not end (``l'</b>ont``)."""
    spans = token_spans(text, tokens)
    edges = np.ones((2, len(tokens) + 1), dtype=bool)
    for k in range(1, len(tokens)):
        left, right = text[spans[k - 1][0]:spans[k - 1][1]], text[spans[k][0]:spans[k][1]]
        if not left or not right or spans[k - 1][1] != spans[k][0]:
            continue
        joined = (left[-1].isalnum() or left[-1] in "'\u2019") and (right[0].isalnum() or right[0] in "'\u2019")
        elided = left[-1] in "'\u2019" and left[:-1].lower() in ELIDED and right[0].isalnum()
        edges[0][k] = not joined or elided
        edges[1][k] = not joined
    return edges
