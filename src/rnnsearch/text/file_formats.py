"""The formats of ``rnnsearch translate-file`` (``text/files.py``), each read and written by its library:
``read(kind, path, target_lang, retranslate)`` gives a Document, its pieces to translate and a
``write(outputs)`` that gives the file's bytes with each output in its piece's place (None: the piece
was not translated, and stays as it was).

- text: one piece a line (blank lines kept); html: the page, one piece (``--markup html``: its blocks).
- po, pot (translate-toolkit): each msgid (and msgid_plural) without a msgstr; the header, obsolete units
  and units already translated are left alone; a translation is marked fuzzy, for review.
- xliff, xlf 1.2 and 2.x (translate-toolkit, its units' XML through lxml): each translatable unit without
  a target, its ``<source>`` with its inline elements (``<g>``, ``<x/>``, ``<ph>``, ``<bpt>``/``<ept>``,
  2.x's ``<pc>``, ``<ph/>``) through the markup path; the target gets ``state="needs-review-translation"``
  and ``state-qualifier="leveraged-mt"`` (1.2) or the segment ``state="translated"`` (2.x).
- srt (pysrt), vtt (webvtt-py): each cue's text, its lines joined (its ``<i>``, ``<b>`` tags kept as
  HTML), written back on as many lines as it had; times and numbers untouched.
- docx (python-docx): each paragraph with text (body, tables, headers, footers), its runs as inline
  elements so each run's formatting goes back around the words aligned to it.
"""
from __future__ import annotations

import html
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rnnsearch.errors import UsageError


@dataclass
class Piece:
    text: str                 # what to translate (with its markup, as ``mode`` reads it)
    mode: str | None = None   # None, "xml" or "html"
    name: str = ""            # where it is in the file, as an error names it


@dataclass
class Document:
    pieces: list
    write: Callable[[list], bytes]
    skipped: int = 0


def read(kind: str, path: str | Path, lang: str, retranslate: bool) -> Document:
    readers = {"text": _text, "html": _html, "po": _po, "xliff": _xliff, "srt": _srt, "vtt": _vtt, "docx": _docx}
    try:
        return readers[kind](Path(path), lang, retranslate)
    except UsageError:
        raise
    except Exception as exc:  # the library's own complaint about the file, in one line
        raise UsageError(f"{path}: not a {kind} file this reader can read ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})") from None


def _text(path: Path, lang: str, retranslate: bool) -> Document:
    raw = path.read_text(encoding="utf-8")
    lines = raw.splitlines()
    pieces = [Piece(line, None, f"line {n}") for n, line in enumerate(lines, 1)]

    def write(outputs: list) -> bytes:
        return "".join((o if o is not None else line) + "\n" for o, line in zip(outputs, lines)).encode("utf-8")
    return Document(pieces, write)


def _html(path: Path, lang: str, retranslate: bool) -> Document:
    page = path.read_text(encoding="utf-8")
    return Document([Piece(page, "html", "the page")], lambda outputs: (outputs[0] or page).encode("utf-8"))


def _po(path: Path, lang: str, retranslate: bool) -> Document:
    from translate.storage import pypo
    store = pypo.pofile.parsefile(str(path))
    todo, skipped, pieces = [], 0, []
    for unit in store.units:
        if unit.isheader() or unit.isobsolete() or not unit.source:
            continue
        if unit.istranslated() and not retranslate:
            skipped += 1
            continue
        sources = [str(s) for s in unit.source.strings] if unit.hasplural() else [unit.source]
        todo.append((unit, len(pieces), len(sources)))
        pieces += [Piece(s, None, f"msgid at line {unit.getlocations()[0] if unit.getlocations() else '?'}"
                          f" ({s[:30]!r})") for s in sources]
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


def _inner_xml(element) -> str:
    """An element's content as markup with local tag names (no namespaces): its text, then its children."""
    from copy import deepcopy
    from lxml import etree
    copy = deepcopy(element)
    for node in copy.iter():
        if isinstance(node.tag, str):
            node.tag = etree.QName(node).localname
    etree.cleanup_namespaces(copy)
    return html.escape(copy.text or "", quote=False) + "".join(etree.tostring(c, encoding="unicode") for c in copy)


