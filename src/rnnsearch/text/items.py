"""What must come through a translation unchanged: URLs, e-mail addresses, file paths, phone numbers, dates,
version strings, inline code, names joined by an ampersand (``AT&T``, ``R&D``), formulas (``7 > 2``), postal
codes (``K1A 0A6``), and numbers and amounts (written again in the target language's convention:
``text/numbers.py``). A number is an item where it has a group or decimal symbol (even one the vocabulary
holds: the model writes ``0.3`` as a number it knows, not in the target's convention); an amount where the
vocabulary lacks its currency sign (``€599``: the model would write dollars); a plain integer the vocabulary
lacks or holds only among its rarer units (the model wrote ``1943`` for ``2020``), verbatim; a frequent one
(``15``, ``1999``), an amount in a currency the model knows (``$21 billion``: ``21 milliards de dollars``, its
number an item where it is one) and the per cent sign (``p. 100`` in the Hansards' French) are the model's to
translate, as it learned to. A time of the 12-hour clock is an item where the target's convention is known
(``11:59 p.m.``: ``23 h 59`` in French; the model wrote ``17 h 59``), else the model's; a name with an
apostrophe (``O'Rourke-Nakamura``) is one item, which the tokenizer would cut in two.

``find(text, src_lang, tgt_lang)`` gives the items of one line, left to right, none overlapping: where two patterns
match the same characters the one listed first wins (a URL's digits are the URL's), each with its ``rendering``."""
from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

import regex

from rnnsearch.data import slotting
from rnnsearch.text import numbers, units, zones
from rnnsearch.text.program_text import ADDRESS, PLACEHOLDER, WRITTEN_TAG

VERBATIM = ("url", "email", "path", "phone", "datetime", "version", "code", "handle", "acronym", "doi", "identifier",
            "label", "name", "formula", "symbol", "postcode", "menu", "firm", "emoji", "placeholder", "tag")
NUMERIC = ("amount", "money", "measure", "number", "ordinal")
TRAILING = ".,;:!?'\"»”’)]}"  # a URL's or path's last characters that belong to the sentence
TLDS = "com|org|net|gov|edu|int|mil|info|io|eu|ca|fr|uk|us|de|be|ch|nl|es|it|au|nz|qc|on|app|dev"
EXTENSIONS = ("txt|pdf|csv|tsv|docx?|xlsx?|pptx?|odt|json|ya?ml|xml|html?|zip|gz|tgz|bz2|xz|tar|py|js|ts|java|"
              "exe|msi|dmg|png|jpe?g|gif|svg|webp|mp3|mp4|md|ini|cfg|conf|log|sh|bat|sql|xliff|xlf|po|srt|vtt")
REFERENCE_WORDS = r"(?:[Vv]ersion|[Rr]elease|[Ss]ection|[Cc]hapter|[Aa]rticle|[Cc]lause|[Ff]igure|[Tt]able|" \
                  r"[Ss]tep|[Pp]aragraph|[Rr]ule|[Ss]ubsection|[Aa]nnex|[Aa]ppendix|[Pp]age)s?"
