"""Tags into a given translation (analysis/transfer_tags.py, ``rnnsearch transfer-tags``): every tag of
the source comes out once, in a well-formed line whose text is the translation as given; a source it
cannot read is named and its translation written untagged; the files are checked before the model loads."""
from __future__ import annotations

import html
import re

import pytest

from rnnsearch.analysis.transfer_tags import transfer_tags
from rnnsearch.cli import main
from rnnsearch.decoding.markup import parse
from rnnsearch.decoding.translator import Translator

SOURCES = ["The <b>dog</b> sees a <i>cat</i>.", "A <x id=\"1\"/>old blue hat takes a hat.", "The tired table & the letter.",
           "<a href=\"u\">The tired table</a> calls <b>the <i>pretty</i> letter</b>."]
TRANSLATIONS = ["Le chien voit un chat.", "Un vieux chapeau bleu prend un chapeau.", "La table fatiguée & la lettre.",
                "La table fatiguée appelle la jolie lettre."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_pretrained(str(tiny_run / "best.pt"))


@pytest.mark.parametrize("reading", ["attention", None])
def test_every_tag_once_around_the_translation_as_given(translator, reading):
    done = transfer_tags(translator, SOURCES, TRANSLATIONS, reading=reading)
    for source, translation, d in zip(SOURCES, TRANSLATIONS, done):
        assert d.error is None
        plain, _ = parse(d.text)  # well-formed
        assert plain == translation
        assert sorted(re.findall(r"<[^<>]+>", d.text)) == sorted(re.findall(r"<[^<>]+>", source))
    assert "&amp;" in done[2].text


def test_a_source_it_cannot_read_keeps_its_translation_untagged(translator):
    (d,) = transfer_tags(translator, ["The <b>dog sees a cat."], ["Le chien & le chat."])
    assert d.error and "never closed" in d.error and d.text == html.escape("Le chien & le chat.", quote=False)
    with pytest.raises(ValueError, match="2 sources and 1 translations"):
        transfer_tags(translator, SOURCES[:2], TRANSLATIONS[:1])


def test_the_command(tiny_run, tmp_path, capsys):
    (tmp_path / "src.en").write_text("\n".join(SOURCES + ["The <b>dog."]) + "\n", encoding="utf-8")
    (tmp_path / "tgt.fr").write_text("\n".join(TRANSLATIONS + ["Le chien."]) + "\n", encoding="utf-8")
    args = ["transfer-tags", str(tiny_run / "best.pt"), "--src", str(tmp_path / "src.en"), "--tgt",
            str(tmp_path / "tgt.fr"), "--out", str(tmp_path / "out.fr"), "--reading", "attention"]
    assert main(args) == 3  # one line's tags not placed
    lines = (tmp_path / "out.fr").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 and lines[4] == "Le chien." and "<b>" in lines[0]
    assert "src.en:5: tags not placed" in capsys.readouterr().err
    (tmp_path / "tgt.fr").write_text("Le chien.\n", encoding="utf-8")
    assert main(args) == 2 and "has 5 lines and" in capsys.readouterr().err
    assert main(args[:-4] + ["--out", str(tmp_path / "src.en")]) == 2


def test_links_over_words_place_the_tags(tiny_run, tmp_path):
    (tmp_path / "src.en").write_text("The <b>dog</b> sees a cat.\n", encoding="utf-8")
    (tmp_path / "tgt.fr").write_text("Un chat voit le chien.\n", encoding="utf-8")
    (tmp_path / "links").write_text("0-3 1-4 2-2 3-0 4-1\n", encoding="utf-8")
    args = ["transfer-tags", str(tiny_run / "best.pt"), "--src", str(tmp_path / "src.en"), "--tgt",
            str(tmp_path / "tgt.fr"), "--out", str(tmp_path / "out.fr"), "--links", str(tmp_path / "links")]
    assert main(args) == 0
    assert (tmp_path / "out.fr").read_text(encoding="utf-8") == "Un chat voit le <b>chien</b>.\n"
    (tmp_path / "links").write_text("0-3\n1-1\n", encoding="utf-8")
    assert main(args) == 2


def test_an_html_block_keeps_its_own_tags(translator):
    (d,) = transfer_tags(translator, ["<p>The <b>dog</b> sees a cat.</p>"], ["Le chien voit un chat."], mode="html")
    assert d.text.startswith("<p>") and d.text.endswith("</p>") and d.text.count("<b>") == 1


def test_links_outside_their_pair_or_none_are_named(translator):
    with pytest.raises(ValueError, match="link 9-9 is outside its pair"):
        transfer_tags(translator, SOURCES[:1], TRANSLATIONS[:1], links=[{(9, 9)}], links_over="words")
    (d,) = transfer_tags(translator, SOURCES[:1], TRANSLATIONS[:1], links=[set()], links_over="words")
    assert d.error == "no links to place its tags by"


def _placed(translator, source: str, translation: str, links: str) -> str:
    pairs = {tuple(map(int, link.split("-"))) for link in links.split()}
    (d,) = transfer_tags(translator, [source], [translation], links=[pairs], links_over="words")
    assert d.error is None
    return d.text


def test_a_term_the_translation_keeps_verbatim_gets_the_tag_exactly(translator):
    """Links that spill onto the next word (Essentials -> "Essentials Edition") do not move the tag off
    the word the translation keeps as the source writes it."""
    text = _placed(translator, "Available in <b>Essentials</b> and <b>Unlimited</b> editions",
                   "Disponible avec Essentials Edition et Unlimited Edition",
                   "0-0 1-1 2-2 2-3 3-4 4-5 4-6 5-3 5-6")
    assert text == "Disponible avec <b>Essentials</b> Edition et <b>Unlimited</b> Edition"


def test_a_term_tagged_twice_goes_around_the_same_words_both_times(translator):
    text = _placed(translator, "Enter <b>Feed Tracking</b> and select <b>Feed Tracking</b>",
                   "Saisissez Suivi de fil et sélectionnez Suivi de fil",
                   "0-0 1-3 2-1 3-4 4-5 5-7 6-6")
    assert text == "Saisissez <b>Suivi de fil</b> et sélectionnez <b>Suivi de fil</b>"


def test_an_element_that_ends_a_sentence_ends_at_its_full_stop(translator):
    text = _placed(translator, "Read it. <ph>Users add items.</ph> Users remove them.",
                   "Lisez-le. Les utilisateurs ajoutent des éléments. Les utilisateurs les retirent.",
                   "0-0 1-0 2-1 2-2 3-3 4-4 4-5 4-6 5-7 6-9 7-8")
    assert text == "Lisez-le. <ph>Les utilisateurs ajoutent des éléments.</ph> Les utilisateurs les retirent."


def test_a_kept_label_takes_its_bracketed_translation_along(translator):
    text = _placed(translator, "Click <b>Clear Test Data</b>.", "Cliquez sur Clear Test Data (Effacer les données de test).",
                   "0-0 0-1 1-2 2-3 3-4")
    assert text == "Cliquez sur <b>Clear Test Data (Effacer les données de test)</b>."


def test_brackets_the_source_writes_after_the_element_stay_outside_it(translator):
    text = _placed(translator, "Use <b>count</b> (OData only).", "Utilisez count (OData uniquement).",
                   "0-0 1-1 2-2 3-3")
    assert text == "Utilisez <b>count</b> (OData uniquement)."


def test_sentences_written_together_are_read_apart():
    from types import SimpleNamespace
    from rnnsearch.analysis.transfer_tags import tokens
    codec = SimpleNamespace(words=str.split)
    assert tokens(codec, "données.Les fichiers") == (["données.", "Les", "fichiers"], (1,))
    assert tokens(codec, "U.S. files insert_error.csv.") == (["U.S.", "files", "insert_error.csv", "."], (3,))


def test_a_title_case_label_holds_as_many_words_as_it_has(translator):
    """"Log Filters" has two words that are not frequent: its span goes on over "des" to the second
    ("Filtres des journaux") though the links put "journaux" on "tab"."""
    text = _placed(translator, "The <b>Log Filters</b> tab shows the levels.",
                   "L'onglet Filtres des journaux affiche les niveaux.", "0-0 3-0 1-1 2-1 3-3 4-4 5-5 6-6")
    assert text == "L'onglet <b>Filtres des journaux</b> affiche les niveaux."


def test_the_translation_keeps_its_own_characters_and_spaces(translator):
    """No space added around a tag of no words, and the source's entities are not written into the
    translation (it writes its own characters): only tags are added."""
    (a,) = transfer_tags(translator, ['The dog <x id="1"/> sees a cat.'], ["Le chien voit un chat."])
    assert re.sub(r"<[^<>]+>", "", a.text) == "Le chien voit un chat." and a.text.count('<x id="1"/>') == 1
    (b,) = transfer_tags(translator, ["The <b>dog</b> &nbsp;sees &copy; a cat."], ["Le chien voit © un chat."],
                         mode="html")
    assert re.sub(r"<[^<>]+>", "", b.text) == "Le chien voit © un chat." and b.text.count("<b>") == 1


def test_an_empty_translation_of_a_tagged_line_is_named(translator):
    (d,) = transfer_tags(translator, ["The <b>dog</b> sees a cat."], ["  "])
    assert d.error and "translation is empty" in d.error


def test_a_reverse_model_of_the_same_direction_is_refused(translator):
    with pytest.raises(ValueError, match="the reverse model translates en->fr, the model en->fr"):
        transfer_tags(translator, SOURCES[:1], TRANSLATIONS[:1], reverse=translator)


@pytest.mark.parametrize("text, firsts", [
    ("Read it. Users add items.", ["Users"]),
    ("Révisez, puis réessayez. » La variable", ["La"]),  # the closing quote stays with its sentence
    ("champs vides.Les utilisateurs", ["Les"]),          # a paragraph's tags taken out between them
    ("Lorsqu'une règle est activée :Elle recherche", ["Elle"]),
    ("Désinscription d'adresse e-mailNe pas appeler", ["Ne"]),
    ("e.g. the 3.5 GB file: Setup runs", []),             # no capital after a stop; a spaced colon
])
def test_sentences_are_read_where_a_list_or_paragraph_was_taken_out(text, firsts):
    from rnnsearch.decoding.labels import sentence_starts
    assert [text[k:].split()[0] for k in sentence_starts(text)] == firsts


def test_an_element_of_whole_sentences_goes_around_the_sentences_paired_with_them(translator):
    """The links put "Users" of the second sentence on the first target sentence; the element of the
    last two source sentences goes around the last two of the translation all the same, the third
    source sentence being translated as two (a bead of one sentence for two)."""
    text = _placed(translator, "Read it. <ph>Users add items. Users remove them, then they leave.</ph>",
                   "Lisez-le. Les utilisateurs ajoutent des éléments. Ils les retirent. Puis ils partent.",
                   "0-0 1-0 2-0 2-2 3-3 4-4 4-5 5-6 6-8 7-7 8-9 9-10 10-11")
    assert text == ("Lisez-le. <ph>Les utilisateurs ajoutent des éléments. Ils les retirent. Puis ils "
                    "partent.</ph>")


def test_a_capitalised_label_begins_at_a_capital_up_to_three_words_before_its_span(translator):
    """The links put only "compte" on "Account Note"; a French label begins at its capital."""
    text = _placed(translator, "Choose <b>Account Note</b> from the list.", "Choisissez Note sur le compte dans la liste.",
                   "0-0 1-4 2-4 3-5 4-6 5-7")
    assert text == "Choisissez <b>Note sur le compte</b> dans la liste."


def test_a_label_inside_its_sentence_does_not_begin_at_the_translations_first_word(translator):
    """The links put "Appuyez" (capitalised as a sentence's first word) on "Enter" as well: the label
    begins at the capital inside its span instead."""
    text = _placed(translator, "Press <kbd>Enter</kbd> to save.", "Appuyez sur Entrée pour enregistrer.",
                   "0-1 1-0 1-2 2-3 3-4")
    assert text == "Appuyez sur <kbd>Entrée</kbd> pour enregistrer."


def test_a_typographic_apostrophe_is_read_as_the_straight_one(translator):
    """``d’Analytics`` is read as ``d'Analytics`` is (``d'`` and ``Analytics``), so a tag goes after the
    elision as it does after a straight apostrophe, and the translation keeps its own apostrophe."""
    from rnnsearch.analysis.transfer_tags import tokens
    codec = translator.tgt_codec
    assert tokens(codec, "les données d’Analytics")[0] == tokens(codec, "les données d'Analytics")[0]
    for mark in ("\u2019", "'"):
        text = _placed(translator, "The data of <ph>Analytics</ph>.", f"Les données d{mark}Analytics.", "0-0 1-1 2-2 3-2")
        assert text == f"Les données d{mark}<ph>Analytics</ph>."


def test_a_subword_model_places_tags_between_its_tokenizers_words():
    """A SentencePiece model's tokens are its tokenizer's words, as a word model's are, not whitespace
    words: the full stop after a label stays outside it, and a URL's parts can be tagged."""
    from types import SimpleNamespace
    from rnnsearch.analysis.transfer_tags import tokens
    from rnnsearch.data.tokenize import pretokenize
    codec = SimpleNamespace(mode="sentencepiece", words=lambda text: pretokenize(text, "moses", "fr"))
    assert tokens(codec, "reportez-vous à Configuration.")[0][-2:] == ["Configuration", "."]
    assert "/" in tokens(codec, "https://example.org/services/v1")[0]
