"""What tags around labels follow, for placing a source's tags in a translation the model did not write
(``rnnsearch transfer-tags``, analysis/transfer_tags.py, through ``decoding/placement.place``): the span
an element's alignment gives, read as translators tag labels, terms and sentences (chosen on the
Salesforce help strings 1001-2000: docs/results/transfer_tags.md)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Labels:
    """What tags around labels follow, for placing a source's tags in a given translation
    (analysis/transfer_tags.py): each unit on either side, whether it is one of its vocabulary's most
    frequent words (an article, a preposition: ``light``) and whether it begins with a capital."""
    src_light: list[bool]
    tgt_light: list[bool]
    src_capital: list[bool]
    tgt_capital: list[bool]
    src_words: list[str]  # the units as written, to find those the translation keeps verbatim
    tgt_words: list[str]
    src_sentences: list[int] = field(default_factory=list)  # each unit's sentence (``sentence_numbers``)
    tgt_sentences: list[int] = field(default_factory=list)
    placed: dict = field(default_factory=dict)  # an element's source words -> the target words it went around
    beads: list | None = None  # the sentences paired (``sentence_beads``; [] where they cannot be), once read

    def remember(self, inside: list[int], span: tuple[int, int]) -> None:
        """The target words an element of the source units ``inside`` went around, for a later one of the same."""
        if span[1] > span[0]:
            self.placed.setdefault(tuple(self.src_words[j] for j in inside), tuple(self.tgt_words[span[0]:span[1]]))


def as_label(span: tuple[int, int], inside: list[int], labels: Labels, tgt_marks: list[bool], edges: np.ndarray,
             soft: np.ndarray, hi: int, taken: list[tuple[int, int]]) -> tuple[int, int]:
    """``span`` read as a label's (``label_edges``), then ended at a full stop where the element's source
    words end a sentence (``sentence_end``) unless that reaches into a sibling's words (``taken``)."""
    read = label_edges(span, inside, labels, tgt_marks, edges, soft)
    span = read if read[1] <= hi and _clear(read, taken) else span
    ended = sentence_end(span, inside, labels, edges, hi)
    return ended if _clear(ended, taken) else span


