"""Lines of running text through a translator: ``translate_lines(translator, lines)``.

Each line is split into sentences (``text/sentences.py``); each sentence's items (URLs, e-mail
addresses, paths, phone numbers, numbers and amounts, code: ``text/items.py``) and the names its
model's vocabulary lacks become slots the model copies (``text/slots.py``); a sentence far longer
than the model was trained on is cut into pieces. The sentences of all lines of a part are searched
together, batched as any sentences are; each output gets its slots back, and a line's outputs are
joined with the source's spacing between its sentences: one Translation per line, always, whose
tokens, source tokens, attention (block-diagonal over its sentences), alignment and score cover the
whole line (``join``), and whose ``segments`` are its sentences' own.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from rnnsearch.data.vocab import EOS_TOKEN, UNK
from rnnsearch.decoding.markup import alignment_of
from rnnsearch.decoding.placement import punctuation
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source, Translation, as_source, sentences_given
from rnnsearch.text import sentences, slots
from rnnsearch.text.segments import Segment, items_of, segments_of, translated_whole
from rnnsearch.text.normalize import clean_source
from rnnsearch.text.settings import TextSettings

BLANKS = " \t\r\n\u00a0\u3000"  # spacing a text begins or ends with (an API text's newlines too), kept around it


@dataclass
class LineStats:
    """What the slots did over a translation: items carried, and those the model did not copy."""
    slots: int = 0
    put_back: list[str] = field(default_factory=list)


def translate_lines(translator, lines: Sequence[str | Source], search: SearchSettings | None = None,
                    settings: TextSettings | None = None, part_size: int | None = None, progress=None,
                    stats: LineStats | None = None, alignments: bool = False,
                    numbers: Sequence[int] | None = None) -> Iterator[list[Translation]]:
    """One Translation per line, in parts of ``part_size`` lines (None: one part) yielded in order.
    ``search``: SearchSettings; ``settings``: TextSettings; ``progress``: called with lines done;
    ``stats``: counts what the slots did (LineStats); ``alignments``: give every line its
    ``alignment`` (what --markup places tags by), not only those with slots; ``numbers``: each line's
    number in warnings (default: its place, from 1)."""
    settings = TextSettings.given(settings)
    search = SearchSettings.given(search).resolve(translator.decode_cfg)
    size = part_size or max(len(lines), 1)
    for first in range(0, len(lines), size):
        part = [clean_source(as_source(t)) for t in lines[first:first + size]]  # NFC, no soft hyphens
        segs = segment_lines(translator, part, settings)
        done = _line_progress(segs, len(part), progress)
        prefixes = translator.prefix_units([s.prefix for s in segs]) if any(s.prefix for s in segs) else None
        found = translator.translate_units([s.units for s in segs], search, prefixes, done,
                                           [(s.constraints, s.avoid) for s in segs],
                                           lines=[numbers[first + s.line] if numbers else first + s.line + 1
                                                  for s in segs])
        line_numbers = [numbers[first + n] if numbers else first + n + 1 for n in range(len(part))]
        done_lines = finish(translator, part, segs, found, stats, alignments, line_numbers)
        _fewer_sentences(translator, part, done_lines, settings, line_numbers)
        yield done_lines


def translate_text(translator, texts: Sequence[str | Source], search: SearchSettings | None = None,
                   settings: TextSettings | None = None) -> list[Translation]:
    """Running text, one Translation per text (``rnnsearch translate``'s path): each split into sentences and
    joined again, URLs, numbers and names carried (``translate_lines`` in one part). ``Translator.translate``
    reads each text as one sentence."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string: translate_text(translator, [text])")
    texts = sentences_given(texts, "texts")  # a generator read once (it was used up by the checks)
    for given, kind, where in ((search, SearchSettings, "search, the 3rd"), (settings, TextSettings, "settings, the 4th")):
        if given is not None and not isinstance(given, kind):
            raise TypeError(f"{where} argument, must be a {kind.__name__}, not a {type(given).__name__}")
    return [t for part in translate_lines(translator, texts, search, settings) for t in part]


