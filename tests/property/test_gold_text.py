"""The WPT gold set's words in natural form: every gold word is covered once, in order, and
the natural words are what Hansards writes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.analysis.force_align import merge
from rnnsearch.analysis.gold_text import as_written, natural_english, natural_french

WORDS = ["de", "le", "la", "les", "à", "je", "que", "si", "il", "ils", "en", "égard", "homme", "haut",
         "ordre", "produits", "droit", ",", ".", "i", "am", "Orateur", "ce", "est", "-", "être", "peut"]


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), max_size=12), join=st.booleans())
def test_every_gold_word_is_covered_once_in_order(words, join):
    known = (lambda w: True) if join else None  # noqa: E731  (join every "X - Y" of two words)
    for groups in (natural_french(words, known), natural_english(words, known), as_written(words)):
        covered = [k for _, owners in groups for k in owners]
        assert covered == list(range(len(words)))
        assert all(word for word, _ in groups)
        assert all(len(owners) == 1 or word in ("du", "des", "au", "aux", "Du", "Des", "Au", "Aux")
                   or (join and len(owners) == 3 and "-" in word) for word, owners in groups)


def test_hyphenated_words_are_joined_where_the_vocabulary_has_them():
    assert [w for w, _ in natural_french("de le - de".split(), lambda w: True)] == ["Du", "-", "de"]  # hypothesis found
    known = {"peut-être", "Colombie-Britannique", "part-time"}.__contains__
    groups = natural_french("peut - être que la Colombie - Britannique - et le Québec".split(), known)
    assert [w for w, _ in groups] == ["Peut-être", "que", "la", "Colombie-Britannique", "-", "et", "le", "Québec"]
    assert groups[0][1] == (0, 1, 2) and groups[3][1] == (5, 6, 7)
    assert [w for w, _ in natural_english("a part - time job - done".split(), known)] == \
        ["A", "part-time", "job", "-", "done"]
    assert [w for w, _ in natural_french("peut - être".split())] == ["Peut", "-", "être"]  # no vocabulary: as given


def test_french_elisions_and_contractions_are_restored():
    def natural(text):
        return " ".join(w for w, _ in natural_french(text.split()))
    assert natural("je en ai assez de voir") == "J' en ai assez de voir"
    assert natural("ils parlent à le égard de les produits") == "Ils parlent à l' égard des produits"
    assert natural("le droit de le fournisseur , monsieur le Orateur .") == \
        "Le droit du fournisseur , monsieur l' Orateur ."
    assert natural("ce est le homme que il a vu à les nouvelles , si il le veut") == \
        "C' est l' homme qu' il a vu aux nouvelles , s' il le veut"
    assert natural("le haut de la hausse") == "Le haut de la hausse"
    assert natural_french("de le droit".split())[0] == ("Du", (0, 1))
    assert natural_french([]) == []


def test_natural_form_is_refused_for_other_languages():
    import pytest
    from rnnsearch.analysis.gold_text import natural_forms
    from rnnsearch.errors import UsageError
    from rnnsearch.data.tokenize import TextCodec
    from rnnsearch.data.vocab import SPECIALS, Vocab
    codec = lambda lang, words: TextCodec(lang, "space", Vocab(SPECIALS + words))  # noqa: E731
    english, french = natural_forms(codec("en", ["part-time"]), codec("fr", ["peut-être"]))
    assert [w for w, _ in english("part - time".split())] == ["Part-time"]
    assert [w for w, _ in french("peut - être".split())] == ["Peut-être"]
    assert [w for w, _ in french("part - time".split())] == ["Part", "-", "time"]  # not in the French vocabulary
    with pytest.raises(UsageError, match="this model translates de -> en"):
        natural_forms(codec("de", []), codec("en", []))


def test_english_first_word_and_i_are_capitalised():
    assert [w for w, _ in natural_english("i think i am".split())] == ["I", "think", "I", "am"]
    assert [w for w, _ in natural_english("order , please .".split())] == ["Order", ",", "please", "."]


def test_a_unit_standing_for_two_target_words_counts_for_both_and_rows_stay_distributions():
    attention = np.array([[0.7, 0.2, 0.1],   # target unit 0 stands for target words 0 and 1 ("du")
                          [0.1, 0.1, 0.8]])  # target unit 1: word 2
    # source unit 1 stands for source words 1 and 2: its weight is shared equally
    soft = merge(attention, [(0,), (1, 2), (3,)], [(0, 1), (2,)], 4, 3)
    np.testing.assert_allclose(soft[0], [0.7, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(soft[1], soft[0])
    np.testing.assert_allclose(soft[2], [0.1, 0.05, 0.05, 0.8])
    np.testing.assert_allclose(soft.sum(1), 1.0)
