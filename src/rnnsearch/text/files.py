"""Whole files through a translator, each in its own format: ``translate_file(translator, IN, OUT)``
(``rnnsearch translate-file``).

A format (``FORMATS``, by the file's suffix) reads a file into *pieces*: the texts to translate, each
with the markup it holds (None: plain text; ``xml`` for XLIFF's inline tags and a DOCX paragraph's
runs; ``html`` for an HTML page and subtitles' tags) and a name that says where it is (a PO msgid's
line, an XLIFF unit's id, a subtitle's number). Everything that is not a piece (structure, notes,
headers, untranslatable units, and units already translated unless ``retranslate``) is written back
as the library read it. The pieces are translated through the text stage (``text/pipeline.py``) and
the markup path (``text/documents.py``) as ``rnnsearch translate`` does, and the format writes the
file again with each translation in its place. A piece not translated stays as it was (an XLIFF or
PO unit without a target); in an HTML page, each block is a unit of its own and one not translated
keeps its source. Each unit translated is checked as ``rnnsearch translate`` checks a line: a warning
names the source words it may have left out (``min_coverage``) and a confidence below ``min_confidence``.
The output is written whole or not at all, and never over the input.

The files are read and written by the field's libraries: translate-toolkit (PO, XLIFF 1.2 and 2.x),
pysrt, webvtt-py and python-docx (``text/file_formats.py``, ``text/xliff_file.py``, ``text/docx_file.py``,
``text/subtitles.py``); the HTML path is ``--markup html``'s.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source
from rnnsearch.errors import UsageError
from rnnsearch.files import writable_file, write_whole
from rnnsearch.text import blocks
from rnnsearch.text.confidence import doubts
from rnnsearch.text.documents import NOTHING, Marked, read, translate_units
from rnnsearch.text.docx_file import read_docx
from rnnsearch.text.language import SAMPLE, TAGS, language_name, not_the_source, read_as_other
from rnnsearch.text.glossary import apply
from rnnsearch.text.file_formats import Document, Piece, read_html, read_po, read_text
from rnnsearch.text.subtitles import read_srt, read_vtt
from rnnsearch.text.pipeline import translate_lines
from rnnsearch.text.settings import TextSettings
from rnnsearch.text.xliff_file import read_xliff


@dataclass
class Report:
    """What a file's translation did: units to translate, units left as they were (already
    translated), and the name and reason of each unit not translated."""
    units: int = 0
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    other_language: int = 0  # units left as they were: they read as another language than the model's source


@dataclass
class Outcome:
    """A piece's translation (None: not written), its units, and those not translated (name, why)."""
    text: str | None
    units: int
    failed: list[tuple[str, str]]


FORMATS = {".txt": "text", ".html": "html", ".htm": "html", ".po": "po", ".pot": "po", ".xliff": "xliff",
           ".xlf": "xliff", ".srt": "srt", ".vtt": "vtt", ".docx": "docx"}


READERS = {"text": read_text, "html": read_html, "po": read_po, "xliff": read_xliff, "srt": read_srt, "vtt": read_vtt,
           "docx": read_docx}


def read_file(kind: str, path: str | Path, lang: str, retranslate: bool, source: str = "") -> Document:
    """The file read by its format's reader (``lang``: the target's, ``source``: the model's source language); a
    UsageError in one line where its library cannot read it."""
    try:
        return READERS[kind](Path(path), lang, retranslate, source=source)
    except UsageError:
        raise
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text ({_first_bad_byte(Path(path))}): save it as UTF-8") from None
    except Exception as exc:  # the library's own complaint about the file, in one line
        raise UsageError(f"{path}: the {kind} reader cannot read it ({type(exc).__name__}: {_detail(exc)}); "
                         f"{EXPECTED.get(kind, 'check the file')}") from None


EXPECTED = {"po": "a gettext catalogue holds msgid/msgstr pairs", "xliff": "an XLIFF 1.2 or 2.x document is XML",
            "srt": "each subtitle is a number, a timing line (00:00:01,000 --> 00:00:02,000) and its text",
            "vtt": "a WebVTT file begins with the line WEBVTT", "docx": "a Word document saved as .docx (not .doc)",
            "html": "check the file", "text": "check the file"}


