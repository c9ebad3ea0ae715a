"""A number with its unit of measure (``25°C``, ``85 km/h``, ``1,000 kg``), read and written through Babel's
CLDR units: the source language's short symbol read, the target's written with its number convention and
spacing (``25°C`` -> ``25 °C``, ``6 ft`` -> ``6 pi``, ``2.5 GB`` -> ``2,5 Go``). The model, which rarely
saw a unit's symbol in the Hansards, wrote ``25°C`` as ``25 $``, ``1,000 kg`` as ``les 1 000`` and ``85 km/h``
as ``85 h 45``: the number and its unit are one item.

A symbol that is also a word or a letter (``in``, ``m``, ``g``, ``t``, French ``pi``) is not read as a unit:
``5 in the morning``, ``3 m`` (metres or millions) stay the model's.
"""
from __future__ import annotations

import re
from decimal import Decimal
from functools import cache

UNITS = ("temperature-celsius", "temperature-fahrenheit", "speed-kilometer-per-hour", "speed-mile-per-hour",
         "mass-kilogram", "mass-gram", "mass-milligram", "mass-pound", "mass-ounce", "length-kilometer",
         "length-centimeter", "length-millimeter", "length-mile", "length-foot", "volume-liter",
         "volume-milliliter", "volume-cubic-meter", "area-square-kilometer", "area-square-meter", "area-hectare",
         "energy-kilowatt-hour", "power-kilowatt", "power-megawatt", "power-gigawatt", "power-watt",
         "digital-gigabyte", "digital-megabyte", "digital-terabyte", "digital-kilobyte", "frequency-gigahertz",
         "frequency-megahertz", "frequency-hertz")
ALIASES = {"en": {"lbs": "mass-pound", "kph": "speed-kilometer-per-hour", "ml": "volume-milliliter",
                  "l": None, "° C": "temperature-celsius", "° F": "temperature-fahrenheit"},
           "fr": {"° C": "temperature-celsius", "° F": "temperature-fahrenheit", "km/heure": "speed-kilometer-per-hour",
                  "Ko": "digital-kilobyte"}}  # as Mo, Go are written
WORDS = {"in", "pi", "po", "t", "m", "g", "l", "L", "h", "mi", "oz", "ha", "W", "Hz"}  # a word, or a letter too ambiguous


def _babel(lang: str):
    from rnnsearch.text.numbers import _locale
    return _locale(lang)


@cache
def symbols(lang: str) -> dict[str, str]:
    """``lang``'s short unit symbols that read as units alone -> CLDR unit: {'°C': 'temperature-celsius',
    'km/h': ..., 'kg': ...}."""
    from babel.units import format_unit
    found = {}
    for unit in UNITS:
        written = format_unit(7, unit, length="short", locale=_babel(lang))
        symbol = written.replace("7", "", 1).strip(" \u00a0\u202f")
        if symbol and symbol not in WORDS:
            found[symbol] = unit
    for symbol, unit in ALIASES.get(lang, {}).items():
        if unit is None:
            found.pop(symbol, None)
        else:
            found[symbol] = unit
    return found


@cache
def pattern(lang: str) -> str:
    """A regular expression for a unit symbol after a number (group ``unit``), the longest first."""
    names = sorted(symbols(lang), key=len, reverse=True)
    return r"(?P<unit>" + "|".join(map(re.escape, names)) + r")(?![\w/²³])" if names else "(?!x)x"


def format_measure(value: Decimal, decimals: int, symbol: str, src_lang: str, tgt_lang: str) -> str | None:
    """``value`` in ``symbol``'s unit (as ``src_lang`` writes it) as ``tgt_lang`` writes it: Babel's short
    form, the digits after the decimal mark as written (None: not a unit this reads)."""
    from babel.units import format_unit
    unit = symbols(src_lang).get(symbol)
    if unit is None:
        return None
    digits = "#,##0" + ("." + "0" * decimals if decimals else "")
    return format_unit(value, unit, length="short", format=digits, locale=_babel(tgt_lang))
