"""Whole files through a translator, each in its own format: ``translate_file(translator, IN, OUT)``
(``rnnsearch translate-file``).

A format (``FORMATS``, by the file's suffix) reads a file into *pieces*: the texts to translate, each
with the markup it holds (None: plain text; ``xml`` for XLIFF's inline tags and a DOCX paragraph's
runs; ``html`` for an HTML page and subtitles' tags) and a name that says where it is (a PO msgid's
line, an XLIFF unit's id, a subtitle's number). Everything that is not a piece (structure, notes,
headers, untranslatable units, and units already translated unless ``retranslate``) is written back
as the library read it. The pieces are translated through the text stage (``text/pipeline.py``) and
the markup path (``text/documents.py``) as ``rnnsearch translate`` does, and the format writes the
file again with each translation in its place. The output is written whole or not at all.

The files are read and written by the field's libraries: translate-toolkit (PO, XLIFF 1.2 and 2.x),
pysrt, webvtt-py and python-docx (``text/file_formats.py``); the HTML path is ``--markup html``'s.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source
from rnnsearch.errors import UsageError
from rnnsearch.text import file_formats
from rnnsearch.text.file_formats import Piece
from rnnsearch.text.documents import NOTHING, read_lines, translate_marked
from rnnsearch.text.pipeline import translate_lines
from rnnsearch.text.settings import TextSettings


@dataclass
class Report:
    """What a file's translation did: pieces translated, and the names and reasons of those that were not."""
    pieces: int = 0
    skipped: int = 0                               # units left as they were (already translated)
    failed: list[tuple[str, str]] = field(default_factory=list)


FORMATS = {".txt": "text", ".html": "html", ".htm": "html", ".po": "po", ".pot": "po", ".xliff": "xliff",
           ".xlf": "xliff", ".srt": "srt", ".vtt": "vtt", ".docx": "docx"}


def format_of(path: str | Path) -> str:
    """The format a file's suffix names; a UsageError listing the formats for any other."""
    kind = FORMATS.get(Path(path).suffix.lower())
    if kind is None:
        raise UsageError(f"{path}: translate-file reads {', '.join(sorted(FORMATS))} files, not "
                         f"'{Path(path).suffix or 'no suffix'}'")
    return kind


def translate_file(translator, source: str | Path, out: str | Path, search: SearchSettings | None = None,
                   settings: TextSettings | None = None, retranslate: bool = False, progress=None,
                   warn=print) -> Report:
    """Translate the file ``source`` into ``out`` (the same format); ``retranslate``: units already
    translated too. A piece that could not be translated keeps its source (XLIFF and PO: no target)
    and is named in the report; ``warn`` is called with each (``NAME: why``)."""
    kind = format_of(source)
    if format_of(out) != kind:
        raise UsageError(f"{out}: write the translation in the format it was read in ({kind}: {Path(source).suffix})")
    lang = translator.tgt_codec.lang
    document = file_formats.read(kind, source, lang, retranslate)
    pieces = document.pieces
    outputs = translate_pieces(translator, pieces, search, settings, progress,
                               lambda name, message: warn(f"{source}: {name}: {message}"))
    report, done = Report(len(pieces), document.skipped), []
    for piece, t in zip(pieces, outputs):
        failed = t.error or (not t.text and piece.text.strip() and NOTHING)
        done.append(None if failed else t.text)
        if failed:
            report.failed.append((piece.name, failed))
            warn(f"{source}: {piece.name}: not translated: {failed}")
    data = document.write(done)
    partial = Path(out).with_name(f".{Path(out).name}.partial")
    partial.write_bytes(data)
    os.replace(partial, out)  # whole or not at all
    return report


def translate_pieces(translator, pieces: list[Piece], search: SearchSettings | None, settings: TextSettings | None,
                     progress=None, warn=None) -> list:
    """Each piece's Translation, in order: plain ones through the text stage, marked ones through the
    markup path, each kind batched; ``warn(name, message)``: each fault of markup read through."""
    out: list = [None] * len(pieces)
    plain = [i for i, p in enumerate(pieces) if p.mode is None]
    if plain:
        found = [t for part in translate_lines(translator, [Source(pieces[i].text) for i in plain], search, settings,
                                               progress=progress) for t in part]
        for i, t in zip(plain, found):
            out[i] = t
    for mode in ("xml", "html"):
        marked = [i for i, p in enumerate(pieces) if p.mode == mode]
        if not marked:
            continue
        texts = [pieces[i].text for i in marked]
        read = read_lines(texts, mode, _named([pieces[i].name for i in marked], warn))
        found = [t for part in translate_marked(translator, [Source(t) for t in texts], read, search, settings,
                                                progress=progress) for t in part]
        for i, t in zip(marked, found):
            out[i] = t
    return out


def _named(names: list[str], warn):
    """A warn for read_lines ("line N: ...") that names piece N instead (None: no warnings wanted)."""
    def named(message: str) -> None:
        if warn is not None:
            where, _, what = message.partition(": ")
            warn(names[int(where.split()[1]) - 1], what)
    return named
