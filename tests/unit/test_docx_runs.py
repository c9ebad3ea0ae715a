"""A DOCX paragraph's translation written as runs (text/docx_file.py): stretches in the output's order,
each a copy of the run it came from, a space with the run that held it; runs with something between
them stay in place and take their stretches in order."""
from __future__ import annotations

import pytest

docx = pytest.importorskip("docx")

from rnnsearch.text.docx_file import _write_runs, stretches  # noqa: E402


def test_stretches_follow_the_output_and_spaces_stay_with_their_run():
    sources = ["The committee ", "met today", " in Ottawa."]
    assert stretches("<r0>Le comité</r0> <r1>s'est réuni</r1> <r2>à Ottawa.</r2>", sources) == [
        (0, "Le comité "), (1, "s'est réuni"), (2, " à Ottawa.")]
    assert stretches("<r0>la </r0><r2>voiture</r2><r1>rouge</r1>", ["the ", "red", " car"]) == [
        (0, "la "), (2, "voiture"), (1, "rouge")]
    assert stretches("Le <r1></r1><r0>x</r0><r0>y</r0>", ["a", "b"]) == [(0, "Le xy")]


def _paragraph():
    document = docx.Document()
    paragraph = document.add_paragraph("the ")
    paragraph.add_run("red").bold = True
    paragraph.add_run(" car")
    return paragraph


def test_reordered_runs_are_copies_in_the_output_order():
    paragraph = _paragraph()
    _write_runs(paragraph, paragraph.runs, [(0, "la "), (2, "voiture "), (1, "rouge")])
    assert [(r.text, bool(r.bold)) for r in paragraph.runs] == [("la ", False), ("voiture ", False), ("rouge", True)]
    assert paragraph.text == "la voiture rouge"


def test_runs_with_something_between_keep_their_place_and_the_word_order():
    from docx.oxml import OxmlElement
    paragraph = _paragraph()
    runs = paragraph.runs
    runs[1]._r.addnext(OxmlElement("w:bookmarkStart"))
    _write_runs(paragraph, runs, [(0, "la "), (2, "voiture "), (1, "rouge")])
    assert paragraph.text == "la voiture rouge" and len(paragraph.runs) == 3
