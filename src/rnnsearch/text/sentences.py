"""Sentences of a line, and pieces of a sentence too long for the model.

A line is split with sentencex (maintained, ~300 languages), then two of its kinds of split are undone:
after a word that the Moses sentence splitter's nonbreaking-prefix list of the language holds (``M.`` and
``Mme`` in French, ``Dr.`` and ``No. 5`` in English; the lists ship with sacremoses; ``MORE_PREFIXES``
adds a few they lack, ``approx.``), and inside an item that must come through whole (a URL or amount:
``text/items.py``). On our own cases sentencex split ``M. Tremblay`` in French, which pysbd did not;
pysbd kept ``« C'est fini. » Puis`` as one sentence and took 140x longer; with the Moses lists sentencex
gets both right (tests/unit/test_text_sentences.py). A sentence whose end mark a bracket or quote closes
ends there when a capital follows (``(See the annex.) The``: sentencex does not split it). A field's
label at a sentence's start (``Name: John Smith``) is a segment of its own, and a tab ends a sentence
too: it separates fields (``Name:<TAB>John Smith``, columns pasted from a table), which the model read as
one sentence and cut short. Each sentence keeps the spacing after it, so joining the sentences gives the
line back.

A sentence longer than the model was trained on (``data.max_len`` units) is translated in pieces,
cut at the clause mark (; : , and dashes) nearest its middle, again while a piece is too long, and
in windows of the limit where a piece has no such mark (``pieces``).
"""
from __future__ import annotations

import re
from functools import cache

CLAUSE_MARKS = {";", ":", ",", "—", "–", "-"}


@cache
def _nonbreaking(lang: str) -> tuple[frozenset, frozenset]:
    """The Moses nonbreaking prefixes of ``lang``: (always, before a number only)."""
    from sacremoses.corpus import NonbreakingPrefixes
    try:
        words = list(NonbreakingPrefixes().words(lang))
    except (OSError, KeyError, ValueError):
        words = list(NonbreakingPrefixes().words("en"))
    always = frozenset(w for w in words if " " not in w and not w.startswith("#")) | MORE_PREFIXES.get(lang, frozenset())
    numeric = frozenset(w.split()[0] for w in words if w.endswith("#NUMERIC_ONLY#"))
    return always, numeric


MORE_PREFIXES = {  # abbreviations the Moses lists lack, which end no sentence (``It cost approx. $120M.`` was two)
    "en": frozenset({"approx", "est", "ext", "dept", "fig", "figs", "incl", "excl", "vs", "cf", "ca"}),
    "fr": frozenset({"approx", "ex", "cf", "suiv", "réf"}),
}
LAST_WORD = re.compile(r"(\S+)\.\s*$")
UNIT_END = re.compile(r"\d[ \u00a0\u202f]?[a-zµ]{1,3}\.\s*$")  # a unit after a number ending a sentence: 18 h., 2 m.
ELISION = re.compile(r"^(?:[A-Za-z]|qu|jusqu|lorsqu|puisqu)['’]", re.IGNORECASE)  # French l', d', qu' before a word
TABS_AND_NEWLINES = re.compile(r"\t[\t ]*|[ \t]*\n\s*")  # tabs, or a newline and the spacing after it (an API text's lines)
LABEL = re.compile(r"[A-Z][\w'’-]*(?: [\w'’-]+)? ?:[ \t]+(?=\S)")  # "Name: John Smith": a field's label
ENDED = re.compile(r"(?<![\w.'’-])([A-Z]{2,}|etc)\.\s+(?=[(\[\"“«]?[A-ZÀ-Ý])")  # "etc. Cordialement", "CA. Les"
CLOSED = re.compile(r"[.!?][)\]\"”’»]+\s+(?=[(\[\"“«]?[A-Z0-9À-Ý])")  # "(See the annex.) The": a sentence ends