def _clear(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    """Whether ``span`` reaches into none of the siblings' words (``taken``)."""
    return not any(a < span[1] and span[0] < b for a, b in taken)


def _past_frequent(k: int, labels: Labels, tgt_marks: list[bool]) -> int:
    """The first target word from k on that is not a frequent word (or a mark, or the end)."""
    while k < len(tgt_marks) and labels.tgt_light[k] and not tgt_marks[k]:
        k += 1
    return k


def label_edges(span: tuple[int, int], inside: list[int], labels: Labels, tgt_marks: list[bool],
                edges: np.ndarray, soft: np.ndarray) -> tuple[int, int]:
    """``span`` read as a label's, as translators tag them: without frequent words at an edge where the
    element's source words have none there (``la <b>case</b>``, not ``<b>la case</b>``); where the
    element begins with a capital inside its sentence, from the span's first capitalised word
    (``la case <b>Recherche rapide</b>``), or from one up to three words before it that no mark
    separates (``<b>Rendre publique</b>`` for "Make Public", ``<b>Note sur le compte</b>`` for "Account
    Note"), or from the span's own first word where that begins a sentence (``<ph>Les utilisateurs
    ...</ph>``), but not from a sentence's first word where the element's words do not begin theirs
    (``Appuyez sur <kbd>Entrée</kbd>``, not ``<kbd>Appuyez sur Entrée</kbd>``); and on to the next word
    that is not frequent where that word is aligned to the element's words most (``<b>Suivi de fil</b>``
    for "Feed Tracking")."""
    c, d = span
    if not labels.src_light[inside[0]]:
        while d - c > 1 and labels.tgt_light[c] and edges[0][c + 1]:
            c += 1
    if not labels.src_light[inside[-1]]:
        while d - c > 1 and labels.tgt_light[d - 1] and edges[1][d - 1]:
            d -= 1
    if inside[0] > 0 and labels.src_capital[inside[0]] and not labels.tgt_capital[c]:
        later = next((k for k in range(c + 1, d) if labels.tgt_capital[k] and edges[0][k]), None)
        earlier = next((k for k in (c - 1, c - 2, c - 3) if k > 0 and labels.tgt_capital[k] and edges[0][k]
                        and not any(tgt_marks[j] for j in range(k, c))), None)
        c = later if later is not None else earlier if earlier is not None else c
        if labels.tgt_capital[span[0]] and opens_sentence(labels.tgt_words, span[0]):
            c = span[0]  # the frequent word left out is a sentence's first: the element begins the sentence
    elif (inside[0] > 0 and labels.src_capital[inside[0]] and opens_sentence(labels.tgt_words, c)
          and not opens_sentence(labels.src_words, inside[0])):  # a sentence's capital, not the label's
        c = next((k for k in range(c + 1, d) if labels.tgt_capital[k] and edges[0][k]), c)
    k = _past_frequent(d, labels, tgt_marks)
    if k < min(len(tgt_marks), len(soft)) and not tgt_marks[k] and int(soft[k].argmax()) in inside and edges[1][k + 1]:
        d = k + 1
    return _as_many_words(c, d, inside, labels, tgt_marks, edges)


def _as_many_words(c: int, d: int, inside: list[int], labels: Labels, tgt_marks: list[bool],
                   edges: np.ndarray) -> tuple[int, int]:
    """A title-case label (``Log Filters``) whose span holds fewer words that are not frequent than the
    label has, on over a frequent word and the word after it (``Filtres de journaux``)."""
    content = [j for j in inside if not labels.src_light[j]]
    if not content or not all(labels.src_capital[j] for j in content):
        return c, d
    while sum(not labels.tgt_light[k] and not tgt_marks[k] for k in range(c, d)) < len(content):
        k = _past_frequent(d, labels, tgt_marks)
        if k == d or k >= len(tgt_marks) or tgt_marks[k] or labels.tgt_capital[k] or not edges[1][k + 1]:
            break
        d = k + 1
    return c, d


def verbatim(inside: list[int], labels: Labels, stretches: list[tuple[int, int]], edges: np.ndarray,
              soft: np.ndarray) -> tuple[int, int] | None:
    """The run of target words written exactly as the element's source words, where the translation
    keeps them (a name, a number, a product term: ``<b>Essentials</b> Edition``), or as the target words
    an earlier element of the same source words went around (a term translated the same each time);
    within a free stretch and between words; of several, the one most aligned to the element's words.
    None where there is none, or where the element holds only frequent words (which a translation may
    write for other reasons)."""
    if all(labels.src_light[j] for j in inside):
        return None
    words = tuple(labels.src_words[j] for j in inside)
    if not any(c.isalnum() for w in words for c in w):
        return None
    for run in (words, labels.placed.get(words)):
        n = len(run or ())
        runs = [(c, c + n) for lo, hi in stretches for c in range(lo, hi - n + 1)
                if n and tuple(labels.tgt_words[c:c + n]) == run and edges[0][c] and edges[1][c + n]]
        if runs:
            return max(runs, key=lambda r: soft[r[0]:r[1], inside].sum())
    return None


def with_gloss(span: tuple[int, int], inside: list[int], labels: Labels, hi: int,
                taken: list[tuple[int, int]]) -> tuple[int, int]:
    """A label kept in the source language with its translation in brackets just after it, as software
    is localised (``<b>Clear Test Data (Effacer les données de test)</b>``): the brackets go with it, where
    the element's source words have none, none follow them, and they end before ``hi`` and any sibling's
    words."""
    c, d = span
    words = labels.tgt_words
    after = labels.src_words[inside[-1] + 1:inside[-1] + 2]
    if d >= hi or words[d] != "(" or any(labels.src_words[j] in ("(", ")") for j in inside) or after == ["("]:
        return span  # brackets of the source's own (``<codeph>$count</codeph> (OData 4.0 only)``) stay outside
    close = next((k for k in range(d + 1, hi) if words[k] in ("(", ")")), None)
    if close is None or words[close] != ")" or not _clear((d, close + 1), taken):
        return span
    return c, close + 1


FULL_STOPS = {".", "!", "?"}


def opens_sentence(words: list[str], k: int) -> bool:
    """Whether unit k begins a sentence: the first, or one after a full stop."""
    return k == 0 or words[k - 1] in FULL_STOPS


def sentence_end(span: tuple[int, int], inside: list[int], labels: Labels, edges: np.ndarray,
                  hi: int) -> tuple[int, int]:
    """An element whose source words end a sentence (``<ph>... personnels.</ph>``) ends at the end of one:
    after its span's last full stop where words follow it inside the span, or on to a full stop just after
    it (before ``hi``, its parent's end)."""
    if labels.src_words[inside[-1]] not in FULL_STOPS:
        return span
    c, d = span
    words = labels.tgt_words
    if words[d - 1] in FULL_STOPS:
        return span
    stops = [k for k in range(c + 1, d - 1) if words[k] in FULL_STOPS and edges[1][k + 1]]
    if stops:
        return c, stops[-1] + 1
    if d < hi and words[d] in FULL_STOPS and edges[1][d + 1]:
        return c, d + 1
    return span


CLOSING = "\"'\u00bb\u201d\u2019)]"  # what may follow a sentence's full stop inside it (``réessayez. »``)


def sentence_starts(text: str) -> list[int]:
    """Where each stretch of ``text`` read as a sentence after the first begins: after a full stop (its
    closing quotes and brackets with it, ``réessayez. »``) before a capital, spaced or not; after a colon or
    semicolon written against a capital (``activée :Elle``); and where a capital follows a small letter
    (``e-mailNe pas appeler``): where a list's or paragraph's tags were taken out."""
    starts = []
    for k, ch in enumerate(text[:-1]):
        if ch.islower() and text[k + 1].isupper():
            starts.append(k + 1)
            continue
        if ch not in ".!?:;" or text[k + 1] in ".!?":
            continue
        end = k + 1
        while ch in ".!?" and end < len(text) and (text[end] in CLOSING or (
                text[end] == " " and text[end + 1:end + 2] in ("\u00bb", "\u201d"))):
            end += 1
        begin = end + (len(text[end:]) - len(text[end:].lstrip()))
        opener = begin < len(text) and text[begin] in "\"\u00ab\u201c"
        if text[begin + opener:begin + opener + 1].isupper() and (begin == end or ch in ".!?"):
            starts.append(begin)
    return starts


def sentence_numbers(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The sentence (``sentence_starts``) of each unit of ``text`` at the character ``spans``."""
    starts = sentence_starts(text)
    numbers = [bisect.bisect_right(starts, a) for a, _ in spans]
    return [int(k) for k in np.unique(numbers, return_inverse=True)[1]]  # numbered on: none without a unit


BEADS = ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1))  # sentences on each side that translate each other
UNEVEN = 2.0  # the alignment mass a bead other than one sentence for one must gain to be chosen
LENGTH = 3.0  # and the mass a bead must gain per unit of |ln| of its length ratio against the line's


def sentence_beads(labels: Labels, soft: np.ndarray) -> list[tuple[int, int, int, int]] | None:
    """The two sides' sentences paired in order (Gale and Church's beads, scored by the alignment: the
    mass of ``soft`` (T, S) inside the beads, ``UNEVEN`` less for each bead other than one for one), as
    (source first, source end, target first, target end); None where they cannot be paired."""
    n, m = labels.src_sentences[-1] + 1, labels.tgt_sentences[-1] + 1
    src, tgt = np.array(labels.src_sentences), np.array(labels.tgt_sentences)
    mass = np.array([[soft[tgt == j][:, src == i].sum() for j in range(m)] for i in range(n)])  # (n, m)
    words = (np.bincount(src, minlength=n), np.bincount(tgt, minlength=m))  # each sentence's units
    overall = len(tgt) / len(src)
    best = np.full((n + 1, m + 1), -np.inf)
    best[0, 0], back = 0.0, {}
    for i in range(n + 1):
        for j in range(m + 1):
            for di, dj in BEADS:
                if i >= di and j >= dj and np.isfinite(best[i - di, j - dj]):
                    ratio = np.log(words[1][j - dj:j].sum() / words[0][i - di:i].sum() / overall)
                    score = (best[i - di, j - dj] + mass[i - di:i, j - dj:j].sum() - UNEVEN * ((di, dj) != (1, 1))
                             - LENGTH * abs(ratio))
                    if score > best[i, j]:
                        best[i, j], back[i, j] = score, (di, dj)
    if not np.isfinite(best[n, m]):
        return None
    beads, (i, j) = [], (n, m)
    while (i, j) != (0, 0):
        di, dj = back[i, j]
        beads.append((i - di, i, j - dj, j))
        i, j = i - di, j - dj
    return beads[::-1]


def whole_sentences(inside: list[int], labels: Labels, soft: np.ndarray, lo: int, hi: int,
                    taken: list[tuple[int, int]]) -> tuple[int, int] | None:
    """An element whose source words are whole sentences (``<ph>Les utilisateurs ... prévisions.</ph>``,
    a list's items) goes around the translation's sentences paired with them (``sentence_beads``), where
    its sentences begin and end beads and those lie within [lo, hi) (its parent's words), clear of its
    siblings' (``taken``); else None."""
    src, tgt = labels.src_sentences, labels.tgt_sentences
    if not src or not tgt or max(src[-1], tgt[-1]) == 0:
        return None
    first, last = src[inside[0]], src[inside[-1]]
    if (inside[0] > 0 and src[inside[0] - 1] == first) or (inside[-1] + 1 < len(src) and src[inside[-1] + 1] == last):
        return None  # it begins or ends inside a sentence
    if labels.beads is None:
        labels.beads = sentence_beads(labels, soft) or []
    beads = labels.beads
    opening = next((b for b in beads if b[0] == first), None)
    closing = next((b for b in beads if b[1] == last + 1), None)
    if opening is None or closing is None:
        return None
    c = next(k for k, t in enumerate(tgt) if t >= opening[2])
    d = max(k for k, t in enumerate(tgt) if t < closing[3]) + 1
    return (c, d) if lo <= c < d <= hi and _clear((c, d), taken) else None