def _detail(exc: Exception, limit: int = 120) -> str:
    """A library's message on one short line: whitespace joined, characters that do not print as ``?``."""
    words = " ".join(str(exc).split()) or "no detail"
    shown = "".join(c if c.isprintable() else "?" for c in words)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def _first_bad_byte(path: Path) -> str:
    """Where a file stops being UTF-8, counted in the whole file (a library's own error counts from
    the line or chunk it was decoding): ``line 3, byte 7 of the line (53 of the file) is 0xe9``."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, start = data.count(b"\n", 0, exc.start) + 1, data.rfind(b"\n", 0, exc.start) + 1
        return f"line {line}, byte {exc.start - start} of the line ({exc.start} of the file) is 0x{data[exc.start]:02x}"
    return "a library read it otherwise"


def format_of(path: str | Path) -> str:
    """The format a file's suffix names; a UsageError listing the formats for any other."""
    kind = FORMATS.get(Path(path).suffix.lower())
    if kind is None:
        raise UsageError(f"{path}: translate-file reads {', '.join(sorted(FORMATS))} files, not "
                         f"'{Path(path).suffix or 'no suffix'}'")
    return kind


def check_paths(source: str | Path, out: str | Path) -> str:
    """The format of ``source``, once the two paths can be read and written: a UsageError naming the
    path otherwise (no such input, a folder, the output over the input, no folder for it, another format)."""
    source, out, kind = Path(source), Path(out), format_of(source)
    if not source.is_file():
        raise UsageError(f"{source}: {'a folder, not a file' if source.is_dir() else 'no such file'}")
    if format_of(out) != kind:
        raise UsageError(f"{out}: write the translation in the format it was read in ({kind}: {source.suffix})")
    writable_file(out)
    if out.exists() and out.samefile(source) or out.resolve() == source.resolve():
        raise UsageError(f"{out}: the output would overwrite the input; name another file")
    return kind


def translate_file(translator, source: str | Path, out: str | Path, search: SearchSettings | None = None,
                   settings: TextSettings | None = None, retranslate: bool = False, progress=None,
                   warn=print, any_language: bool = False, glossary: list | None = None) -> Report:
    """Translate the file ``source`` into ``out`` (the same format); ``retranslate``: units already
    translated too. A unit that could not be translated keeps its source (XLIFF and PO: no target)
    and is named in the report; ``warn`` is called with each (``FILE: NAME: why``). A file whose text
    surely reads as another language than the model's source is refused (``text/language.py``) unless
    ``any_language``; ``glossary``: entries (``text/glossary.entries``) each unit's terms are taken from."""
    kind = check_paths(source, out)
    document = read_file(kind, source, translator.tgt_codec.lang, retranslate, translator.src_codec.lang)
    if not any_language:
        check_language(source, document.pieces, translator.src_codec.lang, translator.tgt_codec.lang)
    if document.left:
        warn(f"{source}: {', '.join(document.left)}: text this reader does not translate (charts, diagrams): "
             "left as it is")
    other = {} if any_language else other_languages(document.pieces, translator.src_codec.lang)
    for i, (code, p) in other.items():
        warn(f"{source}: {document.pieces[i].name}: reads as {language_name(code)} ({code}, p {p:.2f}): left as it was "
             "(--any-language translates it)")
    outcomes = translate_pieces(translator, document.pieces, search, settings, progress,
                                lambda name, message: warn(f"{source}: {name}: {message}"), skip=set(other),
                                glossary=glossary)
    report = Report(sum(o.units for o in outcomes), document.skipped, other_language=len(other))
    for o in outcomes:
        for name, why in o.failed:
            report.failed.append((name, why))
            warn(f"{source}: {name}: not translated: {why}")
    written = sum(o.units for o in outcomes) - len(report.failed)  # none: the file as it was (no lang="fr" stamped)
    write_whole(out, document.write([o.text for o in outcomes]) if written else Path(source).read_bytes())
    return report


def check_language(path, pieces: list[Piece], source: str, target: str) -> None:
    """A UsageError where the pieces' text (tags left out) surely reads as another language than ``source``."""
    said = not_the_source(" ".join(_words(p) for p in pieces[:SAMPLE]), source, target)
    if said is not None:
        raise UsageError(f"{path}: its text {said} (--any-language translates it all the same)")


def _words(piece: Piece) -> str:
    """A piece's text as its language is read: its tags left out."""
    return TAGS.sub(" ", piece.text) if piece.mode else piece.text


