"""Which language a text is in, by a maintained identifier (py3langid): ``ranked(text, languages)``,
``read_as_other(text, source)`` and ``not_the_source(text, source, target)``, the words a command says it in.

``translate-file`` refuses a file that reads as another language than the model's source: a file already
translated (the model's own output given back), or one given to the model of the other direction, came out
as garbage and was reported translated. The rule refuses only where the identifier is sure: the likeliest
language is not the source, with a probability of 0.95 or more, and the source's is below 0.05. Measured by
``python experiments/language_check.py`` (docs/text.md): it refused no draw of 1, 3 or 10 lines of text in the
source language, and refused text in another in 52-95% of single lines, 90-100% of 3-line draws and every
10-line draw. ``translate`` and ``evaluate`` warn by the same rule (a French file given to the En->Fr model
was translated to garbage, and evaluate printed BLEU 0.55, without a word).
"""
from __future__ import annotations

import re
from functools import cache

SURE, SOURCE_AT_MOST = 0.95, 0.05
SAMPLE = 50_000  # characters of a file's text its language is read from
TAGS = re.compile(r"<[^<>]*>")  # what a tagged text's language is read without


def ranked(text: str, languages: tuple[str, ...] = ()) -> list[tuple[str, float]]:
    """(language, probability) for each of ``languages`` (all py3langid knows where empty), the likeliest first."""
    return [(code, float(p)) for code, p in _identifier(tuple(languages)).rank(text)]


def read_as_other(text: str, source: str) -> tuple[str, float] | None:
    """(language, probability) where ``text`` is surely in a language other than ``source``; None otherwise."""
    if not text.strip() or source not in _identifier(()).nb_classes:  # a language it does not know: no check
        return None
    found = ranked(text)
    top, p = found[0]
    if top != source and p >= SURE and dict(found).get(source, 0.0) < SOURCE_AT_MOST:
        return top, p
    return None


def not_the_source(text: str, source: str, target: str) -> str | None:
    """Where ``text`` (its first SAMPLE characters) surely reads as another language than ``source``, what it
    reads as and what that may mean (``translated already?``: it reads as ``target``); else None."""
    found = read_as_other(text[:SAMPLE], source)
    if found is None:
        return None
    code, p = found
    why = "translated already?" if code == target else f"for a model from {language_name(code)}?"
    return (f"reads as {language_name(code)} ({code}, p {p:.2f}), not {language_name(source)}, the language "
            f"this model translates from: {why}")


def language_name(code: str) -> str:
    """A language's English name (Babel's CLDR data), or its code where Babel has none."""
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(code).english_name or code
    except (ValueError, UnknownLocaleError):
        return code


@cache
def _identifier(languages: tuple[str, ...]):
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier
    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    if len(languages) > 1:
        identifier.set_languages(list(languages))
    return identifier
