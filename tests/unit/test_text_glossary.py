"""A glossary applied to running text (text/glossary.py): source terms found by their stems and
without case, a target term the model can write a constraint of the sentence holding its source
term, one it cannot write a slot over the source term written out as the term, so the sentence is
translated and the term comes out; ``constraints_met`` false whenever a term is missing."""
from __future__ import annotations

import pytest

from rnnsearch import Translator
from rnnsearch.cli import main
from rnnsearch.text.glossary import apply, entries, stems
from rnnsearch.text.pipeline import translate_lines


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_checkpoint(str(tiny_run / "best.pt"))


def test_source_terms_match_inflected_forms_in_any_case():
    assert stems(["Members", "voted", "chairs"], "en") == ["member", "vote", "chair"]
    assert stems(["députés"], "fr") == stems(["député"], "fr")
    assert stems(["Katze"], "xx") == ["katze"]  # a language Snowball lacks: the words as they are


def test_a_writable_term_is_a_constraint_of_its_sentence_and_an_unwritable_one_a_slot(translator):
    glossary = entries(translator, [("old chair", "le chien"), ("hat", "ordiphone"), ("river", "maison")])
    assert [e.writable for e in glossary] == [True, False, True]
    text = "A old blue Hats takes a hat. Some Old Chairs see the car."
    source = apply(translator, glossary, text)
    assert [(text[a:b], t) for a, b, t in source.terms] == [("Old Chairs", "le chien")]
    assert [(text[a:b], t) for a, b, t in source.slots] == [("Hats", "ordiphone"), ("hat", "ordiphone")]
    (line,) = next(translate_lines(translator, [source]))
    first, second = line.segments  # the line still splits: each term goes with its own sentence
    assert first.text.count("ordiphone") == 2 and "chien" not in first.text
    assert "le chien" in second.text.lower() and line.constraints_met


def test_constraints_met_is_false_whenever_a_term_is_missing(translator):
    glossary = entries(translator, [("hat", "ordiphone")])
    source = apply(translator, glossary, "A old blue hat takes a book.")
    from rnnsearch.text.settings import TextSettings
    (line,) = next(translate_lines(translator, [source], settings=TextSettings(placeholders=False)))
    assert "ordiphone" not in line.text and not line.constraints_met  # no slot to carry it


def test_cli_glossary_with_a_term_the_model_cannot_write(tiny_run, tmp_path, capsys):
    glossary, src = tmp_path / "terms.tsv", tmp_path / "in.en"
    glossary.write_text("hat\tordiphone\nchairs\tmaison\n")
    src.write_text("A old blue hats takes a hat on some old chair.\n<p>The big hat sees a dog.</p>\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--glossary", str(glossary), "--input", str(src)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.count("ordiphone") == 2 and "maison" in first
    src.write_text("<p>The big hat sees a dog.</p><p>A old chair.</p>\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--glossary", str(glossary), "--input", str(src),
                 "--markup", "html"]) == 0
    out = capsys.readouterr().out.splitlines()[0]
    assert out.count("<p>") == 2 and "ordiphone" in out.split("</p>")[0] and "maison" in out.split("</p>")[1]


def test_a_verb_form_and_a_lower_case_word_are_not_a_noun_or_a_names_term(translator):
    """``She billed the client`` took the term for ``bill``; ``The house was sold`` the one for ``House``; a term
    ``Member of Parliament`` came out ``member of Parliament``."""
    glossary = entries(translator, [("bill", "projet de loi"), ("house", "maison"), ("House", "Chambre"),
                                    ("member", "Member of Parliament"), ("video site", "YouTube")])
    found = [(text[a:b], t) for text in ("She billed the bills. The House and the house.", "Two members spoke.",
                                         "A video site.")
             for a, b, t in sorted(apply(translator, glossary, text).terms + apply(translator, glossary, text).slots)]
    assert found == [("bills", "projet de loi"), ("House", "Chambre"), ("house", "maison"),
                     ("members", "Member of Parliament"), ("video site", "YouTube")]  # youTube before


def test_a_glossary_files_header_is_no_term_and_conflicting_entries_are_refused(tmp_path):
    from rnnsearch.data.io import DataError
    from rnnsearch.decoding.constraints import read_glossary
    path = tmp_path / "g.tsv"
    path.write_text("source\ttarget\nhouse\tmaison\nHouse\tChambre\nhouse\tmaison\n", encoding="utf-8")
    assert read_glossary(path) == [("house", "maison"), ("House", "Chambre"), ("house", "maison")]  # a word's, a name's
    path.write_text("committee\tcommission\nbill\tprojet de loi\ncommittee\tcomité permanent\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"g.tsv:3: 'committee' is given 'comité permanent' here and 'commission' before"):
        read_glossary(path)
