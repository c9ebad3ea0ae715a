"""DOCX for ``rnnsearch translate-file`` (``text/files.py``), read and written by python-docx:
``read_docx(path, target_lang, retranslate)``.

Each paragraph with text (body, tables, nested tables, text boxes, headers, footers, footnotes, endnotes,
comments) is a piece, its runs (a tracked insertion's, a hyperlink's, a content control's too) as
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


STORIES = {  # the parts whose paragraphs a reader reads, in this order, and how a unit's name says where it is
    "document.main": "", "header": "header ", "footer": "footer ", "footnotes": "footnote ", "endnotes": "endnote ",
    "comments": "comment "}
WML = "application/vnd.openxmlformats-officedocument.wordprocessingml."
THROUGH = {"hyperlink", "ins", "moveTo", "smartTag", "sdt", "sdtContent", "customXml", "dir", "bdo",  # around runs
           "fldSimple"}
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
LEFT = ("diagramData", "chart")  # parts of text this reader does not translate: named in a warning


def _stories(document) -> list[tuple[str, object, object]]:
    """(name, root element, part) of each part whose paragraphs are read, in STORIES' order; a part python-docx
    loads as bytes (footnotes, endnotes) parsed here and written back by ``_saved``."""
    from docx.oxml.parser import parse_xml
    found = []
    for part in document.part.package.iter_parts():
        kind = part.content_type.removeprefix(WML).removesuffix("+xml")
        if kind in STORIES:
            root = part.element if hasattr(part, "element") else parse_xml(part.blob)
            found.append((list(STORIES).index(kind), str(part.partname), STORIES[kind], root, part))
    return [(name, root, part) for _, _, name, root, part in sorted(found, key=lambda x: x[:2])]


def _saved(stories) -> None:
    """Parts python-docx holds as bytes given the text of their edited elements."""
    from lxml import etree
    for _, root, part in stories:
        if not hasattr(part, "element"):
            part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def _owner(element, tag: str):
    """The nearest ancestor of ``element`` with ``tag`` (a qualified name), or None."""
    node = element.getparent()
    while node is not None and node.tag != tag:
        node = node.getparent()
    return node


def _runs(paragraph) -> list:
    """A paragraph's runs in order: its own, those of its hyperlinks, tracked insertions and content controls
    and fields' results too; not those of a deletion or of a paragraph inside it (a text box's)."""
    from docx.oxml.ns import qn
    from docx.text.run import Run
    p, out = paragraph._p, []
    for r in p.iter(qn("w:r")):
        node = r.getparent()
        while node is not p and node.tag.split("}")[-1] in THROUGH:
            node = node.getparent()
        if node is p:
            out.append(Run(r, paragraph))
    return out


def _fallbacks(root) -> list[tuple[object, object]]:
    """(VML fallback's text box, drawing's text box) of each text box Word wrote twice (``mc:AlternateContent``):
    the drawing's is translated and the fallback given a copy of it."""
    from docx.oxml.ns import qn
    pairs = []
    for alternate in root.iter(f"{{{MC}}}AlternateContent"):
        boxes = {c.tag: list(c.iter(qn("w:txbxContent"))) for c in alternate}
        choice, fallback = boxes.get(f"{{{MC}}}Choice", []), boxes.get(f"{{{MC}}}Fallback", [])
        if choice and len(choice) == len(fallback):
            pairs += zip(fallback, choice)
    return pairs


