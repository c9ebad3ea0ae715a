"""XLIFF 1.2 and 2.x for ``rnnsearch translate-file`` (``text/files.py``), read and written by
translate-toolkit, its units' XML through lxml: ``read_xliff(path, target_lang, retranslate)``.

Each translatable unit without a target (or, in 1.2, with one whose state says it is still to translate:
``new``, ``needs-translation``, ``needs-adaptation``, ``needs-l10n``) is a piece: its ``<source>`` with
its inline elements (``<g>``, ``<x/>``, ``<bx/>``, ``<ex/>``, 2.x's ``<pc>``, ``<ph/>``, ``<sc/>``,
``<ec/>``) through the markup path. The native code that 1.2's ``<bpt>``, ``<ept>``, ``<ph>`` and
``<it>`` hold (``&lt;b&gt;``, ``{0}``) is not text to translate: each such element goes to the markup
path as an empty element in its place, placed through the alignment, and comes back whole, its code as
the source wrote it. A 1.2 target gets ``state="needs-review-translation"`` and
``state-qualifier="leveraged-mt"``; a 2.x segment keeps ``state="initial"`` (machine output nobody has
reviewed) with ``subState="rnnsearch:mt"``. A target a person signed off (1.2 a ``final`` or
``signed-off`` state; a 2.x segment ``reviewed`` or ``final``) is left alone even with ``retranslate``.
"""
from __future__ import annotations

import html
import re
from copy import deepcopy
from pathlib import Path

from rnnsearch.errors import UsageError
from rnnsearch.text.file_formats import Document, Piece

SIGNED_OFF = {"final", "signed-off", "reviewed"}  # a target a person has approved (2.x: reviewed): never replaced
TO_TRANSLATE = {"new", "needs-translation", "needs-adaptation", "needs-l10n"}  # 1.2: a target still to write
NATIVE = {"bpt", "ept", "ph", "it"}  # 1.2's elements whose content is the original file's code
CODE = "rnnsearch-code"               # the attribute that numbers an element standing in for one


