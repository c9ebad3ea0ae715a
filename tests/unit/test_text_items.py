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
                                        ("613 555 0199", "phone"), ("1 800 555-0123", "phone"), ("555-0142", "phone"),
                                        ("O'Rourke-Nakamura", "name"), ("D'Souza", "name"), ("L'Heureux-Dubé", "name"),
                                        ("McAllister-O'Neill", "name"),
                                        ("j.o'neil+news@example.ie", "email"),
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
    assert found == {"18 500": "18,500", "4,2 millions $": "$4.2 million", "37,5 %": "37.5%"}


@pytest.mark.parametrize("text, src, tgt, item, rendering", [
    ("It costs 1.500,00 EUR.", "en", "fr", "1.500,00", "1 500,00"),  # read as 1.5 and ",00": "1,500 cher ,00 EUR"
    ("It costs €2.300,50 now.", "en", "fr", "€2.300,50", "2 300,50 €"),
    ("Il a payé 1,500.00 $ hier.", "fr", "en", "1,500.00 $", "$1,500.00"),
    ("The rate rose by .5 points.", "en", "fr", ".5", "0,5"),  # the model dropped it: "à parts égales"
    ("It costs $.75 a page.", "en", "fr", "$.75", "0,75 $")])
def test_a_number_in_the_other_convention_or_without_its_zero(text, src, tgt, item, rendering):
    found = [(i.text, i.rendering.replace("\u202f", " ").replace("\u00a0", " ")) for i in items.find(text, src, tgt)]
    assert found == [(item, rendering)]


def test_a_points_between_numbers_and_an_ellipsis_are_no_leading_decimals():
    assert kinds("Wait...5 minutes, then 1.5.2 and 3..5.") == [("version", "1.5.2", "1.5.2")]


def test_verbatim_numbers_on_request_and_currency_signs_never_change():
    assert [r for _, _, r in kinds("It costs $2.15 or 5,600 ¥.", convert_numbers=False)] == ["$2.15", "5,600 ¥"]
    assert all(sign in r for sign, (_, _, r) in zip("$¥", kinds("It costs $2.15 or 5,600 ¥.")))


