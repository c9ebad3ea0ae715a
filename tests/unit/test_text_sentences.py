"""Sentence splitting (text/sentences.py): sentencex with the Moses nonbreaking prefixes, the spans
tiling the line, and long sentences cut at clause marks."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from rnnsearch.text.sentences import pieces, split


def sentences(text, lang="en", keep=()):
    return [text[a:b] for a, b in split(text, lang, list(keep))]


@pytest.mark.parametrize("lang, expected", [
    ("fr", ["M. Tremblay et Mme Roy sont arrivés. ", "Ils ont parlé."]),
    ("fr", ["Voir p. 12 du rapport. ", "Merci."]),
    ("fr", ["Mme Roy a dit : « C'est fini. » ", "Puis elle est partie."]),
    ("en", ["Dr. Smith met Mr. Jones. ", "Item No. 5 was sold.  ", "They left."]),
    ("en", ["Is it? ", "Yes! ", "It is."]),
])
def test_sentences_of_a_line(lang, expected):
    assert sentences("".join(expected), lang) == expected


def test_a_line_with_a_url_is_split_and_no_boundary_falls_inside_an_item():
    from rnnsearch.text.items import find
    text = "Visit https://x.example.org/a.b or write to info@x.ca. Prices rose."
    keep = [(i.start, i.end) for i in find(text, "en", "fr")]
    assert sentences(text, keep=keep) == ["Visit https://x.example.org/a.b or write to info@x.ca. ", "Prices rose."]
    assert len(sentences("It costs approx. 4 dollars. Yes.", keep=[(9, 26)])) == 2  # the kept span holds no boundary
    assert sentences("It costs approx. 4 dollars.", keep=[(9, 26)]) == ["It costs approx. 4 dollars."]


def test_a_sentence_closed_by_a_bracket_or_quote_ends_before_a_capital():
    from rnnsearch.text.items import find
    assert sentences("(See the annex.) The committee agreed.") == ["(See the annex.) ", "The committee agreed."]
    text = "(See https://example.org/docs.) The committee agreed."
    keep = [(i.start, i.end) for i in find(text, "en", "fr")]
    assert sentences(text, keep=keep) == ["(See https://example.org/docs.) ", "The committee agreed."]
    assert sentences('He said "We will act." Then he left.') == ['He said "We will act." ', "Then he left."]
    assert sentences("(see Dr.) Smith came.") == ["(see Dr.) Smith came."]  # a nonbreaking prefix
    assert sentences("Done (see p. 5.) and more.") == ["Done (see p. 5.) and more."]  # no capital after it


@given(st.text(alphabet="ab A.!?)»\"", max_size=60))
def test_the_sentences_tile_the_line_with_closers(text):
    assert "".join(text[a:b] for a, b in split(text, "en")) == text


def test_a_fields_label_at_a_sentences_start_is_a_segment_of_its_own():
    assert sentences("Name: John Smith") == ["Name: ", "John Smith"]
    assert sentences("Due date: Monday. Note: see below.") == ["Due date: ", "Monday. ", "Note: ", "see below."]
    assert sentences("Nom : Jean", "fr") == ["Nom : ", "Jean"]
    for whole in ("The rule is: no.", "Meeting at 10:30 today.", "Mr. Speaker: I rise.", "note: lower case"):
        assert sentences(whole) == [whole]


def test_a_tab_ends_a_sentence_and_stays_with_the_part_before():
    assert sentences("Name:\tJohn Smith") == ["Name:\t", "John Smith"]
    assert sentences("Item\t\t 4 dollars. It rose.\t") == ["Item\t\t ", "4 dollars. ", "It rose.\t"]
    assert sentences("\tIndented text.") == ["\tIndented text."]  # nothing before the tab: no cut


@given(st.text(alphabet="ab .!?\n\t«»M", max_size=80))
def test_the_sentences_tile_the_line(text):
    spans = split(text, "fr")
    assert "".join(text[a:b] for a, b in spans) == text
    assert all(a < b for a, b in spans) or text == ""


@given(st.lists(st.sampled_from(["w", ",", ";", "x"]), max_size=120), st.integers(2, 30))
def test_pieces_cover_the_units_within_the_limit(units, limit):
    cuts = pieces(units, limit)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(units)
    assert all(b == c for (_, b), (c, _) in zip(cuts, cuts[1:]))
    assert all(b - a <= limit for a, b in cuts) or len(units) <= limit


def test_a_long_sentence_is_cut_after_the_clause_mark_nearest_its_middle():
    units = "a b c , d e f ; g h i , j k l".split()
    assert pieces(units, 8) == [(0, 8), (8, 15)]


def test_abbreviations_the_moses_lists_lack_end_no_sentence():
    """``It cost approx. $120M.`` came out as two sentences, ``Cela coûte cher. 120 millions $.``."""
    def parts(text, lang="en"):
        return [text[a:b].strip() for a, b in split(text, lang)]
    assert parts("It cost approx. $120M. Then we left.") == ["It cost approx. $120M.", "Then we left."]
    assert parts("Call ext. 4412 today. See fig. 3 too.") == ["Call ext. 4412 today.", "See fig. 3 too."]
    assert parts("The minimum is 5 min. The maximum is 10.") == ["The minimum is 5 min.", "The maximum is 10."]
    assert parts("Voir réf. 12 et suiv. pour tout. Merci.", "fr") == ["Voir réf. 12 et suiv. pour tout.", "Merci."]
    assert parts("Voir l'art. 5 du règlement. Le délai est court.", "fr") == [  # an elided article before it
        "Voir l'art. 5 du règlement.", "Le délai est court."]  # ("Voir l'art." came out "It is an art. 5.")


def test_a_blank_line_between_paragraphs_is_spacing_after_the_sentence_before():
    text = "Dear Sir,\n\nThe committee met today.\nIt will vote tomorrow."
    assert [text[a:b] for a, b in split(text, "en")] == [
        "Dear Sir,\n\n", "The committee met today.\n", "It will vote tomorrow."]
    assert sentences("One.\n\n\nThank you.") == ["One.\n\n\n", "Thank you."]  # the third newline was lost
    assert sentences("Agenda\nThe committee met.") == ["Agenda\n", "The committee met."]  # "Agenda" was lost


@given(st.lists(st.sampled_from(["It rose.", "We met", "\n", "\n\n", " ", "Fine!"]), max_size=12))
def test_only_a_texts_leading_spacing_is_a_span_without_words(parts):
    text = "".join(parts)
    spans = split(text, "en")
    assert all(text[a:b].strip() for a, b in spans[1:])


def test_a_unit_after_a_number_ends_a_sentence_an_initial_does_not():
    """``Appelez avant 18 h. Merci !`` was one sentence (``h`` is on the Moses list, for initials): the
    model moved ``Merci`` before the time."""
    def parts(text, lang):
        return [text[a:b] for a, b in split(text, lang)]
    assert parts("Appelez avant 18 h. Merci !", "fr") == ["Appelez avant 18 h. ", "Merci !"]
    assert parts("The box weighs 5 kg. It is heavy.", "en") == ["The box weighs 5 kg. ", "It is heavy."]
    assert parts("Une hausse de 15 p. 100 cette année.", "fr") == ["Une hausse de 15 p. 100 cette année."]
    assert parts("Call J. Smith now.", "en") == ["Call J. Smith now."]
    assert parts("M. Tremblay est venu.", "fr") == ["M. Tremblay est venu."]


def test_etc_or_a_word_of_capitals_and_its_full_stop_before_a_capital_end_a_sentence():
    """``passeport, etc. Cordialement, Luc`` and ``72,50 $ CA. Les enfants entrent gratuitement.`` were one sentence
    (``etc`` on the French Moses list; sentencex keeps ``CA.``): the model lost what came after."""
    def parts(text, lang):
        return [text[a:b] for a, b in split(text, lang)]
    assert parts("Apportez votre passeport, etc. Cordialement, Luc", "fr") == ["Apportez votre passeport, etc. ",
                                                                              "Cordialement, Luc"]
    assert parts("Le billet coûte 72,50 $ CA. Les enfants entrent.", "fr") == ["Le billet coûte 72,50 $ CA. ",
                                                                               "Les enfants entrent."]
    assert parts("Bring pens, etc. and paper.", "en") == ["Bring pens, etc. and paper."]
    assert parts("MM. Dupont et Durand sont là.", "fr") == ["MM. Dupont et Durand sont là."]
    assert parts("The U.S. Senate agreed.", "en") == ["The U.S. Senate agreed."]
