"""Numbers and amounts in one language's convention, through Babel (CLDR's data).

A number as the source writes it (``18,500``, ``4.2``; French ``18 500``, ``4,2``) is read with the
source locale's group and decimal symbols, and written with the target locale's (``18 500``, ``4,2``:
U+202F, CLDR's French group symbol), keeping the digits after the decimal mark as written. An amount keeps its
currency sign as written and puts it where the target locale's currency pattern does (``€25,000`` ->
``25 000 €``); a scale word after an amount (``million``, ``billion``: CLDR's long compact forms)
is written in the target language (``€4.2 million`` -> ``4,2 millions €``).
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import cache

SPACES = " \u00a0\u202f"  # a group symbol written as a space: plain, no-break, narrow no-break


@cache
def _locale(lang: str):
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(lang)
    except (UnknownLocaleError, ValueError):
        return Locale.parse("en")  # a language CLDR lacks: English's conventions (digits stay as written)


@cache
def symbols(lang: str) -> tuple[str, str]:
    """(group, decimal) symbols of ``lang``."""
    from babel.numbers import get_decimal_symbol, get_group_symbol
    locale = _locale(lang)
    return get_group_symbol(locale), get_decimal_symbol(locale)


def _foreign(lang: str) -> tuple[str, str]:
    """(group, decimal) of the other convention a ``lang`` text may hold a number in: ``1.500,00`` in English,
    ``1,500.00`` in French. Read only with both symbols written, which no ``lang`` number is."""
    return (".", ",") if symbols(lang)[1] == "." else (",", ".")


@cache
def _foreign_pattern(lang: str) -> str:
    """One number in ``_foreign``'s convention, both its symbols written."""
    group, decimal = map(re.escape, _foreign(lang))
    return rf"\d{{1,3}}(?:{group}\d{{3}})+{decimal}\d+"


@cache
def number_pattern(lang: str) -> str:
    """A regular expression for one number as ``lang`` writes it: digits in groups of three after
    the group symbol (any space for a space-like one), then the decimal part, if any; a number in the
    other convention with both its symbols (``1.500,00`` in English: it was read as 1.5 and ``,00``); a
    decimal part alone where the decimal mark is a point (``.5``: the model dropped it)."""
    group, decimal = symbols(lang)
    groups = f"[{re.escape(SPACES)}]" if group in SPACES else re.escape(group)
    lead = rf"|(?<![\d.,]){re.escape(decimal)}\d+" if decimal == "." else ""
    return (rf"{_foreign_pattern(lang)}(?![\d.,]\d)"
            rf"|\d{{1,3}}(?:{groups}\d{{3}})+(?:{re.escape(decimal)}\d+)?|\d+{re.escape(decimal)}\d+{lead}|\d+")


def parse(text: str, lang: str) -> tuple[Decimal, int] | None:
    """The value of a number written as ``lang`` writes it (or in the other convention with both its
    symbols: ``number_pattern``) and its digits after the decimal mark (None: not such a number)."""
    group, decimal = symbols(lang)
    if not re.fullmatch(number_pattern(lang), text):
        return None
    if re.fullmatch(_foreign_pattern(lang), text):
        group, decimal = _foreign(lang)
    plain = text
    for g in (SPACES if group in SPACES else group):
        plain = plain.replace(g, "")
    whole, _, fraction = plain.partition(decimal)
    try:
        return Decimal(f"{whole or 0}.{fraction}" if fraction else whole), len(fraction)
    except InvalidOperation:
        return None


def _digits(decimals: int) -> str:
    return "#,##0" + ("." + "0" * decimals if decimals else "")


def format_number(value: Decimal, decimals: int, lang: str) -> str:
    """``value`` with ``decimals`` digits after the decimal mark, in ``lang``'s convention."""
    from babel.numbers import format_decimal
    return format_decimal(value, format=_digits(decimals), locale=_locale(lang))


@cache
def scale_words(lang: str) -> dict[str, int]:
    """Scale words of ``lang`` (CLDR's long compact forms) and the power of ten each stands for:
    {'million': 6, 'billion': 9, ...} from 10^6 up (``thousand`` is left to the model)."""
    words = {}
    for forms in _locale(lang).compact_decimal_formats["long"].values():
        for power, pattern in dict(forms).items():
            word = str(getattr(pattern, "pattern", pattern)).replace("0", "").strip()
            exponent = len(power) - 1
            if word and exponent >= 6 and exponent % 3 == 0:
                words.setdefault(word.lower(), exponent)
    return words


@cache
def scale_abbreviations(lang: str) -> dict[str, int]:
    """Scale abbreviations of ``lang`` (CLDR's short compact forms, and Canada's: French writes ``G$`` there)
    and the power of ten each stands for: {'K': 3, 'M': 6, 'B': 9, ...}; ``$120M``, ``3,5 M$``."""
    found = {}
    for name in (lang, f"{lang}_CA"):
        try:
            forms = _locale(name).compact_decimal_formats["short"]
        except (KeyError, AttributeError):
            continue
        for plural in forms.values():
            for power, pattern in dict(plural).items():
                abbreviation = str(getattr(pattern, "pattern", pattern)).replace("0", "").strip(" \u00a0.")
                if abbreviation and len(power) - 1 >= 3:
                    found.setdefault(abbreviation, len(power) - 1)
    return found


def format_abbreviated(value: Decimal, decimals: int, exponent: int, lang: str) -> str:
    """``value`` x 10^exponent for an amount written with a scale abbreviation: its scale word where there is
    one (``3,5 M$`` -> ``3.5 million``), else the number whole (``$120K`` -> ``120 000``)."""
    if exponent >= 6:
        return format_scaled(value, decimals, exponent, lang)
    whole = value * Decimal(10) ** exponent
    return format_number(whole, max(decimals - exponent, 0), lang)


