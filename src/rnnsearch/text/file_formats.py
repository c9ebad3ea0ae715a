"""The plain formats of ``rnnsearch translate-file`` (``text/files.py``), each read and written by its
library: a reader ``read_KIND(path, target_lang, retranslate)`` gives a Document, its pieces to
translate and a ``write(outputs)`` that gives the file's bytes with each output in its piece's place
(None: the piece was not translated, and stays as it was). XLIFF: ``text/xliff_file.py``; DOCX:
``text/docx_file.py``.

- text: one piece a line (blank lines kept), written back with the file's byte-order mark and line endings.
- html: the page, one piece read as ``--markup html`` reads it, each block a unit (one not translated
  keeps its source); ``<html lang>`` names the target language.
- po, pot (translate-toolkit): each msgid (and msgid_plural) without a msgstr; the header, obsolete units
  and units with a msgstr (fuzzy ones too: a draft, or a translation to review) are left alone; a
  translation is marked fuzzy, for review. Placeholders
  (printf's ``%s``, ``%1$d``, Python's ``%(name)s``, Qt's ``%1``, ``{0}``, ``{name}``, ``@@x@@``: the
  patterns of translate-toolkit's placeables) are slots the model copies, restored verbatim; a
  ``%`` pattern with a space in it (``% d``) only in a unit flagged c-format or python-format.
- srt (pysrt), vtt (webvtt-py): each cue's text, its lines joined (its ``<i>``, ``<b>`` tags kept as
  HTML; a VTT cue's voice ``<v Name>`` and an SRT cue's override codes ``{\\an8}`` kept in front), written
  back on as many lines as it had; times and numbers untouched. A subtitle file pysrt or webvtt-py cannot
  read whole (a block of a .vtt without its timing) is refused, not read in part.
"""
from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rnnsearch.errors import UsageError


@dataclass
class Piece:
    text: str                 # what to translate (with its markup, as ``mode`` reads it)
    mode: str | None = None   # None, "xml" or "html"
    name: str = ""            # where it is in the file, as an error names it
    slots: tuple = ()         # (start, end, written as): spans carried verbatim (Source.slots)
    partial: bool = False     # its blocks translated one by one: one not translated keeps its source


@dataclass
class Document:
    pieces: list
    write: Callable[[list], bytes]
    skipped: int = 0


def read_text(path: Path, lang: str, retranslate: bool) -> Document:
    """One piece a line, split at ``\n`` alone (not at the other breaks ``str.splitlines`` knows, such
    as U+2028 inside a line); the file written back with its byte-order mark, each line's own ending
    (``\r\n`` or ``\n``) and its last line's (none, where the file ends without one)."""
    raw = path.read_bytes().decode("utf-8")  # as written: no newline translation
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    body = raw[len(bom):]
    *ended, last = body.split("\n")
    lines = [(line[:-1], "\r\n") if line.endswith("\r") else (line, "\n") for line in ended] + ([(last, "")] if last else [])
    pieces = [Piece(text, None, f"line {n}") for n, (text, _) in enumerate(lines, 1)]

    def write(outputs: list) -> bytes:
        return (bom + "".join((o if o is not None else text) + end for o, (text, end) in zip(outputs, lines))).encode()
    return Document(pieces, write)


def read_html(path: Path, lang: str, retranslate: bool) -> Document:
    page = path.read_text(encoding="utf-8")
    return Document([Piece(page, "html", "the page", partial=True)],
                    lambda outputs: (page if outputs[0] is None else _with_lang(outputs[0], lang)).encode("utf-8"))