def split(text: str, lang: str, keep: list[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The sentences of ``text`` as (start, end) character spans, the spacing after each included (the
    spans tile the text); no sentence boundary falls inside a span of ``keep``, and the splitter reads
    each such span as a plain word of its length (sentencex does not split a line holding a URL)."""
    import sentencex
    if not text.strip():
        return [(0, len(text))]
    original, text = text, _masked(text, keep)
    spans, at = [], 0
    for sentence in sentencex.segment(lang, text):
        found = text.find(sentence, at) if sentence else -1
        if found < 0:  # a splitter that changed the text: keep the line whole rather than lose any of it
            return [(0, len(text))]
        if found > at and spans:
            spans[-1] = (spans[-1][0], found)  # characters it left out go with the sentence before
        elif found > at:
            found = at
        lead = len(sentence) - len(sentence.lstrip())
        if spans and not sentence.strip():  # a blank line between paragraphs: spacing after the sentence before
            spans[-1] = (spans[-1][0], found + len(sentence))
        elif spans and lead:  # the spacing a sentence begins with ("\nThank you.") goes with the one before
            spans[-1] = (spans[-1][0], found + lead)
            spans.append((found + lead, found + len(sentence)))
        else:
            spans.append((found, found + len(sentence)))
        at = found + len(sentence)
    spans[-1] = (spans[-1][0], len(text))
    merged = _closed(original, _merged(original, spans, lang, keep), lang, keep)
    return _at_tabs_and_newlines(original, _labelled(original, _ended(original, merged, lang, keep)))


def _closed(text: str, spans: list[tuple[int, int]], lang: str, keep) -> list[tuple[int, int]]:
    """Each span also cut after a sentence's end mark closed by a bracket or quote and followed by a
    capital (``(See the annex.) The committee agreed.``, which sentencex keeps as one sentence and the
    model cut short), unless the mark ends a nonbreaking prefix or the cut falls inside a kept span."""
    always, _ = _nonbreaking(lang)

    def ends(at: int, m: re.Match) -> bool:
        word = LAST_WORD.search(text[at:m.start() + 1])
        return (word.group(1).lstrip("([«\"'“") if word else "") not in always and not any(
            a < m.end() < b for a, b in keep)
    return _cut(text, spans, CLOSED, ends)


def _ended(text: str, spans: list[tuple[int, int]], lang: str, keep) -> list[tuple[int, int]]:
    """Each span also cut after ``etc.`` or a word of capitals and its full stop followed by a capital (``passeport,
    etc. Cordialement, Luc`` and ``72,50 $ CA. Les enfants``, one sentence to sentencex or the Moses lists: the model
    lost the sentence after), unless the word is a nonbreaking prefix (``MM.``) or the cut falls inside a kept span."""
    always, _ = _nonbreaking(lang)
    return _cut(text, spans, ENDED, lambda at, m: m.group(1) not in always - {"etc"} and not any(
        a < m.end() < b for a, b in keep))


def _labelled(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each span that begins with a field's label (one or two words, the first capitalised, then a
    colon: ``Name: John Smith``, ``Total: 45% of members.``) cut after it: the model, which read the
    label and its value as one sentence, wrote the label alone (``Name :``, ``Total.``)."""
    out = []
    for start, end in spans:
        m = LABEL.match(text, start, end)
        out += [(start, m.end()), (m.end(), end)] if m else [(start, end)]
    return out


def _at_tabs_and_newlines(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each span also cut after every run of tabs, and after every newline, inside it that follows some text (the
    tabs or the newline, and any spacing after them, go with the part before): a line of a text is never the end
    of the next one's sentence (``Agenda\nThe committee met.`` came out ``Le comité a rencontré le défi.``)."""
    return _cut(text, spans, TABS_AND_NEWLINES, lambda at, m: bool(text[at:m.start()].strip()))


def _cut(text: str, spans: list[tuple[int, int]], pattern: re.Pattern, ends) -> list[tuple[int, int]]:
    """Each span also cut after each match of ``pattern`` inside it (not at its end) for which
    ``ends(start of the part so far, match)`` holds."""
    out = []
    for start, end in spans:
        at = start
        for m in pattern.finditer(text, start, end):
            if m.end() < end and ends(at, m):
                out.append((at, m.end()))
                at = m.end()
        out.append((at, end))
    return out


def _masked(text: str, keep) -> str:
    """``text`` with each span of ``keep`` written as one lowercase word of the same length."""
    for a, b in keep:
        text = text[:a] + "x" * (b - a) + text[b:]
    return text


def _merged(text: str, spans: list[tuple[int, int]], lang: str, keep) -> list[tuple[int, int]]:
    """``spans`` with the splits after a nonbreaking prefix or inside a kept span undone."""
    always, numeric = _nonbreaking(lang)
    out = [spans[0]]
    for start, end in spans[1:]:
        before = text[out[-1][0]:start]
        m = LAST_WORD.search(before)
        word = ELISION.sub("", m.group(1).lstrip("([«\"'“")) if m else ""  # l'art. 5: "art"
        after = text[start:end].lstrip()
        unit = UNIT_END.search(before) and after[:1].isupper()  # "avant 18 h. Merci !": a unit, not an initial
        join = (word in always and not unit or (word in numeric and after[:1].isdigit())
                or any(a < start < b for a, b in keep))
        out[-1:] = [(out[-1][0], end)] if join else [out[-1], (start, end)]
    return out


def pieces(units: list[str], limit: int) -> list[tuple[int, int]]:
    """(start, end) ranges of ``units``, each at most ``limit`` long: cut after the clause mark
    nearest the middle, recursively; in windows of ``limit`` where there is none."""
    if len(units) <= limit or limit < 2:
        return [(0, len(units))]
    middle = len(units) / 2
    marks = [i for i, u in enumerate(units[1:-1], 1) if u in CLAUSE_MARKS]
    if not marks:
        return [(a, min(a + limit, len(units))) for a in range(0, len(units), limit)]
    cut = min(marks, key=lambda i: abs(i + 1 - middle)) + 1
    left = pieces(units[:cut], limit)
    return left + [(a + cut, b + cut) for a, b in pieces(units[cut:], limit)]