def format_scaled(value: Decimal, decimals: int, exponent: int, lang: str) -> str:
    """``value`` x 10^exponent as ``lang``'s scale word writes it (4.2, 6 -> ``4,2 millions``)."""
    from babel.numbers import format_compact_decimal
    return format_compact_decimal(value * Decimal(10) ** exponent, format_type="long", locale=_locale(lang),
                                  fraction_digits=decimals)


def format_scaled_money(value: Decimal, decimals: int, exponent: int, word: str, lang: str) -> str:
    """An amount in a currency ``word`` with a scale word as ``lang`` writes it: English with the currency's
    sign (``€12 million``, ``$4.2 million``), French with the word (``12 millions d'euros``)."""
    text, word = format_scaled(value, decimals, exponent, lang), word.lower().rstrip("s")
    if lang == "fr":
        return f"{text} d'euros" if word == "euro" else f"{text} de {word}s"
    sign = {"dollar": "$", "euro": "€"}.get(word)
    return place_currency(text, sign, lang) if sign else f"{text} {word}s"


def place_currency(amount: str, sign: str, lang: str) -> str:
    """``amount`` with its currency ``sign`` (unchanged) where ``lang``'s currency pattern puts it:
    before (``$2.15``) or after, with the pattern's space (``2,15 $``)."""
    pattern = _locale(lang).currency_formats["standard"].pattern.split(";")[0]
    if pattern.startswith("¤"):
        return sign + amount if len(sign) == 1 else f"{sign}\u00a0{amount}"
    space = pattern[pattern.index("¤") - 1] if pattern.index("¤") > 0 and pattern[pattern.index("¤") - 1] in SPACES else ""
    return amount + space + sign


def format_time(hour: int, minute: int, half: str | None, lang: str) -> str | None:
    """A time of the clock (``half``: "a" or "p" on the 12-hour clock, None on the 24-hour one) as ``lang``
    writes it, where this knows the convention and it differs: French on the 24-hour clock as the Hansards write
    it (``11:59 p.m.``: ``23 h 59``; ``5 p.m.``: ``17 heures``), English on the 12-hour one (``18 h 05``: ``6:05
    p.m.``; ``8 h``: ``8 a.m.``); None elsewhere."""
    if half is not None and lang == "fr":
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
        return f"{hour} h {minute:02d}" if minute else f"{hour} heures"  # spaced as the Hansards space it
    if half is None and lang == "en":
        suffix = "a.m." if hour % 24 < 12 else "p.m."
        return f"{hour % 12 or 12}:{minute:02d} {suffix}" if minute else f"{hour % 12 or 12} {suffix}"
    return None


WRITTEN = re.compile(r"\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?!\d)|\d+(?:[.,\u00a0\u202f]\d+)*")  # 1 500, 12.5


def seam(text: str, lang: str) -> str:
    """A translation with its items in place, the model's own preposition before a day's article joined to it
    as ``lang`` writes it (French: ``à le 2 octobre`` -> ``le 2 octobre``, ``de le`` -> ``du``)."""
    if lang != "fr":
        return text
    text = re.sub(r"\b([àÀ]|[dD]e) le (?=\d)", lambda m: "le " if m.group(1) in "àÀ" else m.group(1)[0] + "u ", text)
    return re.sub(r"(^|[.!?] )le (?=\d)", lambda m: m.group(1) + "Le ", text)  # "À le" began the sentence


@cache
def month_names(lang: str) -> dict[str, int]:
    """``lang``'s month names (Babel's, wide, as written in running text) -> month number."""
    names = _locale(lang).months["format"]["wide"]
    return {name[:1].upper() + name[1:]: number for number, name in names.items()}


def format_day(day: int, month: int, year: int | None, lang: str) -> str | None:
    """A day of the calendar as ``lang`` writes it in running text, where this knows the convention (French:
    ``12 mai 2024``, ``1er mai``, Babel's month names); None elsewhere or for no such day (``31 June``)."""
    import datetime
    from babel.dates import format_date
    if lang != "fr":
        return None
    try:
        when = datetime.date(year or 2000, month, day)  # 2000: a leap year, so 29 February stands alone
    except ValueError:
        return None
    written = format_date(when, format="MMMM y" if year else "MMMM", locale=_locale(lang))
    return f"{'1er' if day == 1 else day} {written}"


def format_ordinal(n: int, lang: str) -> str | None:
    """The ordinal ``n`` in figures as ``lang`` writes it (French: ``1er``, ``2e``; English: ``1st``, ``11th``,
    ``22nd``); None where this does not know the convention (written as the source does)."""
    if lang == "fr":
        return "1er" if n == 1 else f"{n}e"
    if lang == "en":
        return f"{n}th" if n % 100 in (11, 12, 13) else f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return None


def on_day(day: str, lang: str, capital: bool) -> str:
    """A day as ``lang`` writes "on" that day (French: ``le 12 mai``; ``capital``: ``Le``, beginning a sentence)."""
    return _capitalised({"fr": "le"}[lang], capital) + " " + day


def at_time(time: str, lang: str, capital: bool) -> str:
    """A time as ``lang`` writes "at" it (English: ``at 6:05 p.m.``)."""
    return _capitalised({"en": "at"}[lang], capital) + " " + time


def time_range(first: str, last: str, lang: str, capital: bool) -> str:
    """From one time to another as ``lang`` writes it (English: ``from 8:30 a.m. to 4:30 p.m.``)."""
    word_from, word_to = {"en": ("from", "to")}[lang]
    return f"{_capitalised(word_from, capital)} {first} {word_to} {last}"


def _capitalised(word: str, capital: bool) -> str:
    return word[:1].upper() + word[1:] if capital else word