def other_languages(pieces: list[Piece], source: str) -> dict[int, tuple[str, float]]:
    """The pieces (not a whole page's) whose text surely reads as another language than ``source``, with it and its
    probability: a French line in an English file was translated as English (text/language.py)."""
    found = {i: read_as_other(_words(p), source) for i, p in enumerate(pieces) if not p.partial}
    return {i: f for i, f in found.items() if f is not None}


def translate_pieces(translator, pieces: list[Piece], search: SearchSettings | None, settings: TextSettings | None,
                     progress=None, warn=None, skip: set[int] = frozenset(), glossary: list | None = None
                     ) -> list[Outcome]:
    """Each piece's Outcome, in order: plain ones through the text stage, marked ones read into units
    (``warn(name, message)``: each fault of markup read through, and a plain piece's source words
    below ``settings.min_coverage``) and put back through the markup path; those in ``skip`` left as they were."""
    out: list = [Outcome(None, 0, []) if i in skip else None for i in range(len(pieces))]
    settings = TextSettings.given(settings)
    plain = [i for i, p in enumerate(pieces) if p.mode is None and i not in skip]
    if plain:
        sources = [Source(pieces[i].text, slots=pieces[i].slots) for i in plain]
        found = next(translate_lines(translator, [apply(translator, glossary, s) for s in sources] if glossary
                                     else sources, search, settings, progress=progress), [])
        for i, t in zip(plain, found):
            out[i] = _plain_outcome(pieces[i], t)
            for message in _doubts(translator, t, settings) if warn else ():
                warn(pieces[i].name, message)
    marked = [i for i, p in enumerate(pieces) if p.mode is not None and i not in skip]
    read_in = [_read(pieces[i], warn, translator.src_codec.lang) for i in marked]
    terms = (lambda units: [apply(translator, glossary, u) for u in units]) if glossary else None
    for i, m, done in zip(marked, read_in, translate_units(translator, read_in, search, settings, progress, terms)):
        out[i] = _marked_outcome(pieces[i], m, done)
        for name, (_, why, t) in zip(_unit_names(pieces[i], m), done):
            for message in _doubts(translator, t, settings) if warn and not why else ():
                warn(name, message)
    return out


def _doubts(translator, t, settings: TextSettings) -> list[str]:
    """The doubts about a translated unit, as ``rnnsearch translate`` words them: the source words it may
    have left out (below ``min_coverage``), a translation far shorter than its source (``min_length_ratio``) and
    a confidence below ``min_confidence``."""
    if t is None or t.error:
        return []
    return doubts(t, translator.src_codec, settings)[1]


def _unit_names(piece: Piece, m: Marked) -> list[str]:
    """Each unit's name in warnings: the piece's, with its block's number and opening where it has several."""
    if len(m.units) == 1:
        return [piece.name]
    return [f"{piece.name}, block {n} ({u.raw[:30]!r})" for n, u in enumerate(m.units, 1)]


def _plain_outcome(piece: Piece, t) -> Outcome:
    words = any(c.isalnum() for c in piece.text)
    lost = [w for _, _, w in piece.slots if t.text.count(w) < piece.text.count(w)]
    why = t.error or (NOTHING if words and not t.text.strip() else None) or (
        f"its placeholders {', '.join(lost)} are not all in the output" if lost else None)
    return Outcome(None if why else t.text, int(words), [(piece.name, why)] if why else [])


def _read(piece: Piece, warn, source_lang: str) -> Marked:
    m = read(piece.text, piece.mode, source_lang)
    for warning in m.page.warnings:
        if warn is not None:
            warn(piece.name, warning)
    return m


def _marked_outcome(piece: Piece, m: Marked, done: list[tuple[str, str | None]]) -> Outcome:
    if m.error:
        return Outcome(None, 1, [(piece.name, m.error)])
    failed = [(name, why) for name, (_, why, _) in zip(_unit_names(piece, m), done) if why]
    text = "".join(out for out, why, _ in done if not why)
    lost = [w for _, _, w in piece.slots if text.count(w) < piece.text.count(w)]
    if lost and not failed:
        failed = [(piece.name, f"its placeholders {', '.join(lost)} are not all in the output")]
    whole = not failed or (piece.partial and len(failed) < len(done))
    units = sum(u.has_words() for u in m.units) if len(m.units) > 1 else len(m.units)
    return Outcome(blocks.write(m.page, [text for text, _, _ in done]) if whole else None, units, failed)