LANG = re.compile(r"""(\slang\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)


def _with_lang(page: str, lang: str) -> str:
    """The page with its ``<html>`` element's ``lang`` naming ``lang`` (added where it has none)."""
    from rnnsearch.text.html_tree import parse_tree
    found = [n for n in parse_tree(page).children if n.tag == "html"]
    if not found:
        return page
    tag, at = found[0].raw, found[0].begin
    new = LANG.sub(lambda m: f'{m.group(1)}"{lang}"', tag, count=1) if LANG.search(tag) else \
        f'<{tag[1:5]} lang="{lang}"{tag[5:]}'
    return page[:at] + new + page[at + len(tag):]


def _placeholders(text: str, printf: bool) -> tuple:
    """The spans of ``text`` that are software placeholders (translate-toolkit's placeables), left to
    right, none overlapping; ``printf``: ``%`` patterns with a space in them too."""
    from translate.storage.placeables import general as g
    kinds = (g.PythonFormattingPlaceable, g.FormattingPlaceable, g.QtFormattingPlaceable,
             g.JavaMessageFormatPlaceable, g.BracePlaceable, g.DoubleAtPlaceable)
    found = sorted((m.start(), -m.end(), m.group()) for k in kinds for m in k.regex.finditer(text)
                   if m.group() != "%%" and (printf or not any(c.isspace() for c in m.group())))
    spans, end = [], 0
    for a, b, written in found:
        if a >= end:
            spans.append((a, -b, written))
            end = -b
    return tuple(spans)


def read_po(path: Path, lang: str, retranslate: bool) -> Document:
    from translate.storage import pypo
    store = pypo.pofile.parsefile(str(path))
    todo, skipped, pieces = [], 0, []
    for unit in store.units:
        if unit.isheader() or unit.isobsolete() or not unit.source:
            continue
        if _has_msgstr(unit) and not retranslate:  # fuzzy too: a person's draft, or a translation to review
            skipped += 1
            continue
        sources = [str(s) for s in unit.source.strings] if unit.hasplural() else [unit.source]
        todo.append((unit, len(pieces), len(sources)))
        printf = unit.hastypecomment("c-format") or unit.hastypecomment("python-format")
        where = f"msgid at {unit.getlocations()[0]}" if unit.getlocations() else "msgid"
        pieces += [Piece(s, None, f"{where} ({s[:30]!r})", slots=_placeholders(s, printf)) for s in sources]
    if store.units and store.units[0].isheader():
        store.updateheader(add=True, Language=lang)

    def write(outputs: list) -> bytes:
        for unit, first, count in todo:
            done = outputs[first:first + count]
            if any(o is None for o in done):
                continue
            if unit.hasplural():
                unit.target = done + [done[-1]] * max(0, len(unit.target.strings or []) - len(done))
            else:
                unit.target = done[0]
            unit.markfuzzy(True)  # machine translated: for review
        return bytes(store)
    return Document(pieces, write, skipped)


def _has_msgstr(unit) -> bool:
    """Whether a PO unit has a translation, fuzzy or not (translate-toolkit's ``istranslated`` says no for a
    fuzzy one, whose msgstr a person wrote or is to review: it was overwritten)."""
    return any(str(s).strip() for s in unit.target.strings) if unit.hasplural() else bool(str(unit.target or "").strip())


def _rewrapped(text: str, lines: int) -> str:
    """``text`` on ``lines`` lines (a cue's own count), cut at the spaces nearest to even lengths."""
    words = re.split(r" (?![^<>]*>)", text)  # at the spaces outside tags
    if lines <= 1 or len(words) < 2:
        return text
    out, start = [], 0
    for k in range(1, lines):
        goal, cut = len(text) * k / lines, start + 1
        while cut < len(words) - 1 and len(" ".join(words[:cut])) < goal:
            cut += 1
        out.append(" ".join(words[start:cut]))
        start = cut
        if start >= len(words):
            break
    return "\n".join(out + ([" ".join(words[start:])] if start < len(words) else []))


OVERRIDE = re.compile(r"(?:\{\\[^}]*\}\s*)*")  # an SRT cue's leading override codes (ASS's {\an8}, {\i1})


def read_srt(path: Path, lang: str, retranslate: bool) -> Document:
    import pysrt
    subs = pysrt.open(str(path), encoding="utf-8", error_handling=pysrt.SubRipFile.ERROR_RAISE)
    if not subs and path.read_text(encoding="utf-8").strip():
        raise UsageError(f"{path}: no subtitle found in it (is it a .srt file?)")
    codes = [OVERRIDE.match(s.text).group(0) for s in subs]  # {\an8}: kept in front, untranslated
    pieces = [Piece(" ".join(s.text[len(c):].splitlines()), "html", f"subtitle {s.index}") for s, c in zip(subs, codes)]

    def write(outputs: list) -> bytes:
        for s, o, c in zip(subs, outputs, codes):
            if o is not None:
                s.text = c + _rewrapped(o, len(s.text.splitlines()))
        buffer = io.StringIO()
        subs.write_into(buffer)
        return buffer.getvalue().encode("utf-8")
    return Document(pieces, write)


VOICE = re.compile(r"(<v(?:\.[\w-]+)*(?:\s[^>]*)?>)(?!.*</v>)(.*)", re.DOTALL)  # a cue's voice, never closed


def _vtt_blocks(path: Path) -> None:
    """A UsageError naming the first block of a WebVTT file that is neither a cue (its timing line's
    ``-->``), a note, a style nor a region: webvtt-py would leave it out."""
    lines, start = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").split("\n"), 0
    for n, line in enumerate(lines + [""]):
        if line.strip():
            continue
        block, first = lines[start:n], start + 1
        start = n + 1
        if not block or first == 1 or block[0].split(" ")[0] in ("NOTE", "STYLE", "REGION", "NOTE\t"):
            continue
        if not any("-->" in x for x in block[:2]):
            raise UsageError(f"{path}: line {first}: no cue timing ('00:00:01.000 --> 00:00:02.000') in this block; "
                             "fix it or remove it")


def read_vtt(path: Path, lang: str, retranslate: bool) -> Document:
    import webvtt
    _vtt_blocks(path)
    captions = webvtt.read(str(path))
    cues = [VOICE.fullmatch(c.raw_text.strip()) for c in captions]
    voices = [m.group(1) if m else "" for m in cues]
    texts = [m.group(2) if m else c.raw_text for m, c in zip(cues, captions)]
    pieces = [Piece(" ".join(t.split("\n")), "html", f"cue {n} ({c.start})")
              for n, (t, c) in enumerate(zip(texts, captions), 1)]

    def write(outputs: list) -> bytes:
        for c, o, voice, t in zip(captions, outputs, voices, texts):
            if o is not None:
                c.text = voice + _rewrapped(o, len(t.strip().split("\n")))
        return captions.content.encode("utf-8")
    return Document(pieces, write)


