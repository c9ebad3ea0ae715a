"""What the model reads of a line: its segments (sentences, or pieces of one too long), each as
source units with slots (``text/slots.py``) for its items and for the names its vocabulary lacks,
and the glossary's target terms it must contain (or, where the model cannot write a term, a slot
standing for it, aligned to its source term)."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rnnsearch.data.vocab import UNK
from rnnsearch.decoding.source import Source
from rnnsearch.text.typography import for_model
from rnnsearch.text import items as found_items
from rnnsearch.text import sentences, slots
from rnnsearch.text.settings import TextSettings

SLOT_CHARS = re.compile(f"([{slots.marker(0)}-{slots.marker(0xFFFD)}])")  # slots.slot_index's range
FREQUENT = 10_000  # a plain integer among the source vocabulary's 10,000 most frequent units is the model's
TITLES = frozenset("Mr Mrs Ms Messrs Dr Dre Prof Pr Hon Sen Rev Gen Capt Col Lt Sgt Sr Jr St Ste Sir "
                   "Mme Mmes Mlle Mlles Me Mgr".split())  # before a name, the model's to translate (Mme Rowe -> Mrs. Rowe)


LIST_MARKER = re.compile(r"[ \t]*((?:[-*•‣◦▪·–—]|\(?(?:\d{1,3}|[a-z]|[ivxlc]{2,5})[.)]|(?:\(?[A-Z]|\([IVXLC]{1,5})\)))"
                         r"[ \t]+(?=\S)")  # 1. (a) b) A) (iv) - •: not an initial (M. Trudeau, J. B. Milner)


@dataclass
class Segment:
    """One sentence (or piece of one) as the model reads it."""
    line: int                       # its line in the part
    units: list[str]                # source units, slots as slot.marker(k)
    items: list[tuple[str, str]]    # slot k's (source text, rendering)
    after: str = ""                 # written after its translation in the line
    prefix: str = ""
    constraints: tuple = ()
    avoid: tuple = ()
    first: str = ""                 # its source's first letter (a sentence's first piece): the case its output begins in
    verbatim: str | None = None     # a sentence of no letter or digit (an emoji, "...", "—"): written as it is


def can_carry(translator) -> bool:
    """Whether the translator's outputs can be matched to slots: an alignment (an attention model, or
    one with an alignment head), and a model that copies <unk>: word vocabularies (their own unknown
    words taught it), or subword ones trained with slots (``data.slot_rate``: data/slotting.py)."""
    aligned = translator.align_head is not None or getattr(translator.model, "arch", "rnnsearch") == "rnnsearch"
    words = translator.src_codec.mode == "word" and translator.tgt_codec.mode == "word"
    return aligned and (words or translator.config.data.slot_rate > 0)


def _lookups(codec):
    """``known(word)``: the source vocabulary reads the word without <unk>; ``frequent(word)``: a word
    vocabulary holds it among its FREQUENT most frequent (a plain integer it holds is the model's to copy;
    a subword model's is an item: ``items_of``)."""
    if codec.mode == "word":
        return (lambda word: codec.vocab.encode([word])[0] != UNK), (lambda word: codec.vocab.encode([word])[0] < FREQUENT)
    return (lambda word: UNK not in codec.encode(word)), (lambda word: False)


def items_of(translator, text: str, settings: TextSettings) -> list:
    """The items of a line (text/items.py) as the model reads them: a subword model that learned slots
    (``data.slot_rate``) has every plain integer and label (``C-45``) as one, as its training had them
    (data/slotting.py), so that it never meets one it was taught to read as <unk>."""
    known, frequent = _lookups(translator.src_codec)
    subword = translator.src_codec.mode != "word"
    return found_items.find(text, translator.src_codec.lang, translator.tgt_codec.lang, settings.convert_numbers,
                            known=known, frequent=frequent, labels=subword and can_carry(translator))


def segments_of(translator, source: Source, line: int, settings: TextSettings) -> list[Segment]:
    """The segments of one line: its sentences (the line whole where it has constraints or is not to be
    split), each cut into pieces where too long, with the glossary's terms whose source words it holds;
    the prefix goes with the first."""
    text = source.text
    if not text.strip():
        return [Segment(line, [], [])]
    carry = settings.placeholders and can_carry(translator)
    items = items_of(translator, text, settings)
    items = with_slots(items, source.slots, text)
    whole = translated_whole(source, settings)
    keep = [(i.start, i.end) for i in items]
    marker = LIST_MARKER.match(text)  # "1. ", "- ", "• ": kept in front as written (the model wrote "• •", "Le 1.")
    start = marker.end() if marker and not any(a < marker.end() for a, _ in keep) else 0
    spans = [(start, len(text))] if whole else [(start + a, start + b) for a, b in sentences.split(
        text[start:], translator.src_codec.lang, [(a - start, b - start) for a, b in keep])]  # the splitter read lists
    items = items if carry else []
    limit = settings.max_units or 2 * translator.config.data.max_len
    out = [Segment(line, [], [], text[marker.end(1):start], verbatim=marker.group(1))] if start else []
    for a, b in spans:
        gap = text[a:b][len(text[a:b].rstrip()):]
        if text[a:b].strip() and not any(c.isalnum() for c in text[a:b]):  # nothing to translate: the model
            out.append(Segment(line, [], [], gap, verbatim=text[a:b].strip()))  # would write words of its own
            continue
        units, slot_items = sentence_units(translator, text, a, b, items, carry)
        if not units:
            continue
        first = text[a:b].lstrip()[:1]
        cuts = sentences.pieces(units, limit)
        for n, (c, d) in enumerate(cuts):
            piece = units[c:d]
            out.append(Segment(line, piece, _renumbered(piece, slot_items), " " if n < len(cuts) - 1 else gap,
                               avoid=source.avoid, constraints=source.constraints + _terms_in(source, a, b),
                               first=first if n == 0 else ""))
    if not out:
        return [Segment(line, [], [])]
    out[-1].after = ""
    next((s for s in out if s.verbatim is None), out[0]).prefix = source.prefix
    return out


def _terms_in(source: Source, a: int, b: int) -> tuple[str, ...]:
    """The glossary's target terms (``Source.terms``) whose source words lie in text[a:b], each once."""
    return tuple(dict.fromkeys(t for c, d, t in source.terms if a <= c and d <= b and t not in source.constraints))


def with_slots(items: list, slots, text: str) -> list:
    """``items`` with the spans the Source gives (``Source.slots``: a span not to translate, written as
    the source writes it; a glossary's target term the model cannot write, written as that term) as
    items of their own; an item overlapping one gives way."""
    given = [found_items.Item(a, b, "given", text[a:b], written) for a, b, written in sorted(slots) if text[a:b].strip()]
    free = [i for i in items if not any(i.start < k.end and k.start < i.end for k in given)]
    return sorted(free + given, key=lambda i: i.start)


def translated_whole(source: Source, settings: TextSettings) -> bool:
    """Whether a line is translated as one sentence: split off, or constraints (which no sentence can be
    told to hold)."""
    return not settings.split or bool(source.constraints)


def sentence_units(translator, text: str, a: int, b: int, items, carry: bool) -> tuple[list[str], list]:
    """The units of text[a:b] with its items and (``carry``, a word vocabulary) its names outside the
    vocabulary as slots (a capitalised word outside it whose lower-case form is in it read in lower
    case), and each slot's (source text, rendering). A subword vocabulary reads the text with its slots
    in one piece, as training read them (data/slotting.py: a space before a slot is a piece of its own)."""
    units, slot_items, at, parts = [], [], a, []
    for item in (i for i in items if a <= i.start and i.end <= b):
        parts += [for_model(text[at:item.start]), slots.marker(len(slot_items))]
        slot_items.append((item.text, item.rendering))
        at = item.end
    parts.append(for_model(text[at:b]))
    if translator.src_codec.mode != "word":
        units = _one_slot_a_unit(translator.source_units("".join(parts)))
        return (_unknown_as_slots(units, slot_items, translator.src_codec.vocab) if carry else units), slot_items
    for part in parts:
        units += [part] if slots.slot_index(part) is not None else translator.source_units(part)
    if carry:
        units = _names_as_slots(units, slot_items, translator.src_codec.vocab, text[a:b])
    return units, slot_items


def _unknown_as_slots(units: list[str], slot_items: list, vocab) -> list[str]:
    """Subword units with each one the vocabulary lacks (a character it never saw: an emoji, Ω) a slot of
    its own (appended to ``slot_items``), carried verbatim: the model would read <unk> and drop it."""
    out = []
    for unit, known in zip(units, vocab.encode(units)):
        if known == UNK and slots.slot_index(unit) is None:
            out.append(slots.marker(len(slot_items)))
            slot_items.append((unit, unit))
        else:
            out.append(unit)
    return out


def _one_slot_a_unit(units: list[str]) -> list[str]:
    """Subword units with each slot a unit of its own (SentencePiece joins characters it does not know)."""
    out = []
    for unit in units:
        out += [u for u in SLOT_CHARS.split(unit) if u] if any(slots.slot_index(c) is not None for c in unit) else [unit]
    return out


def _names_as_slots(units: list[str], slot_items: list, vocab, text: str) -> list[str]:
    """``units`` with each name outside the vocabulary as a slot (appended to ``slot_items``), the
    name-like units next to it in the same slot where the source wrote them space-separated ("Amélie
    Gagnon": one slot, copied whole, not a known name beside an <unk>); a capitalised unit outside the
    vocabulary whose lower-case form is in it read in lower case ("Online" -> "online"); a unit of
    symbols outside it (an emoji) a slot of its own."""
    known = vocab.encode(units)
    kinds = []
    for unit, i in zip(units, known):
        if slots.slot_index(unit) is not None:
            kinds.append("item")
        elif i == UNK and _symbol(unit):
            kinds.append("symbol")
        elif i == UNK:
            kinds.append("name" if _name_like(unit, vocab) else "word")
        else:
            kinds.append(("rare name" if i >= FREQUENT else "known name") if _known_name(unit, vocab) else "known")
    kinds = _rare_in_full_names(_title_runs(units, kinds))
    out, j = [], 0
    while j < len(units):
        if kinds[j] == "word" and units[j][:1].isupper():
            out.append(units[j].lower())
        elif kinds[j] == "symbol":  # an emoji or sign the model would drop
            out.append(slots.marker(len(slot_items)))
            slot_items.append((units[j], units[j]))
        elif kinds[j] not in ("name", "known name"):
            out.append(units[j])
        else:
            end = j
            while end < len(units) and kinds[end] in ("name", "known name") and _word(units[end]):
                end += 1
            run, name = units[j:max(end, j + 1)], " ".join(units[j:max(end, j + 1)])
            if "name" not in kinds[j:j + len(run)]:
                out += run  # known names alone: the model's own
            elif len(run) > 1 and name in text:
                out.append(slots.marker(len(slot_items)))
                slot_items.append((name, name))
            else:
                for unit, kind in zip(run, kinds[j:j + len(run)]):
                    out.append(slots.marker(len(slot_items)) if kind == "name" else unit)
                    if kind == "name":
                        slot_items.append((unit, unit))
            j += len(run)
            continue
        j += 1
    return out


def _title_runs(units: list[str], kinds: list[str]) -> list[str]:
    """``kinds`` with each capitalised word outside the vocabulary (its lower-case form in it) that
    stands inside a sentence beside another capitalised word made a name: two or more capitalised words
    are a name of several words ("Lightning Experience", "Live Agent"), not the words "lightning" and
    "live" the model would translate. The sentence's first word is capitalised as any first word is: it
    makes no name of the word after it."""
    def capitalised(j: int) -> bool:
        return 0 <= j < len(units) and units[j][:1].isupper() and _word(units[j])
    out = list(kinds)
    for j, kind in enumerate(kinds):
        if kind == "word" and j > 0 and capitalised(j) and units[j - 1] not in OPENERS and (
                (j > 1 and capitalised(j - 1)) or capitalised(j + 1)):
            out[j] = "name"
    return out


OPENERS = {":", "(", "[", "\"", "«", "“", "‘", "'", "-", "–", "—", "•", "*"}  # after these a sentence may begin


def _symbol(unit: str) -> bool:
    """A unit of symbols alone (an emoji, ©, ™, →; joiners and variation selectors with them)."""
    return all(unicodedata.category(c)[0] == "S" or c in "\u200d\ufe0f\ufe0e" for c in unit) and \
        any(unicodedata.category(c)[0] == "S" for c in unit)


def _word(unit: str) -> bool:
    """A unit that may be part of a name of several words: letters, hyphens and apostrophes ("Mr." and
    "Dr." are titles the model translates, a unit with a digit a code of its own)."""
    return all(c.isalpha() or c in "-'’" for c in unit)


def _rare_in_full_names(kinds: list[str]) -> list[str]:
    """A name the vocabulary holds only among its rarer units (past ``FREQUENT``) is a name to carry where it
    stands beside another (a full name: ``Jean-François Bélanger``, which the model wrote ``M. Michel
    Bélanger``, putting a first name it knew better in its place); alone, it is the model's own."""
    out = []
    for n, kind in enumerate(kinds):
        beside = any(0 <= m < len(kinds) and kinds[m] in ("name", "known name", "rare name") for m in (n - 1, n + 1))
        out.append(("name" if beside else "known name") if kind == "rare name" else kind)
    return out


def _name_like(unit: str, vocab) -> bool:
    """A unit that reads as a name or code: capitalised (its lower-case form not a word the vocabulary
    has: "Online" is a word, "Okonkwo" a name), holding a digit, or written in mixed case, a capital
    after a small letter ("HoC", "iPhone": read in lower case, "hoc" was translated as a word)."""
    if any(c.isdigit() for c in unit) or any(a.islower() and b.isupper() for a, b in zip(unit, unit[1:])):
        return True
    return unit[:1].isupper() and vocab.encode([unit.lower()])[0] == UNK


def _known_name(unit: str, vocab) -> bool:
    """A unit the vocabulary holds that reads as a name: not a title (``Mme`` of ``Mme Rowe``: the model
    writes ``Mrs.``) and not a unit with a digit (``10``, ``p.100``: the model's words, not codes)."""
    return unit not in TITLES and not any(c.isdigit() for c in unit) and _name_like(unit, vocab)


def _renumbered(units: list[str], slot_items: list) -> list[tuple[str, str]]:
    """The slot items of a piece of a sentence, renumbered from 0 in ``units`` (in place)."""
    mine = []
    for j, unit in enumerate(units):
        k = slots.slot_index(unit)
        if k is not None:
            units[j] = slots.marker(len(mine))
            mine.append(slot_items[k])
    return mine