def read_xliff(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
    from lxml import etree
    from translate.storage import xliff, xliff2
    data = path.read_bytes()
    two = etree.fromstring(data).get("version", "1.2").startswith("2")
    store = (xliff2.Xliff2File if two else xliff.xlifffile).parsestring(data)
    languages = _declared(store.document.getroot(), two, path, source, lang)
    todo, skipped, pieces = [], 0, []
    for unit in store.units:
        if unit.isheader() or not unit.istranslatable() or not unit.source.strip():
            continue
        if unit.target and (_signed_off(unit) or not retranslate and not _to_translate(unit)):
            skipped += 1
            continue
        dom = unit.get_source_dom()
        segments = [] if two else _segments(dom)
        read = [_inner_xml(x) for x in segments or [dom]]
        todo.append((dom, segments, [codes for _, codes in read], len(pieces)))
        pieces += [Piece(marked, "xml", f"unit {unit.getid()!r}" + (f", segment {x.get('mid')!r}" if segments else ""))
                   for (marked, _), x in zip(read, segments or [dom])]

    def write(outputs: list) -> bytes:
        for dom, segments, codes, first in todo:
            done = outputs[first:first + len(codes)]
            if all(o is not None for o in done):
                _put_target(dom, _segmented(dom, segments, done, codes) if segments else
                            _target_of(dom, "target", done[0], codes[0]), two)
        for node, key in languages:  # the target where the file names none (a region it names kept: fr-CA)
            node.set(key, node.get(key) or lang)
        out = etree.tostring(store.document, encoding="UTF-8")  # the declaration as the file wrote it, if it did
        declared = re.match(rb"\s*<\?xml[^>]*\?>\s*", data)
        utf8 = declared and not re.search(rb"encoding=[\"'](?!utf-?8[\"'])", declared.group(0), re.IGNORECASE)
        out = (declared.group(0) if utf8 else b"<?xml version='1.0' encoding='UTF-8'?>\n" if declared else b"") + out
        return out + b"\n" * (data.endswith(b"\n") and not out.endswith(b"\n"))
    return Document(pieces, write, skipped)


def _declared(root, two: bool, path: Path, source: str, target: str) -> list[tuple[object, str]]:
    """(element, attribute) of each target language the file declares; a UsageError where it declares another
    source or target language than the model's (a French file given to an En->Fr model was translated as
    English, its target-language rewritten)."""
    from rnnsearch.text.html_tree import primary_language
    nodes = [(root, "srcLang", "trgLang")] if two else [(f, "source-language", "target-language")
                                                       for f in root.iter("{*}file")]
    for node, src_key, tgt_key in nodes:
        for key, want in ((src_key, source), (tgt_key, target)):
            said = node.get(key)
            if said and want and primary_language(said) != want:
                raise UsageError(f"{path}: its {key} is {said}, and this model translates {source} into {target}: "
                                 "give it to a model of its languages")
    return [(node, tgt_key) for node, _, tgt_key in nodes]


def _signed_off(unit) -> bool:
    """Whether a person has signed a unit's target off (1.2: a target ``final`` or ``signed-off``; 2.x: a
    segment ``reviewed`` or ``final``): left alone even with ``retranslate``. (1.2's ``approved="yes"`` is not one:
    translate-toolkit writes it on every target it is given, as "not fuzzy".)"""
    element = unit.xmlelement
    states = [t.get("state") for t in element.iter("{*}target")] + [element.get("state")] + [
        s.get("state") for s in element.iter("{*}segment")]
    return any(state in SIGNED_OFF for state in states)


def _to_translate(unit) -> bool:
    """Whether a unit's target is marked as still to translate (1.2's target state)."""
    target = unit.xmlelement.find("{*}target")
    return target is not None and target.get("state") in TO_TRANSLATE


def _inner_xml(element) -> tuple[str, list]:
    """An element's content as markup, XLIFF's elements by their local names (an element of another
    namespace as lxml writes it, its namespace declared on it), each element of native code empty in its
    place; and those elements, whole, by their number."""
    from lxml import etree
    copy, ns = deepcopy(element), etree.QName(element).namespace
    codes = []
    for node in list(copy.iter()):
        if not isinstance(node.tag, str):
            continue
        if node is not copy and etree.QName(node).localname in NATIVE and (len(node) or node.text):
            codes.append(deepcopy(node))
            codes[-1].tail = None
            for child in list(node):
                node.remove(child)
            node.text = None
            node.set(CODE, str(len(codes) - 1))
        if etree.QName(node).namespace == ns:  # XLIFF's own elements by their names; others keep their namespace
            node.tag = etree.QName(node).localname
    etree.cleanup_namespaces(copy)
    marked = html.escape(copy.text or "", quote=False) + "".join(etree.tostring(c, encoding="unicode") for c in copy)
    return marked, codes


def _segments(dom) -> list:
    """A 1.2 unit's segments: the ``<mrk mtype="seg">`` of its ``<seg-source>`` (a CAT tool's segmentation, each
    translated on its own and written back in the target as its own ``<mrk>``); none where it has no seg-source."""
    segmented = dom.getparent().find("{*}seg-source")
    return [] if segmented is None else [m for m in segmented.iter("{*}mrk") if m.get("mtype") == "seg"]


def _target_of(dom, name: str, output: str, codes: list):
    """``output`` as an element ``name`` of the unit's namespace, each element of native code whole again."""
    from lxml import etree
    ns = etree.QName(dom).namespace
    target = etree.fromstring(f'<{name} xmlns="{ns}">{output}</{name}>')
    for node in list(target.iter()):
        if isinstance(node.tag, str) and node.get(CODE) is not None:
            whole = deepcopy(codes[int(node.get(CODE))])
            whole.tail = node.tail
            node.getparent().replace(node, whole)
    return target


def _segmented(dom, segments: list, outputs: list[str], codes: list):
    """The target of a segmented unit: its seg-source as written, each segment's ``<mrk>`` holding its translation."""
    from lxml import etree
    target = deepcopy(dom.getparent().find("{*}seg-source"))
    target.tag = f"{{{etree.QName(dom).namespace}}}target"
    marks = [m for m in target.iter("{*}mrk") if m.get("mtype") == "seg"]
    for mark, output, code in zip(marks, outputs, codes):
        translated = _target_of(dom, "mrk", output, code)
        mark[:] = list(translated)
        mark.text = translated.text
    return target


def _put_target(source, target, two: bool) -> None:
    """The unit's ``<target>`` after its ``<source>`` (and its ``<seg-source>``), or in the old target's place."""
    from lxml import etree
    ns = etree.QName(source).namespace
    parent = source.getparent()
    old, segmented = parent.find(f"{{{ns}}}target"), parent.find(f"{{{ns}}}seg-source")
    if old is not None:  # in its place
        old.addprevious(target)
        parent.remove(old)
    else:  # 1.2 orders source, seg-source, target
        (segmented if segmented is not None else source).addnext(target)
    if two:
        source.getparent().set("state", "initial")
        source.getparent().set("subState", "rnnsearch:mt")
    else:
        target.set("state", "needs-review-translation")
        target.set("state-qualifier", "leveraged-mt")