def segment_lines(translator, part: list[Source], settings: TextSettings) -> list[Segment]:
    """The segments of each line of ``part``, in order (``text/segments.py``)."""
    return [s for n, source in enumerate(part) for s in segments_of(translator, source, n, settings)]


def finish(translator, part: list[Source], segs: list[Segment], found: list[Translation],
           stats: LineStats | None = None, alignments: bool = False, numbers: list[int] | None = None
           ) -> list[Translation]:
    """Each line's Translation from its segments' translations (``found``, in the order of ``segs``):
    slots restored, joined; ``constraints_met`` false where a term the line asks for (a constraint, a
    glossary's term carried by a slot) is not in its output, or the line was not translated, with a
    warning naming the line (``numbers``) where the search had met them and the text does not hold them."""
    restored = [_restored(translator, s, t, stats, alignments) for s, t in zip(segs, found)]
    by_line: list[list] = [[] for _ in part]
    for s, t in zip(segs, restored):
        by_line[s.line].append((t, s.after))
    joined = [_indented(join(pieces), source.text) for pieces, source in zip(by_line, part)]
    for n, (source, t) in enumerate(zip(part, joined)):
        terms = source.constraints + tuple(t for _, _, t in source.terms) + tuple(
            w for a, b, w in source.slots if w != source.text[a:b])  # a glossary's, carried by a slot
        missing = [term for term in terms if term.lower() not in t.text.lower()]
        if terms and (not t.tokens or missing):
            if t.tokens and t.constraints_met and not t.error:  # the search met them: they are not as written
                translator.warn(f"line {numbers[n] if numbers else n + 1}: {', '.join(map(repr, missing))} not in the "
                                f"output as written ({t.text[:60]!r}): check this translation")
            joined[n] = replace(t, constraints_met=False)
    return joined


def _fewer_sentences(translator, part: list[Source], done: list[Translation], settings: TextSettings,
                     numbers: list[int]) -> None:
    """A warning for each line translated whole (its constraints, or ``split`` off) whose output holds fewer
    sentences than it (the model, trained on single sentences, stops after the first or runs two together)."""
    for source, t, number in zip(part, done, numbers):
        if not translated_whole(source, settings) or t.error or not t.tokens:
            continue
        keep = [(i.start, i.end) for i in items_of(translator, source.text, settings)]
        given = _sentences(source.text, translator.src_codec.lang, keep)
        written = _sentences(t.text, translator.tgt_codec.lang, [])
        if written < given:
            why = "its constraints keep it whole" if source.constraints else "the line was not split into sentences"
            translator.warn(f"line {number}: {given} sentences in, {written} out: the translation may have dropped "
                            f"or merged one ({why})")


def _sentences(text: str, lang: str, keep: list[tuple[int, int]]) -> int:
    return sum(1 for a, b in sentences.split(text, lang, keep) if any(c.isalnum() for c in text[a:b]))


def _line_progress(segs: list[Segment], lines: int, progress):
    """A progress callback over segments (done in any order) that reports lines, in proportion."""
    if progress is None:
        return None
    state = {"segments": 0, "lines": 0}

    def advance(n: int) -> None:
        state["segments"] += n
        now = lines if state["segments"] >= len(segs) else state["segments"] * lines // max(len(segs), 1)
        if now > state["lines"]:
            progress(now - state["lines"])
            state["lines"] = now
    return advance