PRERELEASE = r"(?:-[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?"  # a version's -beta, -rc1 (semantic versioning)
MINUS = "-\u2212"  # a number's sign: the hyphen-minus and the minus sign
HYPHENS = str.maketrans("\u2010\u2011", "--")  # a hyphen and a non-breaking one, read as "-" (kept as written)
LABEL = rf"(?<![\w/.@-]){slotting.LABEL}(?![\w/-])"  # capitals, a hyphen or none, digits: as training slots them
WORD = r"[A-ZÀ-ÖØ-Þ][^\W\d_]+"  # a capitalised word (L'Heureux-Dubé)
LABEL_WORDS = rf"{WORD}(?: {WORD}){{0,3}}"  # a label, Save As; a menu path begins with one word (Open Setup > Users)
DAY_FIRST = ("en",)  # sources whose days written day first are items (French ones are the model's: the Hansards')
TIME = {  # a time of the clock as each language writes it: 11:59 p.m., 5.30 p.m. (12-hour), 18 h 05 (24-hour)
    "en": r"(?<![\w:.])(?P<hour>1[0-2]|0?[1-9])(?:[:.](?P<minute>[0-5]\d))?\s?"
          r"(?:(?P<half>[ap])\.?m\.?|(?P<caps>[AP])\.?M\.?)(?![\w])",  # 7 PM: the model wrote "au premier ministre"
    "fr": r"(?:(?P<from>\b[Dd]e\s)(?P<hour0>[01]?\d|2[0-3])\s?h\s?(?P<minute0>[0-5]\d)?\sà\s|(?P<at>(?<!['’])\b[àÀ]\s))?"
          r"(?<![\w:.,])(?P<hour>[01]?\d|2[0-3])\s?h\s?(?P<minute>[0-5]\d)?(?![\w])",  # à 18 h 05, de 8 h à 16 h 30
}
EMOJI = r"(?:(?=[\p{Extended_Pictographic}\p{Regional_Indicator}])\X|[0-9#*]\uFE0F?\u20E3)+"  # grapheme clusters
# (regex's \X), keycaps (1️⃣: a digit, its variation selector and the combining keycap) among them
MONEY_WORDS = "dollars?|euros?|cents?"  # "25 dollars": the model wrote "25 cents", "10 dollars": "10"
PER_CENT = r"[ \u00a0\u202f]?%"  # a per cent sign after a number, as French spaces it or not
OPERATOR = r"(?:[<>]=?|!=|==|[=≠≤≥±×÷])"  # a comparison or an operation: the model wrote 7 > 2 as "7 est 2"
ORDINAL = {"en": r"(?<![\w.,])\d+(?:st|nd|rd|th)(?!\w)",  # 1er, 3e; not 1e-5 (a power of ten)
           "fr": r"(?<![\w.,])\d+(?:er|re|ère|e|ème|nde?|es|èmes)(?![\w]|[-+\u2212]?\d)"}
NAME = {  # a name with an apostrophe the tokenizer would cut (French: not an elision, L'Europe, Qu'Ottawa)
    "en": rf"(?<![\w'’-])(?:{WORD}-)*[A-Z][a-z]{{0,3}}['’]{WORD}(?:-{WORD})*(?![\w'’])",  # McAllister-O'Neill
    "fr": rf"(?<![\w'’-])(?:{WORD}-)*(?!(?:Qu|Jusqu|Lorsqu|Puisqu|Quoiqu|Presqu)['’])(?:[A-Z][a-z]{{1,3}}|O|N)['’]{WORD}"
          rf"(?:-{WORD})*(?![\w'’])",
}


@dataclass(frozen=True)
class Item:
    start: int        # character offsets in the line
    end: int
    kind: str         # one of VERBATIM or NUMERIC, or "given" (a span of Source.slots: text/segments.with_slots)
    text: str         # as the source writes it
    rendering: str    # what the output writes in its place


