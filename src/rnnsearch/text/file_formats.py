"""The plain formats of ``rnnsearch translate-file`` (``text/files.py``), each read and written by its
library: a reader ``read_KIND(path, target_lang, retranslate)`` gives a Document, its pieces to
translate and a ``write(outputs)`` that gives the file's bytes with each output in its piece's place
(None: the piece was not translated, and stays as it was). XLIFF: ``text/xliff_file.py``; DOCX:
``text/docx_file.py``; SRT and WebVTT: ``text/subtitles.py``.

- text: one piece a line (blank lines, a line's spacing at either end kept), written back with the file's byte-order
  mark and line endings.
- html: the page, one piece read as ``--markup html`` reads it, each block a unit (one not translated
  keeps its source); ``<html lang>`` names the target language.
- po, pot (translate-toolkit): each msgid (and msgid_plural) without a msgstr; the header, obsolete units
  and units with a msgstr (fuzzy ones too: a draft, or a translation to review) are left alone; a
  translation is marked fuzzy, for review. Placeholders
  (printf's ``%s``, ``%1$d``, Python's ``%(name)s``, Qt's ``%1``, ``{0}``, ``{name}``, ``@@x@@``: the
  patterns of translate-toolkit's placeables) are slots the model copies, restored verbatim; a
  ``%`` pattern with a space in it (``% d``) only in a unit flagged c-format or python-format. An
  accelerator (``&Quit``, ``_File``: the key of a menu item) is taken out before translating (the model
  wrote ``Press &Quit`` as ``Press and Quit``) and put back before the translation's word that begins with
  its letter, else before its first letter (``&Quitter``), as translate-toolkit's accelerator check asks:
  one marker in the translation for one in the source. The header's ``#, fuzzy`` is kept; a catalogue in another
  charset (ISO-8859-1) is written in UTF-8, its header saying so. A msgid holding HTML
  (``data/tags.py``: tags of HTML elements, closed; not ``<file>`` or ``<members@example.org>``) is translated as
  ``--markup html`` reads it (``Click <a href="x.html">here</a>`` came out ``x.html de href =``), its
  placeholders items of the text stage, each checked in the output.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.data.tags import html_tags
from rnnsearch.errors import UsageError
from rnnsearch.text.html_tree import primary_language



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
    left: list = field(default_factory=list)  # what holds text and is left untranslated (a DOCX chart): a warning


def read_text(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
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
        return (bom + "".join(_spaced(o, text) + end for o, (text, end) in zip(outputs, lines))).encode()
    return Document(pieces, write)


def _spaced(output: str | None, text: str) -> str:
    """A line's output with the line's own spacing at either end (a tab, a form feed); a line of spacing alone as it
    was (a line of a tab came out empty)."""
    if output is None or not text.strip():
        return text
    return text[:len(text) - len(text.lstrip())] + output.strip() + text[len(text.rstrip()):]


def read_html(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
    page = path.read_text(encoding="utf-8")
    return Document([Piece(page, "html", "the page", partial=True)],
                    lambda outputs: (page if outputs[0] is None else _with_lang(outputs[0], lang, source)).encode("utf-8"))


LANG = re.compile(r"""(\s(?:xml:)?lang\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)


def _with_lang(page: str, lang: str, source: str) -> str:
    """The page with its ``<html>`` element's ``lang`` (and ``xml:lang``) naming ``lang`` (added where it has none),
    and each element's that named ``source`` (what was translated) too; others' (left as written) kept."""
    from rnnsearch.text.html_tree import parse_tree, primary_language
    out, at = [], 0
    stack = list(parse_tree(page).children)
    starts = []
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.tag and not node.tag.startswith("#") and (node.tag == "html" or LANG.search(node.raw)):
            starts.append(node)
    def relabelled(m: re.Match, root: bool) -> str:
        return f'{m.group(1)}"{lang}"' if root or primary_language(m.group(2).strip("'\"")) == source else m.group(0)
    for node in sorted(starts, key=lambda n: n.begin):
        tag, root = node.raw, node.tag == "html"
        new = LANG.sub(functools.partial(relabelled, root=root), tag) if LANG.search(tag) else \
            f'<{tag[1:5]} lang="{lang}"{tag[5:]}'
        out += [page[at:node.begin], new]
        at = node.begin + len(tag)
    return "".join(out) + page[at:]


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


def read_po(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
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
        keys = [_accelerator(s) for s in sources]
        sources = [s if key is None else s[:key[0]] + s[key[0] + 1:] for s, key in zip(sources, keys)]
        todo.append((unit, len(pieces), len(sources), keys))
        printf = unit.hastypecomment("c-format") or unit.hastypecomment("python-format")
        where = f"msgid at {unit.getlocations()[0]}" if unit.getlocations() else "msgid"
        for text in sources:  # a msgid holding HTML goes the markup path (its tags were words), its placeholders
            slots = _placeholders(text, printf)  # items there (and checked in its output)
            mode = "html" if html_tags(text) else None
            pieces.append(Piece(text, mode, f"{where} ({text[:30]!r})", slots=slots))
    if store.units and store.units[0].isheader():
        said = store.parseheader().get("Language", "").strip()
        if said and primary_language(said) != lang:  # a German catalogue was given French msgstrs
            raise UsageError(f"{path}: its Language is {said}, and this model translates into {lang}: give it to a "
                             "model of its language")
        fuzzy = store.units[0].isfuzzy()
        store.updateheader(add=True, Language=said or lang)  # a region it names kept (fr_CA)
        if (store.encoding or "utf-8").lower().replace("_", "-") not in ("utf-8", "utf8"):  # written as UTF-8: a
            store.updateheader(content_type="text/plain; charset=UTF-8")  # Latin-1 catalogue's own output could not
            store.encoding = "utf-8"  # be read again by translate-toolkit
        store.units[0].markfuzzy(fuzzy)  # updateheader drops it: a template's header is still to fill in

    def write(outputs: list) -> bytes:
        for unit, first, count, keys in todo:
            done = outputs[first:first + count]
            if any(o is None for o in done):
                continue
            done = [o if key is None else _with_accelerator(o, *key[1:]) for o, key in zip(done, keys)]
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


ACCELERATOR = re.compile(r"(?<![\w&_~])([&_~])(?=[^\W\d_])")  # &Quit, _File, ~Save at a word's start; not "a & b"


def _accelerator(text: str) -> tuple[int, str, str] | None:
    """(where, marker, letter) of the one accelerator of a msgid; None without one, or with more than one."""
    found = [m for m in ACCELERATOR.finditer(text) if not re.match(r"&\w+;", text[m.start():])]
    if len(found) != 1 or len({m.group(1) for m in ACCELERATOR.finditer(text)}) > 1:
        return None
    return found[0].start(), found[0].group(1), text[found[0].end()]


def _with_accelerator(text: str, marker: str, letter: str) -> str:
    """``text`` with ``marker`` before its word that begins with ``letter`` (any case), else before the letter
    inside a word, else before its first letter."""
    for pattern in (rf"\b{re.escape(letter)}", re.escape(letter), r"[^\W\d_]"):
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m:
            return text[:m.start()] + marker + text[m.start():]
    return text