def _restored(translator, segment: Segment, translation: Translation, stats: LineStats | None,
              alignments: bool) -> Translation:
    """The segment's translation (each of its n best) with its slots restored and (``alignments``,
    or where it has slots) the alignment its tags and slots are placed by; a sentence of no letter or
    digit, as it is (``Segment.verbatim``)."""
    if segment.verbatim is not None:
        return _as_written(segment.verbatim)
    if not translation.tokens or not (segment.items or alignments):
        return _cased(translator, translation, segment)
    hyps = []
    for n, hyp in enumerate(translation.nbest or [translation]):
        rows = alignment_of(translator, hyp)  # (T + 1, S + 1)
        hyp, put_back = slots.restore(hyp, segment.items, rows, translator.tgt_codec, punctuation)
        hyps.append(hyp)
        if stats is not None and n == 0:
            stats.slots += len(segment.items)
            stats.put_back += put_back
    hyps = [_cased(translator, h, segment) for h in hyps]
    hyps[0].nbest = hyps
    return hyps[0]


def _as_written(text: str) -> Translation:
    """A sentence copied as the source wrote it: its words both its source and its output units, each
    aligned to itself (so tags go back around the words they wrapped), log-probability 0."""
    tokens = text.split()
    rows = np.eye(len(tokens) + 1, dtype=np.float32)  # (T + 1, S + 1), T = S
    return Translation(text, tokens, tokens + [EOS_TOKEN], 0.0, rows, alignment=rows)


def _cased(translator, translation: Translation, segment: Segment) -> Translation:
    """The output's first letter in the case of its source's (``_capitalised``, ``_small``)."""
    if segment.first.isupper():
        return _capitalised(_uncapped(translation, segment, translator.tgt_codec), segment)
    return _small(translation, segment, translator.tgt_codec) if segment.first.islower() else translation


def _small(translation: Translation, segment: Segment, codec) -> Translation:
    """The output with its first word in small letters where its source began with one (a list item's
    text after its marker, ``c) la liberté``, came out ``c) The freedom``) and a word vocabulary holds
    that word more often so (``The`` -> ``the``; ``I``, ``Canada`` and what a slot carries stay)."""
    text, tokens = translation.text, translation.tokens
    if codec.mode != "word" or not tokens or not text.startswith(tokens[0]) or not tokens[0][:1].isupper() \
            or any(text.startswith(shown) for _, shown in segment.items):
        return translation
    small = tokens[0][:1].lower() + tokens[0][1:]
    written, lower = codec.vocab.encode([tokens[0], small])
    if lower == UNK or (written != UNK and written < lower):  # ids rank the words by frequency
        return translation
    return replace(translation, text=small + text[len(small):], tokens=[small] + tokens[1:])


def _uncapped(translation: Translation, segment: Segment, codec) -> Translation:
    """The output's first word out of capitals where the model wrote a heading's (``Sales`` came out ``LE Sales``,
    ``Contact`` ``LES contacts``: the Hansards' headings are in capitals) and nothing of the source is: a word the
    vocabulary holds more often in small letters (``le``; not ``ONU``), written with a capital (``Le``)."""
    tokens, text = translation.tokens, translation.text
    if (codec.mode != "word" or not tokens or len(tokens[0]) < 2 or not tokens[0].isupper() or not text.startswith(tokens[0])
            or any(len(u) > 1 and u.isupper() for u in segment.units) or len(tokens) > 1 and tokens[1].isupper()):
        return translation
    written, lower = codec.vocab.encode([tokens[0], tokens[0].lower()])
    if lower == UNK or (written != UNK and written < lower):  # ids rank the words by frequency
        return translation
    first = tokens[0][0] + tokens[0][1:].lower()
    return replace(translation, text=first + text[len(first):], tokens=[first] + tokens[1:])


def _capitalised(translation: Translation, segment: Segment) -> Translation:
    """The output with its first letter upper-case (its source began with one: a word the model read in
    lower case, a slot or a glossary term written in lower case), its first unit too; not where it
    begins with what a slot carries verbatim (``make test``)."""
    text, tokens = translation.text, translation.tokens
    if not text[:1].islower() or any(src == shown and text.startswith(shown) for src, shown in segment.items):
        return translation
    first = [tokens[0][:1].upper() + tokens[0][1:]] if tokens and tokens[0][:1].islower() else tokens[:1]
    return replace(translation, text=text[:1].upper() + text[1:], tokens=first + tokens[1:])


