"""A time zone written after a time of the clock (``8 a.m. Eastern Time``, ``18 h HE``), named again in the
target language through Babel's CLDR names (``8 heures (heure de l’Est)``, ``6 p.m. ET``): part of the time's
item (text/items.py), so that the zone is neither read as a sentence of its own nor lost (``We open at 8 a.m.
Eastern Time on Monday.`` came out ``Nous avons ouvert les 8 heures. C'est lundi dernier.``, and ``Eastern Time.``
alone ``Time``). A long name goes in brackets (``17 heures (heure de l’Est)``), an abbreviation after a space
(``17 heures HE``); ``UTC`` and ``GMT`` are written as they are.
"""
from __future__ import annotations

import re
from functools import cache

ZONES = ("America/St_Johns", "America/Halifax", "America/Toronto", "America/Winnipeg", "America/Edmonton",
         "America/Vancouver")  # Canada's, whose names English and French both write
FORMS = [(width, variant) for width in ("long", "short") for variant in ("generic", "standard", "daylight")]
UNIVERSAL = ("UTC", "GMT")


@cache
def _names(lang: str) -> dict[str, tuple[str, str, str]]:
    """Each zone's name as ``lang`` writes it -> (zone, width, variant); {} where Babel has no such locale."""
    from babel import Locale, UnknownLocaleError
    from babel.dates import get_timezone, get_timezone_name
    try:
        locale = Locale.parse(f"{lang}_CA")
    except (UnknownLocaleError, ValueError):
        return {}
    names = {u: (u, "short", "generic") for u in UNIVERSAL}
    for zone in ZONES:
        for width, variant in FORMS:
            name = get_timezone_name(get_timezone(zone), width=width, zone_variant=variant, locale=locale)
            names.setdefault(name, (zone, width, variant))
    return names


@cache
def _pattern(lang: str) -> re.Pattern | None:
    names = sorted(_names(lang), key=len, reverse=True)
    alternatives = "|".join(re.escape(n).replace("’", "['’]") for n in names)
    return re.compile(rf",?[ \u00a0](\()?({alternatives})(?(1)\))(?![\w&'’-])") if names else None


def after(text: str, end: int, src_lang: str, tgt_lang: str) -> tuple[int, str]:
    """(where the zone written at ``text[end:]`` ends, the zone in ``tgt_lang`` with its spacing) for a zone right
    after a time that ends at ``end``; (end, "") where none is written there or either language has no names."""
    pattern, target = _pattern(src_lang), {v: k for k, v in reversed(_names(tgt_lang).items())}
    m = pattern.match(text, end) if pattern and target else None
    zone, width, variant = _names(src_lang)[m.group(2).replace("'", "’")] if m else ("", "", "")
    name = zone if zone in UNIVERSAL else target.get((zone, width, variant))
    if not m or name is None:
        return end, ""
    return m.end(), f" ({name})" if width == "long" or m.group(1) else f" {name}"
