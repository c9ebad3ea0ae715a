"""A glossary applied to running text (``translate --glossary terms.tsv``, the API's ``glossary``).

Each entry's source term is found in a line by its words' stems (Snowball through PyStemmer, in the
model's source language: ``members`` matches ``member``), without case, as the model tokenises the line;
but a word in a verb's form does not match a term that is not in one (``billed`` is not ``bill``,
``projeter`` not ``projet``: ``VERB_ENDINGS``), and a term written with a capital (``House``) matches
only words written with one (not ``the house was sold``). Where the model can write the target term it
becomes a constraint of the sentence holding the source term (the search must write it:
decoding/constraints.py); where it cannot (a word outside its target vocabulary: ``ordiphone``), the
source term's words become one slot the model copies (text/slots.py), written out as the target term: the
term still comes out, aligned to its source term, and the sentence is translated. A term is written in
lower case but where its source words are capitalised inside a sentence (a name), where the glossary
writes its source term with a capital, or where a later word of it has one (``Member of Parliament``); an
output that begins with it begins with a capital, as its source did. A language Snowball lacks matches
words as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from rnnsearch.data.vocab import UNK
from rnnsearch.decoding.placement import token_spans
from rnnsearch.decoding.source import Source, as_source
from rnnsearch.text.typography import for_model


@dataclass(frozen=True)
class Entry:
    """One glossary entry as the model reads it."""
    stems: tuple[str, ...]   # the source term's units, lower case, stemmed
    target: str              # the target term, as written
    writable: bool           # every unit of the target term is in the model's target vocabulary
    words: tuple[str, ...] = ()  # the source term's units, lower case
    capital: bool = False    # the glossary writes the source term with a capital (House): a name


VERB_ENDINGS = {"en": ("ed", "ing"), "fr": ("er", "ez", "ons", "ait", "aient", "ais", "èrent", "ant", "é", "ée", "és",
                                            "ées")}  # a word in a verb's form (billed), matched only by a term in one


@cache
def _stemmer(lang: str):
    """The Snowball stemmer of a language (None: Snowball has none for it)."""
    import Stemmer
    from babel import Locale, UnknownLocaleError
    try:
        name = Locale.parse(lang).english_name.lower()
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    return Stemmer.Stemmer(name) if name in Stemmer.algorithms() else None


def stems(units: list[str], lang: str) -> list[str]:
    """The units in lower case, each stemmed in ``lang``."""
    lower = [u.lower() for u in units]
    stemmer = _stemmer(lang)
    return stemmer.stemWords(lower) if stemmer else lower


def entries(translator, pairs: list[tuple[str, str]]) -> list[Entry]:
    """The glossary's (source term, target term) pairs as Entries for ``translator``'s model."""
    lang, codec = translator.src_codec.lang, translator.tgt_codec
    out = []
    for source, target in pairs:
        units, written = translator.source_units(for_model(source)), codec.units(target) if target.strip() else []
        if units and written:
            out.append(Entry(tuple(stems(units, lang)), target, UNK not in codec.vocab.encode(written),
                             tuple(u.lower() for u in units), source[:1].isupper() and not source.isupper()))
    return out


def _matches(entry: Entry, units: list[str], lang: str) -> bool:
    """Whether ``units`` (with the entry's stems) are the term: each word in a verb's form only where the term's
    is, the first with a capital where the term is written with one."""
    endings = VERB_ENDINGS.get(lang, ())
    if entry.capital and not units[0][:1].isupper():
        return False
    return not entry.words or all(w.lower() == t or not (w.lower().endswith(endings) and not t.endswith(endings))
                                  for w, t in zip(units, entry.words))


def _cased(entry: Entry, text: str, at: int, translator) -> str:
    """The target term cased for its place: as given where its source words are capitalised inside a
    sentence (a name), where the entry is a name (``Entry.capital``, a later capital: ``Member of Parliament``),
    else with a lower-case first letter (``Projet de loi`` for ``the bill``: the text stage writes a capital
    where the output begins), where the model can write it so."""
    target, first = entry.target, text[:at].rstrip()
    inside = bool(first) and first[-1] not in ".!?:;\"»”("
    if (inside and text[at:at + 1].isupper()) or not target[:1].isupper() or entry.capital or \
            any(c.isupper() for c in target[1:]):  # YouTube, Member of Parliament: a name as written
        return target
    lowered = target[:1].lower() + target[1:]
    codec = translator.tgt_codec
    return lowered if UNK not in codec.vocab.encode(codec.units(lowered)) or UNK in codec.vocab.encode(
        codec.units(target)) else target


def apply(translator, glossary: list[Entry], text: str | Source) -> Source:
    """``text`` as a Source with the glossary's terms: the target term of each entry whose source term
    it holds, over the source term's words, a constraint of the sentence holding them (``Source.terms``),
    or, where the model cannot write it, a slot over them (``Source.slots``); none overlaps another
    (the longest source term first)."""
    source = as_source(text)
    units = translator.source_units(for_model(source.text))
    spans = token_spans(for_model(source.text), units)
    lang = translator.src_codec.lang
    found = stems(units, lang)
    terms, slots = list(source.terms), list(source.slots)
    for entry in sorted(glossary, key=lambda e: (-len(e.stems), not e.capital)):  # the longest, then a name's
        n = len(entry.stems)
        for i in (i for i in range(len(found) - n + 1) if tuple(found[i:i + n]) == entry.stems):
            a, b = spans[i][0], spans[i + n - 1][1]
            if b <= a or any(a < d and c < b for c, d, _ in slots + terms) or not _matches(entry, units[i:i + n], lang):
                continue
            (terms if entry.writable else slots).append((a, b, _cased(entry, source.text, a, translator)))
    return replace(source, terms=tuple(sorted(terms)), slots=tuple(sorted(slots)))