def _indented(t: Translation, text: str) -> Translation:
    """``t`` with the spaces and tabs its source line begins and ends with (an indented line, a tab
    before a value), where it has a text."""
    lead, trail = text[:len(text) - len(text.lstrip(BLANKS))], text[len(text.rstrip(BLANKS)):]
    return replace(t, text=lead + t.text + trail) if t.text and (lead or trail) else t


def join(pieces: list[tuple[Translation, str]]) -> Translation:
    """One line's Translation from its segments' (translation, spacing after): text joined with the
    spacing, tokens and source tokens end to end (one </s>), attention and alignment block-diagonal
    (each block's </s> column summed into the last), scores added; the first error is the line's."""
    if len(pieces) == 1:
        return replace(pieces[0][0], segments=[pieces[0][0]])
    parts = [t for t, _ in pieces]
    text = "".join(t.text + (after if t.text else "") for t, after in pieces).strip()
    tokens = [tok for t in parts for tok in t.tokens]
    source = [u for t in parts for u in t.source_tokens[:-1]] + [EOS_TOKEN]
    offsets = np.cumsum([0] + [len(t.tokens) for t in parts])
    replaced = [int(o) + i for t, o in zip(parts, offsets) for i in t.replaced]
    starts = np.cumsum([0] + [len(t.source_tokens) - 1 for t in parts])
    carried = [int(o) + j for t, o in zip(parts, starts) for j in t.carried]
    copies = {int(o) + j: int(p) + i for t, o, p in zip(parts, starts, offsets) for j, i in t.copies.items()}
    errors = [f"sentence {n} of {len(parts)}: {t.error}" for n, t in enumerate(parts, 1) if t.error]
    many = any(len(t.nbest) > 1 for t in parts)
    nbest = [_nth(parts, k) for k in range(max(len(t.nbest) or 1 for t in parts))] if many else []
    joined = Translation(text, tokens, source, float(sum(t.score for t in parts)),
                         _blocks([t.attention for t in parts], parts), replaced=replaced,
                         error=errors[0] if errors else None, constraints_met=all(t.constraints_met for t in parts),
                         alignment=_blocks([t.alignment for t in parts], parts), segments=parts, carried=carried,
                         copies=copies)
    if nbest:
        joined.nbest = [joined] + sorted(nbest[1:], key=lambda t: -t.score)
    return joined


def _nth(parts: list[Translation], k: int) -> Translation:
    """The line's k-th hypothesis: each sentence's k-th best (its best where it has fewer)."""
    chosen = [(t.nbest[k] if k < len(t.nbest) else t) for t in parts]
    text = " ".join(t.text for t in chosen if t.text)
    return Translation(text, [tok for t in chosen for tok in t.tokens],
                       [u for t in chosen for u in t.source_tokens[:-1]] + [EOS_TOKEN],
                       float(sum(t.score for t in chosen)), None)


def _blocks(matrices: list, parts: list[Translation]) -> np.ndarray | None:
    """Block-diagonal rows (sum T + 1, sum S + 1) of each part's (T + 1, S + 1) matrix; None if any is."""
    if any(m is None for m in matrices):
        return None
    rows = sum(len(t.tokens) for t in parts) + 1
    cols = sum(len(t.source_tokens) - 1 for t in parts) + 1
    out = np.zeros((rows, cols), dtype=np.float32)
    r = c = 0
    for m, t in zip(matrices, parts):
        n, s = len(t.tokens), len(t.source_tokens) - 1
        out[r:r + n, c:c + s] = m[:n, :s]
        out[r:r + n, -1] += m[:n, s]
        r, c = r + n, c + s
    m, s = matrices[-1], len(parts[-1].source_tokens) - 1  # the </s> row: the last part's
    out[-1, c - s:c] = m[-1, :s]
    out[-1, -1] = m[-1, s]
    return out