def _xliff(path: Path, lang: str, retranslate: bool) -> Document:
    from lxml import etree
    from translate.storage import xliff, xliff2
    data = path.read_bytes()
    two = etree.fromstring(data).get("version", "1.2").startswith("2")
    store = (xliff2.Xliff2File if two else xliff.xlifffile).parsestring(data)
    todo, skipped, pieces = [], 0, []
    for unit in store.units:
        if unit.isheader() or not unit.istranslatable() or not unit.source.strip():
            continue
        if unit.target and not retranslate:
            skipped += 1
            continue
        source = unit.get_source_dom()
        todo.append((unit, source))
        pieces.append(Piece(_inner_xml(source), "xml", f"unit {unit.getid()!r}"))

    def write(outputs: list) -> bytes:
        for (_, source), output in zip(todo, outputs):
            if output is None:
                continue
            ns = etree.QName(source).namespace
            target = etree.fromstring(f'<target xmlns="{ns}">{output}</target>')
            old = source.getparent().find(f"{{{ns}}}target")
            if old is not None:
                source.getparent().remove(old)
            source.addnext(target)
            if two:
                source.getparent().set("state", "translated")
            else:
                target.set("state", "needs-review-translation")
                target.set("state-qualifier", "leveraged-mt")
        if not two:
            for node in store.document.getroot().iter("{*}file"):
                node.set("target-language", lang)
        else:
            store.document.getroot().set("trgLang", lang)
        return etree.tostring(store.document, xml_declaration=True, encoding="UTF-8")
    return Document(pieces, write, skipped)


def _rewrapped(text: str, lines: int) -> str:
    """``text`` on ``lines`` lines (a cue's own count), cut at the spaces nearest to even lengths."""
    words = text.split(" ")
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


def _srt(path: Path, lang: str, retranslate: bool) -> Document:
    import pysrt
    subs = pysrt.open(str(path), encoding="utf-8")
    pieces = [Piece(" ".join(s.text.splitlines()), "html", f"subtitle {s.index}") for s in subs]

    def write(outputs: list) -> bytes:
        for s, o in zip(subs, outputs):
            if o is not None:
                s.text = _rewrapped(o, len(s.text.splitlines()))
        buffer = io.StringIO()
        subs.write_into(buffer)
        return buffer.getvalue().encode("utf-8")
    return Document(pieces, write)


def _vtt(path: Path, lang: str, retranslate: bool) -> Document:
    import webvtt
    captions = webvtt.read(str(path))
    pieces = [Piece(" ".join(c.text.splitlines()), "html", f"cue {n} ({c.start})")
              for n, c in enumerate(captions, 1)]

    def write(outputs: list) -> bytes:
        for c, o in zip(captions, outputs):
            if o is not None:
                c.text = _rewrapped(o, len(c.text.splitlines()))
        return captions.content.encode("utf-8")
    return Document(pieces, write)


def _paragraphs(document):
    """Every paragraph of a python-docx Document: body, tables (nested too), headers and footers."""
    def of(container):
        yield from container.paragraphs
        for table in getattr(container, "tables", []):
            for row in table.rows:
                for cell in row.cells:
                    yield from of(cell)
    yield from of(document)
    for section in document.sections:
        for part in (section.header, section.footer):
            yield from of(part)


def _docx(path: Path, lang: str, retranslate: bool) -> Document:
    import docx
    from lxml import etree
    document = docx.Document(str(path))
    todo, pieces, seen = [], [], set()
    for n, paragraph in enumerate(_paragraphs(document), 1):
        runs = [r for r in paragraph.runs if r.text]
        if not runs or id(paragraph._p) in seen:
            continue
        seen.add(id(paragraph._p))
        marked = "".join(f"<r{k}>{html.escape(r.text, quote=False)}</r{k}>" for k, r in enumerate(runs))
        todo.append(runs)
        pieces.append(Piece(marked, "xml", f"paragraph {n} ({paragraph.text[:30]!r})"))

    def write(outputs: list) -> bytes:
        for runs, output in zip(todo, outputs):
            if output is None:
                continue
            root = etree.fromstring(f"<p>{output}</p>")
            texts = [""] * len(runs)
            texts[0] = root.text or ""
            for node in root:
                k = int(node.tag[1:])
                texts[k] += "".join(node.itertext())
                texts[k] += node.tail or ""
            for run, text in zip(runs, texts):
                run.text = text
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue()
    return Document(pieces, write)
