"""Items that must come through a translation (text/items.py) and numbers in a language's convention
(text/numbers.py, through Babel)."""
from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, strategies as st

from rnnsearch.text import items, numbers


def kinds(text, src="en", tgt="fr", **kw):
    return [(i.kind, i.text, i.rendering) for i in items.find(text, src, tgt, **kw)]


def test_urls_and_emails_whole_without_the_sentence_punctuation():
    found = kinds("See https://www.health-region.ca/budget-2024/plan.html, or info@health-region.ca. Or www.x.org/a.")
    assert found == [("url", "https://www.health-region.ca/budget-2024/plan.html", "https://www.health-region.ca/budget-2024/plan.html"),
                     ("email", "info@health-region.ca", "info@health-region.ca"),
                     ("url", "www.x.org/a", "www.x.org/a")]


def test_a_bracket_the_url_opened_stays_in_it():
    assert kinds("(see https://en.example.org/wiki/Foo_(bar))")[0][1] == "https://en.example.org/wiki/Foo_(bar)"


@pytest.mark.parametrize("text, kind", [("(613) 555-0142", "phone"), ("+1 800 555 0199", "phone"),
                                        ("613-555-0123", "phone"), ("2024-03-15", "datetime"), ("15/03/2024", "datetime"),
                                        ("v2.3.1", "version"), ("4.2.1", "version"), ("/etc/app/config.yaml", "path"),
                                        ("report.pdf", "path"), ("`pip install x`", "code"), ("@rnnsearch", "handle"),
                                        ("AT&T", "acronym"), ("R&D", "acronym")])
def test_verbatim_kinds_come_out_as_written(text, kind):
    [(k, t, r)] = kinds(f"Write {text} now")
    assert (k, t, r) == (kind, text, text)


@pytest.mark.parametrize("text", ["Tom & Jerry", "A&B&C", "Johnson&Johnson", "x&y"])
def test_an_ampersand_between_words_or_in_a_chain_is_no_acronym(text):
    assert not [k for k, _, _ in kinds(f"Write {text} now") if k == "acronym"]


def test_numbers_and_amounts_in_french_convention():
    found = {t: r.replace("\u202f", " ").replace("\u00a0", " ") for _, t, r in
             kinds("It rose 37.5% to €4.2 million, £250 million, $2.15, €25,000 and 5,600 people; 4.2 times.")}
    assert found == {"37.5": "37,5", "€4.2 million": "4,2 millions €", "£250 million": "250 millions £",
                     "$2.15": "2,15 $", "€25,000": "25 000 €", "5,600": "5 600", "4.2": "4,2"}


def test_french_numbers_into_english():
    found = {t: r for _, t, r in kinds("Les 18 500 ménages ont payé 4,2 millions $ soit 37,5 %.", "fr", "en")}
    assert found == {"18 500": "18,500", "4,2 millions $": "$4.2 million", "37,5": "37.5"}


def test_verbatim_numbers_on_request_and_currency_signs_never_change():
    assert [r for _, _, r in kinds("It costs $2.15 or 5,600 ¥.", convert_numbers=False)] == ["$2.15", "5,600 ¥"]
    assert all(sign in r for sign, (_, _, r) in zip("$¥", kinds("It costs $2.15 or 5,600 ¥.")))


def test_short_integers_times_and_references_are_left_alone():
    assert [i.text for i in items.find("In May there were 15 of them at 6:05 p.m. for $40 or 83%.", "en", "fr",
                                       known={"$"}.__contains__)] == []
    rare = kinds("In 2024 there were 1500 of 1999.", frequent={"1999"}.__contains__)
    assert rare == [("number", "2024", "2024"), ("number", "1500", "1500")]  # verbatim, not 2 024
    assert kinds("It costs €599.") == [("amount", "€599", "599\u00a0€")]  # a sign the model lacks
    assert kinds("See section 3.1 of the act.") == [("version", "3.1", "3.1")]


@given(st.integers(0, 10**12), st.integers(0, 3))
def test_a_number_read_back_is_the_number_written(value, decimals):
    amount = Decimal(value).scaleb(-decimals)
    for lang in ("en", "fr"):
        written = numbers.format_number(amount, decimals, lang)
        assert numbers.parse(written, lang) == (amount, decimals)


def test_scale_words_come_from_babel():
    assert numbers.scale_words("en")["million"] == 6 and numbers.scale_words("en")["billion"] == 9
    assert numbers.scale_words("fr")["milliards"] == 9


@given(st.text(alphabet="ab .,:/@$€%0123456789-()", max_size=60))
def test_items_never_overlap_and_point_at_their_text(text):
    found = items.find(text, "en", "fr")
    assert all(text[i.start:i.end] == i.text for i in found)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))


def test_what_the_vocabulary_holds_is_left_to_the_model():
    """A known currency sign's amount with a scale word is the model's (its number an item where it has a
    group or decimal symbol); a known sign's grouped or decimal amount is an item whole (the model wrote
    ``$ 12 500 $`` around its number's slot); a grouped or decimal number is an item even where the
    vocabulary holds it (the model writes it as it knows it)."""
    known = {"$", "10,000"}.__contains__
    found = [(i.kind, i.text, i.rendering.replace("\u202f", " ")) for i in
             items.find("It is $21 billion, $1.5 billion, $92,282, 10,000 people and €4.2 million.", "en", "fr",
                        known=known)]
    assert found == [("number", "1.5", "1,5"), ("amount", "$92,282", "92 282\u00a0$"), ("number", "10,000", "10 000"),
                     ("amount", "€4.2 million", "4,2 millions\u00a0€")]


@pytest.mark.parametrize("text, item, rendering", [
    ("It fell to -$2,300 today", "-$2,300", "-2 300\u00a0$"), ("It shows -$500 now", "-$500", "-500\u00a0$"),
    ("A deficit of -4.5% here", "-4.5", "-4,5"), ("It was -12 at night", "-12", "-12"),
    ("It was \u221212.5 degrees", "\u221212.5", "\u221212,5"), ("Down (-3.25) points", "-3.25", "-3,25")])
def test_a_numbers_minus_sign_stays_with_it(text, item, rendering):
    found = [(i.text, i.rendering.replace("\u202f", " ")) for i in items.find(text, "en", "fr", known={"$"}.__contains__)]
    assert found == [(item, rendering)]


def test_a_hyphen_after_a_word_or_a_number_is_no_minus():
    assert kinds("From 1990-1995 on A-4, Bill C-45 and pages 10-12.") == []
    assert kinds("Items 3.5-4.5 of A-4.5") == [("number", "3.5", "3,5"), ("number", "4.5", "4,5"), ("number", "4.5", "4,5")]


@pytest.mark.parametrize("text, kind", [("3.1.4-beta", "version"), ("v2.0.1-rc.1", "version"), ("10.1000/xyz123", "doi"),
                                        ("978-3-16-148410-0", "identifier"), ("237-C", "identifier")])
def test_versions_identifiers_and_dois_come_out_as_written(text, kind):
    [(k, t, r)] = kinds(f"Write {text} now")
    assert (k, t, r) == (kind, text, text)


def test_a_plural_reference_word_makes_a_version():
    assert kinds("Versions 2.0 were out.") == [("version", "2.0", "2.0")]