def read_docx(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
    import docx
    from docx.oxml.ns import qn
    from docx.text.paragraph import Paragraph
    document = docx.Document(str(path))
    stories, todo, pieces = _stories(document), [], []
    fallbacks = [pair for _, root, _ in stories for pair in _fallbacks(root)]
    skip = {p for box, _ in fallbacks for p in box.iter(qn("w:p"))}  # the elements (held: lxml keeps their proxies)
    for name, root, _ in stories:
        for n, p in enumerate(root.iter(qn("w:p")), 1):
            paragraph = Paragraph(p, None)
            runs = [r for r in _runs(paragraph) if r.text]
            if not runs or p in skip:
                continue
            box = " in a text box" if _owner(p, qn("w:txbxContent")) is not None else ""
            marked = "".join(f"<r{k}>{html.escape(r.text, quote=False)}</r{k}>" for k, r in enumerate(runs))
            todo.append((paragraph, runs))
            pieces.append(Piece(marked, "xml", f"{name}paragraph {n}{box} ({paragraph.text[:30]!r})"))

    def write(outputs: list) -> bytes:
        for (paragraph, runs), output in zip(todo, outputs):
            if output is not None:
                _write_runs(paragraph, runs, stretches(output, [r.text for r in runs]))
                _relabel(paragraph._p, source, lang)
        for box, drawn in fallbacks:
            box[:] = [deepcopy(p) for p in drawn]
        _saved(stories)
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue()
    return Document(pieces, write, left=_left_out(document))


def _relabel(p, source: str, target: str) -> None:
    """A translated paragraph's language marks (``w:lang w:val``, what Word spell-checks it as) that named the source
    name the target (they said en-US over French text)."""
    from rnnsearch.text.html_tree import primary_language
    for mark in p.iter(f"{W}lang"):
        if source and primary_language(mark.get(f"{W}val")) == source:
            mark.set(f"{W}val", target)


def _left_out(document) -> list[str]:
    """The parts with text this reader leaves as they are (charts, SmartArt diagrams), for a warning."""
    return [str(part.partname) for part in document.part.package.iter_parts()
            if any(k in part.content_type for k in LEFT) and b"<a:t>" in part.blob]


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
    side_by_side = all(a._r.getnext() is b._r for a, b in zip(runs, runs[1:]))
    if side_by_side:
        first, used = runs[0]._r, set()
        for k, text in pieces:
            copy = deepcopy(runs[k]._r)
            _set_text(copy, text, keep_objects=k not in used)  # a picture, a page break: once, in its run's first stretch
            used.add(k)
            first.addprevious(copy)
        for k, run in enumerate(runs):
            if k in used or not _objects(run._r):
                run._r.getparent().remove(run._r)
            else:  # a run whose words went elsewhere keeps what is no text
                _set_text(run._r, "", keep_objects=True)
        return
    texts, last = [""] * len(runs), 0
    for k, text in pieces:
        last = max(last, k)
        texts[last] += text
    for run, text in zip(runs, texts):
        _set_text(run._r, text, keep_objects=True)


TEXTUAL = {"t", "tab", "cr", "noBreakHyphen", "softHyphen", "ptab", "lastRenderedPageBreak"}  # a run's text: rewritten


def _textual(child) -> bool:
    name = child.tag.split("}")[-1]
    return name in TEXTUAL or name == "br" and child.get(f"{W}type") in (None, "textWrapping")


def _objects(r) -> list:
    """What a run holds that is no text: a picture, a page break, a symbol, a field's mark, a note's reference."""
    return [c for c in r if isinstance(c.tag, str) and c.tag != f"{W}rPr" and not _textual(c)]


def _set_text(r, text: str, keep_objects: bool) -> None:
    """A run's text replaced by ``text`` (tabs and line breaks as python-docx writes them), where its first text
    stood; what it holds that is no text kept in place (``keep_objects``) or taken out (a run's second copy):
    python-docx's ``Run.text`` cleared the whole run, a picture or a page break with it."""
    from docx.text.run import Run
    children = [c for c in r if isinstance(c.tag, str) and c.tag != f"{W}rPr"]
    at = next((c for c in children if _textual(c)), None)
    written = deepcopy(r)
    Run(written, None).text = text  # (w:t, w:tab, w:br as python-docx writes them)
    for new in [c for c in written if c.tag != f"{W}rPr"]:
        if at is not None:
            at.addprevious(new)
        else:
            r.append(new)
    for c in children:
        if _textual(c) or not keep_objects:
            r.remove(c)