@cache
def _currency_signs() -> str:
    """Every currency sign (Unicode category Sc) as a character class's contents."""
    return "".join(re.escape(chr(c)) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Sc")


@cache
def _patterns(lang: str) -> list[tuple[str, re.Pattern]]:
    """(kind, pattern) in priority order for a source in ``lang``."""
    num = numbers.number_pattern(lang)
    months = "|".join(numbers.month_names(lang))
    scales = "|".join(sorted(map(re.escape, numbers.scale_words(lang)), key=len, reverse=True)) or "(?!x)x"
    abbrs = "|".join(sorted(map(re.escape, numbers.scale_abbreviations(lang)), key=len, reverse=True)) or "(?!x)x"
    sign = rf"(?:[A-Z]{{1,2}})?[{_currency_signs()}]"
    found = [
        ("emoji", EMOJI),  # 👍🏽 and 👨‍👩‍👧 whole: the tokenizer cut them at the modifier and the joiners
        ("placeholder", PLACEHOLDER),
        ("tag", WRITTEN_TAG),
        ("identifier", ADDRESS),  # a tag written as text: "Use the &lt;b&gt; tag" came out "&lt;"
        ("email", r"<[\w.+-]+(?:['’][\w.+-]+)*@[\w-]+(?:\.[\w-]+)+>"  # <a@b.org> whole: the model lost its brackets
                  r"|\b[\w.+-]+(?:['’][\w.+-]+)*@[\w-]+(?:\.[\w-]+)+"),  # o'neil@x.ie: an apostrophe inside
        ("doi", r"\b10\.\d{4,9}/[^\s<>\"]+"),
        ("url", rf"<(?:https?|ftp)://[^\s<>\"]+>|\b(?:https?|ftp)://[^\s<>\"]+|\bwww\.[^\s<>\"]+|(?<![@\w.-])[a-z0-9][\w-]*(?:\.[\w-]+)*\.(?:{TLDS})\b(?:/[^\s<>\"]*)?"),
        ("code", r"`[^`\n]+`|(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w-]|\.\w)"),  # snake_case: "_ snake"
        ("path", rf"(?<![\w/])(?:~|\.{{1,2}})?(?:/[\w.+-]+){{2,}}/?|\b[A-Za-z]:\\[^\s<>\"]+"  # a file's name whole:
                 rf"|(?<![\w/.@-])[\w-]+(?:\.[\w+-]+)*\.(?:{EXTENSIONS})\b"),  # rnnsearch-2.0.1.tar.gz, report_2024.pdf
        ("handle", r"(?<![\w@])[@#][A-Za-z_]\w+"),
        ("acronym", r"(?<![\w&])[A-Z][A-Za-z]{0,3}&[A-Z][A-Za-z]{0,3}(?![\w&])"),  # AT&T, R&D: one name, not "AT & T"
        ("firm", rf"(?<![\w&-]){WORD}(?: {WORD})? & {WORD}(?: {WORD})?(?![\w&-])"),  # Procter & Gamble: the
        ("menu", rf"(?<![\w>-]){WORD}(?: ?(?:>|→|›) ?{LABEL_WORDS})+(?![\w-])"),  # model wrote "Procter & lobbied"
        ("formula", rf"(?<![\w.,</])(?:(?:{num}|[A-Za-z])\s?{OPERATOR}\s?[{MINUS}]?(?:{num}|[A-Za-z])"  # x = 4, 7 > 2
                    rf"|{OPERATOR}\s?[{MINUS}]?(?:{num}))(?![\w.,]\d|[\w<>/])"),  # < 10: the model wrote "de 10 <"
        ("symbol", rf"(?<!\S)(?:{OPERATOR}|&)(?!\S)"),  # alone between words: yes >= much, I & you (& is <unk>)
        ("postcode", r"(?<![\w-])[A-CEGHJ-NPR-TVXY]\d[A-CEGHJ-NPR-TV-Z][ \u00a0]?\d[A-CEGHJ-NPR-TV-Z]\d(?![\w-])"  # K1A 0A6
                     r"|(?<![\w-])[A-Z]{1,2}\d[A-Z\d]? \d[ABD-HJLNP-UW-Z]{2}(?![\w-])"),  # SW1A 2AA: the model split them
        ("datetime", r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
        ("identifier", r"(?<![\w-])\d+(?:-[\dX]+){3,}(?![\w-])|(?<![\w-])\d+-[A-Z]{1,2}(?![\w-])"  # ISBN, room 237-C
                       r"|(?<![\w&#])#[A-Za-z]{0,3}-?\d+(?:-\d+)*(?![\w-])"  # order #A-10442: the model dropped "#"
                       r"|(?<![\w.])(?<!\d )pp?\.\s?(?!100\b)\d+(?:[-–]\d+)?(?!\w|[.,]\d)"),  # p. 12 (not 15 p. 100): "12%"
        ("phone", r"(?<![\w+])\+\d{1,3}(?:[\s.-]\(?\d{1,4}\)?){2,5}(?![\w-])"
                  r"|(?<![\w+])(?:\(\d{2,4}\)[\s.-]?|\d{1,4}[.-])(?:\d{2,4}[\s.-]){1,3}\d{2,4}(?![\w-])"
                  r"|(?<![\w+.,])(?:1[\s.-])?\d{3}[\s.-]\d{3}[\s.-]\d{4}(?![\w-])"  # 613 555 0199, 1 800 555-0123
                  r"|(?<![\w+.,-])\d{3}-\d{4}(?![\w-])"  # 555-0142: a number would read 555 and 0142 apart
                  r"|(?<![\w+.,])0\d(?:[ .\u00a0]\d{2}){4}(?![\w-])"),  # 01 42 68 53 00: the model kept "01 42 00"
        ("time", TIME.get(lang, "(?!x)x")),
        ("date", rf"(?<![\w.,/-])(?:(?P<on>[Oo]n) )?(?:(?P<day>[0-3]?\d)(?:(?:st|nd|rd|th)(?: of)?)? (?P<month>{months})"
                 rf"|(?P<month2>{months}) (?P<day2>[0-3]?\d)(?:st|nd|rd|th))(?:,? (?P<year>\d{{4}}))?(?![\w'’])"
                 if lang in DAY_FIRST else "(?!x)x"),  # 12 May 2024: the model wrote "12 2024", "2024 mai"; May 12th
        ("ordinal", ORDINAL.get(lang, "(?!x)x")),  # 1st, 2e: the model wrote "1 trimestre", "3e" as "quarter"
        ("name", NAME.get(lang, "(?!x)x")),  # O'Rourke-Nakamura, N'Diaye: one name, not O' and 'Rourke
        ("version", rf"\b[vV]\d+(?:\.\d+)+{PRERELEASE}\b|\b\d+(?:\.\d+){{2,}}{PRERELEASE}\b"
                    rf"|\b{REFERENCE_WORDS} (?P<ref>\d+(?:[.,]\d+)+{PRERELEASE})\b"),
        ("label", LABEL),  # Bill C-45, Form T4A, B52: only with find's ``labels``
        ("amount", rf"(?P<sign>{sign})\s?(?P<num>{num})(?:\s(?P<scale>{scales})\b|(?P<abbr>{abbrs})(?![\w$]))?"
                   rf"|(?P<num2>{num})(?:\s(?P<scale2>{scales})\b|\s?(?P<abbr2>{abbrs})(?=\s?[$€£]))?\s?(?P<sign2>{sign})"
                   rf"(?!\w)"),  # $21 billion, $120M, 3,5 M$
        ("money", rf"(?<![\w.,])(?P<num3>{num})(?:\s(?P<scale3>{scales}))?\s(?:de\s|d['’])?(?P<word>{MONEY_WORDS})\b"),
        ("measure", rf"(?<![\w.,])(?P<num5>{num})[ \u00a0\u202f]?{units.pattern(lang)}"),  # 25°C: "25 $"
        ("number", rf"(?<![\w.,])(?:{num})(?![\w])"),
    ]
    return [(kind, regex.compile(p) if kind == "emoji" else re.compile(p)) for kind, p in found]


def find(text: str, src_lang: str, tgt_lang: str, convert_numbers: bool = True, known=None,
         frequent=None, labels: bool = False) -> list[Item]:
    """The items of ``text`` left to right (none overlapping); a number is an item only where it has a group or decimal
    symbol (a plain integer is the model's to copy); ``convert_numbers``: False writes numbers and amounts as the source
    does. ``known(word)``: whether the model's source vocabulary holds a word: a currency sign it holds and an amount's
    scale word are the model's (``$21 billion`` -> ``21 milliards de dollars``), the amount's number still an item.
    ``frequent(word)``: the vocabulary holds it among its most frequent units: a plain integer is the model's only then
    (it copies ``1999``; it wrote ``1943`` for a rare ``2020``), else an item written verbatim. ``labels``: a label of
    capitals, a hyphen and digits (``C-45``) is an item too (for a model trained with slots, data/slotting.py)."""
    known = known or (lambda word: False)
    frequent = frequent or (lambda word: True)
    taken: list[Item] = []
    held: list[tuple[int, int]] = []  # amounts left to the model: no number item inside them either
    for pattern_kind, pattern in _patterns(src_lang):
        if pattern_kind == "label" and not labels:
            continue
        for m in pattern.finditer(text.translate(HYPHENS)):  # 613&#8209;555&#8209;0123 read as 613-555-0123
            kind = pattern_kind
            start, end = m.span("ref") if m.groupdict().get("ref") else m.span()  # a reference: its number alone
            if kind in ("url", "path", "doi"):
                end = _trimmed(text, start, end)
            if end <= start or any(start < t.end and t.start < end for t in taken) or any(a <= start < b for a, b in held):
                continue
            negative = kind in NUMERIC and _signed(text, start)  # a negative amount is an item whole
            if kind in ("amount", "money") and _left_to_model(m, kind, known, frequent) and not negative:
                held.append((start, end))
                start, end = m.span(next(g for g in ("num", "num2", "num3") if m.groupdict().get(g)))
                kind = "number"
            if kind in ("time", "date"):
                taken += (_time(text, m, src_lang, tgt_lang) if kind == "time" else _date(text, m, src_lang, tgt_lang)
                          ) if convert_numbers else []
                continue
            item_text = text[start - negative:end]
            if kind == "number" and item_text.isdigit() and (frequent(item_text) or _in_time(text, start, end)
                                                             or re.match(r"[A-Za-z]-", text[start - 2:start])):
                continue  # the model's; a label's digits (C-223 came out "C- 223") go with its letters
            if kind == "ordinal" and known(item_text) or kind == "measure" and _models_unit(m, src_lang, tgt_lang):
                continue  # the model's, as it learned them: 35th -> 35e, 300 kg (a number item in it still found)
            rendering = _render(kind, m, src_lang, tgt_lang) if convert_numbers and kind in NUMERIC else \
                _formula(item_text, src_lang, tgt_lang) if convert_numbers and kind == "formula" else None
            rendering = item_text if rendering is None else text[start - 1] * negative + rendering
            per_cent = re.match(PER_CENT, text[end:]) if kind == "number" and tgt_lang == "en" else None
            if per_cent:  # "7,4 %" -> "7.4%": English writes it so (the model dropped "%" after a slot)
                end, item_text, rendering = end + per_cent.end(), item_text + per_cent.group(), rendering + "%"
            taken.append(Item(start - negative, end, kind, item_text, rendering))
    return sorted(taken, key=lambda t: t.start)


def _time(text: str, m: re.Match, src_lang: str, tgt_lang: str) -> list[Item]:
    """A time of the clock and a zone after it (text/zones.py) as an item in the target's convention; none where this
    does not know it (the model's, as it learned it). A full stop that also ends the sentence stays the sentence's."""
    groups = m.groupdict()
    half = groups.get("half") or groups.get("caps")
    rendering = numbers.format_time(int(m.group("hour")), int(m.group("minute") or 0), half, tgt_lang)
    if rendering is not None and groups.get("from"):  # "de 8 h 30 à 16 h 30": "from 8:30 a.m. to 4:30 p.m."
        first = numbers.format_time(int(m.group("hour0")), int(m.group("minute0") or 0), None, tgt_lang)
        rendering = numbers.time_range(first, rendering, tgt_lang, m.group("from")[0].isupper())
    elif rendering is not None and groups.get("at"):  # "à 18 h 05": "at 6:05 p.m." (the model wrote "with")
        rendering = numbers.at_time(rendering, tgt_lang, m.group("at")[0].isupper())
    start, (end, zone) = m.start(), zones.after(text, m.end(), src_lang, tgt_lang)
    if not zone and text[end - 1] == "." and re.match(r"\s*$|\s+[\"«“(]?[A-Z]", text[end:]):
        end -= 1  # "before 5 p.m." ending a sentence
    return [] if rendering is None else [Item(start, end, "time", text[start:end], rendering + zone)]


def _formula(text: str, src_lang: str, tgt_lang: str) -> str:
    """A formula with each number that has a group or decimal symbol in the target's convention (``x = 3.5``:
    ``x = 3,5`` in French); the rest as written."""
    def number(m: re.Match) -> str:
        value = None if m.group().isdigit() else numbers.parse(m.group(), src_lang)
        return m.group() if value is None else numbers.format_number(*value, tgt_lang)
    return re.sub(numbers.number_pattern(src_lang), number, text)


def _date(text: str, m: re.Match, src_lang: str, tgt_lang: str) -> list[Item]:
    """A day written day first (``12 May 2024``) as an item in the target's convention; none where unknown (the model's)."""
    month = numbers.month_names(src_lang)[m.group("month") or m.group("month2")]
    year = int(m.group("year")) if m.group("year") else None
    rendering = numbers.format_day(int(m.group("day") or m.group("day2")), month, year, tgt_lang)
    if rendering is not None and m.group("on"):  # "on 12 May": "le 12 mai" (the model wrote "sur les 12 mai")
        rendering = numbers.on_day(rendering, tgt_lang, m.group("on")[0].isupper())
    return [] if rendering is None else [Item(m.start(), m.end(), "date", m.group(), rendering)]


def _models_unit(m: re.Match, src_lang: str, tgt_lang: str) -> bool:
    """Whether a measure's unit is the model's: a symbol of letters alone that the target writes the same
    (``kg``, ``km``: copied through <unk>), not ``°C``, ``km/h``, ``m²`` (cut or lost) or ``GB`` (``Go``)."""
    symbol = m.group("unit")
    return symbol.isalpha() and units.symbols(src_lang).get(symbol) is not None and \
        units.format_measure(Decimal(1), 0, symbol, src_lang, tgt_lang).endswith(symbol)


def _in_time(text: str, start: int, end: int) -> bool:
    """Whether the integer text[start:end] is an hour or minutes (``6:05``): a time is the model's."""
    return text[start - 1:start] == ":" and text[start - 2:start - 1].isdigit() or \
        text[end:end + 1] == ":" and text[end + 1:end + 2].isdigit()


def _left_to_model(m: re.Match, kind: str, known, frequent) -> bool:
    """An amount in a known currency sign is the model's with a scale word (``$21 billion``: ``21 milliards de
    dollars``) or a plain integer (``$200``); an item whole with a group or decimal symbol (the model wrote ``$ 12
    500 $`` around its slot), negative (``find``: ``-$500`` lost its minus), with a scale abbreviation (``$120M``:
    ``$ 120M $``) or its sign after a scale word (``3,2 milliards $``: ``$3.2``). One in currency words is the
    model's with a scale word and a frequent currency word (``4,2 millions de dollars``; ``d'euros``: ``$12 million``)."""
    if kind == "money":
        return bool(m.group("scale3")) and known(m.group("word")) and frequent(m.group("word"))
    if not known(m.group("sign") or m.group("sign2")) or m.group("abbr") or m.group("abbr2") or m.group("scale2"):
        return False
    return bool(m.group("scale")) or (m.group("num") or m.group("num2")).isdigit()


def _signed(text: str, start: int) -> bool:
    """Whether a minus sign stands just before ``start`` as a number's sign (``-4.5%``, ``-$500``), not
    as a hyphen after a word or a range's dash (``A-4``, ``1990-1995``)."""
    return start > 0 and text[start - 1] in MINUS and (start == 1 or not (text[start - 2].isalnum()
                                                                          or text[start - 2] in MINUS))


def _trimmed(text: str, start: int, end: int) -> int:
    """``end`` without the sentence's punctuation after a URL or path (a ``)`` stays when it closes one
    the item opened)."""
    while end > start and text[end - 1] in TRAILING:
        if text[end - 1] == ")" and text[start:end].count("(") >= text[start:end].count(")"):
            break
        end -= 1
    return end


def _render(kind: str, m: re.Match, src_lang: str, tgt_lang: str) -> str | None:
    """A number or amount in the target's convention (None: as written)."""
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    written = groups.get("num") or groups.get("num2") or groups.get("num3") or groups.get("num5") or m.group(0)
    if kind == "ordinal":
        return numbers.format_ordinal(int(re.match(r"\d+", written).group()), tgt_lang)
    value = numbers.parse(written, src_lang)
    if value is None:
        return None
    amount, decimals = value
    if kind == "measure":
        return units.format_measure(amount, decimals, m.group("unit"), src_lang, tgt_lang)
    if kind == "money" and groups.get("scale3"):  # "12 millions d'euros": "€12 million" (the model wrote "$12 million")
        exponent = numbers.scale_words(src_lang)[groups["scale3"].lower()]
        return numbers.format_scaled_money(amount, decimals, exponent, m.group("word"), tgt_lang)
    if kind == "money":
        space = m.group(0)[len(written):m.start("word") - m.start()]  # as the source spaces it (&nbsp;)
        number = written if written.isdigit() else numbers.format_number(amount, decimals, tgt_lang)
        return number + space + m.group("word")
    if kind == "number" and written.isdigit():
        return written  # a year or a count as the source writes it: 2024, not 2 024
    if kind == "number":
        return numbers.format_number(amount, decimals, tgt_lang)
    scale, abbreviation = groups.get("scale") or groups.get("scale2"), groups.get("abbr") or groups.get("abbr2")
    if abbreviation:
        exponent = numbers.scale_abbreviations(src_lang)[abbreviation]
        text = numbers.format_abbreviated(amount, decimals, exponent, tgt_lang)
    elif scale:
        exponent = numbers.scale_words(src_lang)[scale.lower()]
        text = numbers.format_scaled(amount, decimals, exponent, tgt_lang)
    else:
        text = numbers.format_number(amount, decimals, tgt_lang) if "." in written or "," in written or \
            any(s in written for s in numbers.SPACES) else written
    return numbers.place_currency(text, groups.get("sign") or groups["sign2"], tgt_lang)
