"""DOCX for ``rnnsearch translate-file`` (``text/files.py``), read and written by python-docx:
``read_docx(path, target_lang, retranslate)``.

Each paragraph with text (body, tables, nested tables, headers, footers) is a piece, its runs as
inline elements (``<r0>The committee </r0><r1>met today</r1>``) so that each run's formatting goes
back around the words aligned to it. The translation is written as runs in its own order: where the
runs of a paragraph lie side by side, each stretch of output is a copy of the run it came from (so
"the <b>red</b> car" can become "la voiture <b>rouge</b>"); where something else lies between them
(a field's code, a bookmark), the runs stay where they are and each takes its stretches in order,
a stretch that would go back to an earlier run going to the run before it instead (a hyperlink's runs
are such runs: its text is translated in place). A space between two stretches goes with the run that
held it in the source.
"""
from __future__ import annotations

import html
import io
from copy import deepcopy
from pathlib import Path

from rnnsearch.text.file_formats import Document, Piece


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


def _runs(paragraph) -> list:
    """A paragraph's runs in order, those of its hyperlinks too."""
    from docx.text.hyperlink import Hyperlink
    return [r for item in paragraph.iter_inner_content() for r in (item.runs if isinstance(item, Hyperlink) else [item])]


def read_docx(path: Path, lang: str, retranslate: bool) -> Document:
    import docx
    document = docx.Document(str(path))
    todo, pieces, seen = [], [], set()
    for n, paragraph in enumerate(_paragraphs(document), 1):
        runs = [r for r in _runs(paragraph) if r.text]
        if not runs or paragraph._p in seen:  # a merged table cell yields its paragraphs again
            continue
        seen.add(paragraph._p)
        marked = "".join(f"<r{k}>{html.escape(r.text, quote=False)}</r{k}>" for k, r in enumerate(runs))
        todo.append((paragraph, runs))
        pieces.append(Piece(marked, "xml", f"paragraph {n} ({paragraph.text[:30]!r})"))

    def write(outputs: list) -> bytes:
        for (paragraph, runs), output in zip(todo, outputs):
            if output is not None:
                _write_runs(paragraph, runs, stretches(output, [r.text for r in runs]))
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue()
    return Document(pieces, write)


def stretches(output: str, sources: list[str]) -> list[tuple[int, str]]:
    """The translation of a paragraph as (run, text) in its order, next ones of the same run joined;
    ``sources``: each run's text in the source (where a space between two stretches goes)."""
    from lxml import etree
    root = etree.fromstring(f"<p>{output}</p>")
    found: list[list] = []
    lead = root.text or ""  # text outside the runs: it goes with the next run that has words
    for i, node in enumerate(root):
        own = "".join(node.itertext())
        k, tail = int(node.tag[1:]), node.tail or ""
        if own:
            found.append([k, lead + own])
            lead = ""
        if tail and i + 1 < len(root) and found:
            after = int(root[i + 1].tag[1:])
            held_after = sources[after][:1].isspace() and not sources[k][-1:].isspace()
            lead, tail = (lead + tail, "") if held_after else (lead, tail)
        if found:
            found[-1][1] += tail
        else:
            lead += tail
    if lead:
        found = found + [[found[-1][0], lead]] if found else [[0, lead]]
    out: list[tuple[int, str]] = []
    for k, text in found:
        if out and out[-1][0] == k:
            out[-1] = (k, out[-1][1] + text)
        elif text:
            out.append((k, text))
    return out


def _write_runs(paragraph, runs: list, pieces: list[tuple[int, str]]) -> None:
    from docx.text.run import Run
    side_by_side = all(a._r.getnext() is b._r for a, b in zip(runs, runs[1:]))
    if side_by_side:
        first = runs[0]._r
        for k, text in pieces:
            copy = deepcopy(runs[k]._r)
            Run(copy, paragraph).text = text
            first.addprevious(copy)
        for run in runs:
            run._r.getparent().remove(run._r)
        return
    texts, last = [""] * len(runs), 0
    for k, text in pieces:
        last = max(last, k)
        texts[last] += text
    for run, text in zip(runs, texts):
        run.text = text