def test_short_integers_and_references_are_left_alone():
    assert [i.text for i in items.find("In May there were 15 of them at 6:05 for $40 or 83%.", "en", "fr",
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


def test_a_time_of_the_12_hour_clock_is_written_on_the_24_hour_clock_in_french():
    """The model wrote ``17 h 59`` for 11:59 p.m.; the Hansards' French writes ``23 h 59``, ``17 heures``. A
    time's sentence-ending full stop stays the sentence's; into English, or without a.m./p.m., the model's."""
    assert kinds("Vote at 11:59 p.m. tomorrow, or 9:45 p.m., 12:30 a.m., 12 p.m. or 10 a.m. today.") == [
        ("time", "11:59 p.m.", "23 h 59"), ("time", "9:45 p.m.", "21 h 45"), ("time", "12:30 a.m.", "0 h 30"),
        ("time", "12 p.m.", "12 heures"), ("time", "10 a.m.", "10 heures")]
    assert kinds("Call before 5 p.m.") == [("time", "5 p.m", "17 heures")]
    assert kinds("At 5 p.m. Members voted.") == [("time", "5 p.m", "17 heures")]
    assert kinds("Vote at 11:59 p.m. or at 14:30.", "en", "de") == [] and kinds("The 10 amendments, I am.") == []
    assert kinds("Vote at 11:59 p.m.", convert_numbers=False) == []
    assert kinds("See the clock as 5.30 p.m.? Or 5.30 per cent.") == [  # the Hansards' English: "5,30" came out
        ("time", "5.30 p.m.", "17 h 30"), ("number", "5.30", "5,30")]


def test_phone_numbers_are_not_read_as_numbers_and_ranges_are_not_phones():
    assert kinds("Composez le 1 800 555-0123 ou le 514 555 0188.", "fr", "en") == [
        ("phone", "1 800 555-0123", "1 800 555-0123"), ("phone", "514 555 0188", "514 555 0188")]
    assert [k for k, _, _ in kinds("From 1990-1995 and 2020-2024, 1 800 555 people.", "fr", "en")] == ["number"]


def test_a_french_elision_is_no_name_but_a_name_with_an_apostrophe_is():
    assert kinds("L'Europe et Qu'Ottawa, D'accord, N'est-ce pas ?", "fr", "en") == []
    assert [t for _, t, _ in kinds("M. Dell'Orso et Mme N'Diaye ont voté.", "fr", "en")] == ["Dell'Orso", "N'Diaye"]


def test_into_english_a_number_takes_its_per_cent_sign_along():
    """``de 7,4 % à 6,9 %`` came out ``from 7.4 6.9%``: the model dropped a ``%`` after a slot."""
    assert kinds("Le taux est passé de 7,4 % à 6,9\u00a0%, soit 37,5%.", "fr", "en") == [
        ("number", "7,4 %", "7.4%"), ("number", "6,9\u00a0%", "6.9%"), ("number", "37,5%", "37.5%")]
    assert kinds("It rose 37.5% in 2.5 years.") == [("number", "37.5", "37,5"), ("number", "2.5", "2,5")]  # p. 100


def test_a_formula_or_an_operator_comes_through_with_its_numbers_in_the_targets_convention():
    """``If 7 > 2`` came out ``Si le 7 est 2``: the model has no word for ``>``."""
    assert kinds("If 7 > 2 and x = 3.5, or y ≤ 10, a<b.") == [
        ("formula", "7 > 2", "7 > 2"), ("formula", "x = 3.5", "x = 3,5"), ("formula", "y ≤ 10", "y ≤ 10"),
        ("formula", "a<b", "a<b")]
    assert kinds("si 7,5 > 2", "fr", "en") == [("formula", "7,5 > 2", "7.5 > 2")]
    assert kinds("Passes if yes >= 50%; Prices < 10; Open Setup > Users, File > Save As, or I & you.") == [
        ("formula", ">= 50", ">= 50"), ("formula", "< 10", "< 10"), ("menu", "Setup > Users", "Setup > Users"),
        ("menu", "File > Save As", "File > Save As"), ("symbol", "&", "&")]
    assert kinds("Tom & Jerry, Procter & Gamble and AT&T.") == [("firm", "Tom & Jerry", "Tom & Jerry"),
                                                                ("firm", "Procter & Gamble", "Procter & Gamble"),
                                                                ("acronym", "AT&T", "AT&T")]
    assert kinds("Bold <b>x</b> and a-b, 3-4 or well-known.") == [("tag", "<b>", "<b>"), ("tag", "</b>", "</b>")]  # a
    # tag's brackets and hyphens are no operators


@given(st.text(alphabet="ab xy<>=≤±.,0123456789-/ ", max_size=40))
def test_a_formulas_operator_is_always_in_its_item(text):
    found = items.find(text, "en", "fr")
    assert all(text[i.start:i.end] == i.text for i in found)
    assert all(a.end <= b.start for a, b in zip(found, found[1:]))
    assert all(any(ch in i.rendering for ch in "<>=≤±") for i in found if i.kind in ("formula", "symbol"))


def test_an_amount_in_currency_words_is_one_item_in_the_targets_convention():
    """``It costs 25 dollars`` came out ``25 cents``, ``10 dollars`` as ``10``; French writes the words alike."""
    assert kinds("It costs 25 dollars, 18.4 cents or 90,000 euros.") == [
        ("money", "25 dollars", "25 dollars"), ("money", "18.4 cents", "18,4 cents"),
        ("money", "90,000 euros", "90\u202f000 euros")]
    assert kinds("Il coûte 2,69 dollars, soit -1 dollar.", "fr", "en") == [
        ("money", "2,69 dollars", "2.69 dollars"), ("money", "-1 dollar", "-1 dollar")]
    assert [k for k, _, _ in kinds("We paid 2,500 dollarsigns.")] == ["number"]


def test_an_amount_with_a_scale_word_keeps_its_currency():
    """``12 millions d'euros`` came out ``$12 million``: the currency word, with the scale word, is the item's."""
    assert kinds("Elle investira 12 millions d'euros et 4,2 millions de dollars.", "fr", "en") == [
        ("money", "12 millions d'euros", "€12 million"), ("money", "4,2 millions de dollars", "$4.2 million")]
    assert kinds("It will invest 12 million euros and 2.5 billion dollars.") == [
        ("money", "12 million euros", "12 millions d'euros"), ("money", "2.5 billion dollars", "2,5 milliards de dollars")]
    dollars = lambda word: word == "dollars"  # noqa: E731 (a frequent word of the vocabulary: the model writes $4.2 million)
    assert kinds("12 millions d'euros et 4,2 millions de dollars", "fr", "en", known=dollars, frequent=dollars) == [
        ("money", "12 millions d'euros", "€12 million"), ("number", "4,2", "4.2")]
    dollar = lambda word: word == "$"  # noqa: E731 (a sign the vocabulary holds; its sign after the scale word
    assert kinds("Il prévoit 3,2 milliards $ et 750 millions $.", "fr", "en", known=dollar) == [  # came out $3.2)
        ("amount", "3,2 milliards $", "$3.2 billion"), ("amount", "750 millions $", "$750 million")]


def test_a_day_written_day_first_is_written_as_french_writes_it():
    """``on 12 May 2024`` came out ``sur 12 2024`` and ``au 2024 mai``: the Hansards write days month first."""
    assert kinds("By 12 May 2024, 1 April and 29 February.") == [
        ("date", "12 May 2024", "12 mai 2024"), ("date", "1 April", "1er avril"), ("date", "29 February", "29 février")]
    assert kinds("It votes on 12 May. On 3 June 2025 it sat.") == [("date", "on 12 May", "le 12 mai"),
                                                                    ("date", "On 3 June 2025", "Le 3 juin 2025")]
    assert kinds("On May 12, 1996, 31 June, 12 Mayfair.") == []  # month first is the model's; no such day
    assert kinds("le 12 mai 2024", "fr", "en") == [] and kinds("On 12 May 2024.", convert_numbers=False) == []


def test_an_amount_with_a_scale_abbreviation_is_one_item_written_out():
    """``$120M`` came out ``$ 120M $`` and ``3,5 M$`` as ``M$ 3.5``: CLDR's short compact forms (and Canada's
    ``G$``) read, the amount written with the target's scale word."""
    assert kinds("It cost $120M, $3.5B or $45K.") == [
        ("amount", "$120M", "120 millions\u00a0$"), ("amount", "$3.5B", "3,5 milliards\u00a0$"),
        ("amount", "$45K", "45\u202f000\u00a0$")]
    assert kinds("Soit 3,5 M$, 2,5 Md$ ou 3 G$.", "fr", "en") == [
        ("amount", "3,5 M$", "$3.5 million"), ("amount", "2,5 Md$", "$2.5 billion"), ("amount", "3 G$", "$3 billion")]
    assert kinds("5 M people and an MP3 player.") == []


def test_a_postal_code_is_one_item():
    """``K1A 0A6`` came out ``(0A6) K1A`` and ``K1A, Ottawa, Ontario 0A6``: the model read it as two words."""
    assert kinds("Ottawa, ON K1A 0A6, M5V3L9 or London SW1A 2AA.") == [
        ("postcode", "K1A 0A6", "K1A 0A6"), ("postcode", "M5V3L9", "M5V3L9"), ("postcode", "SW1A 2AA", "SW1A 2AA")]
    assert kinds("Bill C-45, a B52 and the A1 road.") == []


def test_a_french_time_is_written_on_the_12_hour_clock_in_english():
    """``de 8 h 30 à 16 h 30`` came out ``at 8 a.m. to 16 p.m.`` and ``à 14 h 30 et ... à 16 h 45`` as ``at 2: 30
    p.m.``; "à" and "de ... à" go with the time ("at", "from ... to")."""
    assert kinds("Ouvert de 8 h 30 à 16 h 30, puis à 18 h 05, À 0 h 15 ou 12 h.", "fr", "en") == [
        ("time", "de 8 h 30 à 16 h 30", "from 8:30 a.m. to 4:30 p.m."), ("time", "à 18 h 05", "at 6:05 p.m."),
        ("time", "À 0 h 15", "At 12:15 a.m."), ("time", "12 h", "12 p.m.")]
    assert kinds("à 100 km/h en 24 heures", "fr", "en") == [("measure", "100 km/h", "100 km/h")]  # no time
    assert kinds("à 18 h 05", "fr", "de") == []



def test_a_number_with_its_unit_is_one_item_in_the_targets_convention():
    """``25°C`` came out ``25 $``, ``1,000 kg`` as ``les 1 000``, ``85 km/h`` as ``85 h 45``, ``180 °C`` as ``180 °``."""
    nb = "\u202f"
    assert kinds("It was 25°C, then -40°C; 85 km/h and 1,000 kg, 2.5 GB, 6 ft.") == [
        ("measure", "25°C", f"25{nb}°C"), ("measure", "-40°C", f"-40{nb}°C"), ("measure", "85 km/h", f"85{nb}km/h"),
        ("number", "1,000", f"1{nb}000"), ("measure", "2.5 GB", f"2,5{nb}Go"), ("measure", "6 ft", f"6{nb}pi")]
    assert kinds("Cuire à 180 °C, 6 pi, 3,5 kg.", "fr", "en") == [
        ("measure", "180 °C", "180°C"), ("number", "3,5", "3.5")]  # pi: a word too, not read as a unit
    assert kinds("Le fichier fait 250 Ko ou 2 Mo.", "fr", "en") == [  # Ko as Mo and Go are written: "250 Ko" came out
        ("measure", "250 Ko", "250 kB"), ("measure", "2 Mo", "2 MB")]
    assert kinds("At 5 in the morning, 3 m away, 2 t.") == []  # a symbol that is a word or a letter is no unit
    # a unit of letters the target writes the same (kg, km) is the model's, which copies it: as an item with its
    # number, "300 kg de fromage chaque semaine" came out "300 kg au fromage chaque année"


def test_ordinals_and_days_with_an_ordinal_are_items():
    """``in the 1st quarter and 21% in the 2nd`` came out ``au cours du 1 trimestre``; ``au 3e trimestre`` as
    ``in the quarter``; ``December 25th`` as ``25th close``."""
    assert kinds("The 1st, 2nd, 3rd, 11th, 22nd and 101st.") == [
        ("ordinal", w, r) for w, r in [("1st", "1er"), ("2nd", "2e"), ("3rd", "3e"), ("11th", "11e"), ("22nd", "22e"),
                                      ("101st", "101e")]]
    assert kinds("Le 1er, la 1re, le 2e, le 3e, le 12e.", "fr", "en") == [
        ("ordinal", w, r) for w, r in [("1er", "1st"), ("1re", "1st"), ("2e", "2nd"), ("3e", "3rd"), ("12e", "12th")]]
    assert kinds("Closed on December 25th, 2024 and the 3rd of May.") == [
        ("date", "on December 25th, 2024", "le 25 décembre 2024"), ("date", "3rd of May", "3 mai")]
    assert kinds("December 25 is a holiday.") == []  # a day after its month without a suffix: the model's
    assert kinds("The 35th Parliament, the 101st.", known=lambda w: w == "35th") == [("ordinal", "101st", "101e")]
    # an ordinal the vocabulary holds is the model's ("la première session de la 35e législature"; as items it
    # came out "La session 1er du Parlement 35e")
    assert kinds("Page 30 of March's report, 1 of May's cousins; 1e-5 au 3e.") == [] and \
        kinds("La tolérance est de 1e-5.", "fr", "en") == []


def test_emoji_french_phone_numbers_and_numbered_references_are_whole():
    """``👍🏽`` came out ``👍 🏽`` (the family's joiners lost), ``01 42 68 53 00`` as ``01 42 00``, ``order #A-10442``
    as ``ordonnance A-10442``."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert kinds(f"Thumbs \U0001f44d\U0001f3fd up, {family} here, \U0001f1e8\U0001f1e6!") == [
        ("emoji", "\U0001f44d\U0001f3fd", "\U0001f44d\U0001f3fd"), ("emoji", family, family),
        ("emoji", "\U0001f1e8\U0001f1e6", "\U0001f1e8\U0001f1e6")]
    assert kinds("Press 1\ufe0f\u20e3 or 5\ufe0f\u20e35\ufe0f\u20e3.") == [
        ("emoji", "1\ufe0f\u20e3", "1\ufe0f\u20e3"), ("emoji", "5\ufe0f\u20e35\ufe0f\u20e3", "5\ufe0f\u20e35\ufe0f\u20e3")]
    assert kinds("Use snake_case names, not snake case.") == [("code", "snake_case", "snake_case")]
    assert kinds("tél. : 01 42 68 53 00 ou 06.12.34.56.78", "fr", "en") == [
        ("phone", "01 42 68 53 00", "01 42 68 53 00"), ("phone", "06.12.34.56.78", "06.12.34.56.78")]
    assert kinds("Quote order #A-10442 or #12345, not C#.") == [
        ("identifier", "#A-10442", "#A-10442"), ("identifier", "#12345", "#12345")]


def test_a_programs_placeholders_are_items_and_per_cent_signs_are_not():
    """``translate`` wrote ``The file %s was saved in %d seconds.`` as ``On a économisé jusqu'à 10 p. 100.`` and
    ``you have {1} new messages`` as ``vous avez {1} messages}``."""
    cases = [("Hello {0}, you have {1} new messages.", ["{0}", "{1}"]), ("%s saved in %.2f s", ["%s", "%.2f"]),
             ("Welcome, %(name)s!", ["%(name)s"]), ("{{ user.name }} and ${HOME}", ["{{ user.name }}", "${HOME}"]),
             ("Arg %1 of %2; %1$d", ["%1", "%2", "%1$d"]),
             ("{count:d} of {0,number,integer}", ["{count:d}", "{0,number,integer}"])]
    for text, found in cases:
        assert [t for k, t, _ in kinds(text) if k == "placeholder"] == found, text
    for text in ["Prices rose 50% of the time.", "a 20 % rise", "100%s", "50%off", "{ a b }", "La hausse de 5 %de"]:
        assert "placeholder" not in [k for k, _, _ in kinds(text)], text


def test_a_tag_written_as_text_is_one_item():
    """``Use the &lt;b&gt; tag to make text bold.`` came out ``&lt;``: the model read ``< b >`` as words."""
    assert [t for k, t, _ in kinds('Use <b>, </b> or <a href="x.html" class=k>; write <br/>.') if k == "tag"] == [
        "<b>", "</b>", '<a href="x.html" class=k>', "<br/>"]
    for text in ["If x<y and y>z then stop.", "a < b and c > d", "<- back", "1 <2> 3"]:
        assert "tag" not in [k for k, _, _ in kinds(text)], text


def test_a_uuid_an_ipv6_address_and_a_path_from_a_variable_are_whole():
    """``550e8400-e29b-41d4-a716-446655440000`` came out ``les 716 550e8400-...``, ``2001:db8::1`` as ``2001 : db8 1 h 1``
    and ``${HOME}/bin`` as ``${HOME}`` (``/bin`` lost)."""
    found = kinds("Copy ${HOME}/bin and $HOME/docs/a.txt; id 550e8400-e29b-41d4-a716-446655440000 at 2001:db8::1.")
    assert [t for _, t, _ in found] == ["${HOME}/bin", "$HOME/docs/a.txt", "550e8400-e29b-41d4-a716-446655440000",
                                        "2001:db8::1"]
    for text in ["At 10:30:45 the ratio was 3:2.", "Use :: in C++.", "Price $5 today."]:
        assert not [k for k, _, _ in kinds(text) if k in ("identifier", "placeholder")], text


def test_a_file_name_with_dots_or_underscores_is_one_item():
    """``rnnsearch-2.0.1.tar.gz`` came out ``rnnsearch- 2,0 1.tar.`` and ``report_2024.pdf`` as ``report_2024 .pdf``."""
    found = kinds("Get rnnsearch-2.0.1.tar.gz, report_2024.pdf and config.v2.yaml; my_var stays code.")
    assert [(k, t) for k, t, _ in found] == [("path", "rnnsearch-2.0.1.tar.gz"), ("path", "report_2024.pdf"),
                                             ("path", "config.v2.yaml"), ("code", "my_var")]
    assert [t for _, t, _ in kinds("See notes.txt.")] == ["notes.txt"]  # the sentence's full stop stays its own


def test_a_time_zone_after_a_time_is_part_of_its_item_named_in_the_target_language():
    """``We open at 8 a.m. Eastern Time on Monday.`` came out ``Nous avons ouvert les 8 heures. C'est lundi dernier.``:
    the time's full stop read as the sentence's, and the zone as a sentence of its own."""
    def times(text, src="en", tgt="fr"):
        return [(i.text, i.rendering) for i in items.find(text, src, tgt) if i.kind == "time"]
    assert times("We open at 8 a.m. Eastern Time on Monday.") == [("8 a.m. Eastern Time", "8 heures (heure de l’Est)")]
    assert times("Send it by 5 p.m. ET. Thanks.") == [("5 p.m. ET", "17 heures HE")]
    assert times("At 9:30 a.m. (PST) and 1 p.m. UTC.") == [("9:30 a.m. (PST)", "9 h 30 (HNP)"),
                                                            ("1 p.m. UTC", "13 heures UTC")]
    assert times("Appelez avant 17 h HE.", "fr", "en") == [("17 h HE", "5 p.m. ET")]
    assert times("By 5 p.m. AT&T closes.") == [("5 p.m", "17 heures")]  # no zone: a name (the stop read as an end)
    assert times("Send it by 5 p.m. Late ones wait.") == [("5 p.m", "17 heures")]  # the full stop the sentence's


def test_a_time_in_capitals_is_one_and_jusqua_is_the_models():
    """``Doors open at 7 PM.`` came out ``Open au premier ministre.``; ``jusqu'à 17 h`` came out ``to at 5 p.m.``."""
    def times(text, src="en", tgt="fr"):
        return [(i.text, i.rendering) for i in items.find(text, src, tgt) if i.kind == "time"]
    assert times("Doors open at 7 PM tonight.") == [("7 PM", "19 heures")]
    assert times("The call is at 9:30 P.M. EST on Monday.") == [("9:30 P.M. EST", "21 h 30 HNE")]
    assert times("I AM here at 5 Pm.") == []  # neither a time nor a mixed case one
    assert times("Ouvert jusqu'à 17 h.", "fr", "en") == [("17 h", "5 p.m.")]
    assert times("Rendez-vous à 17 h.", "fr", "en") == [("à 17 h", "at 5 p.m.")]


def test_a_page_reference_is_one_item_the_hansards_per_cent_is_not():
    """``Voir la p. 12.`` came out ``See 12%.`` (the Hansards' ``p. 100``), ``(pp. 12-15)`` as ``(12-15))``."""
    assert [t for _, t, _ in kinds("Voir la p. 12 et les pp. 3-5.", "fr", "en")] == ["p. 12", "pp. 3-5"]
    assert [t for _, t, _ in kinds("See p.12, then p. 3.5 of it.")] == ["p.12", "3.5"]
    assert kinds("Une hausse de 15 p. 100.", "fr", "en") == []
