"""The WPT gold set's words in natural form: every gold word is covered once, in order, and
the natural words are what Hansards writes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.analysis.force_align import merge
from rnnsearch.analysis.gold_text import as_written, natural_english, natural_french

WORDS = ["de", "le", "la", "les", "à", "je", "que", "si", "il", "ils", "en", "égard", "homme", "haut",
         "ordre", "produits", "droit", ",", ".", "i", "am", "Orateur", "ce", "est"]


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), max_size=12))
def test_every_gold_word_is_covered_once_in_order(words):
    for groups in (natural_french(words), natural_english(words), as_written(words)):
        covered = [k for _, owners in groups for k in owners]
        assert covered == list(range(len(words)))
        assert all(word for word, _ in groups)
        assert all(len(owners) == 1 or word in ("du", "des", "au", "aux", "Du", "Des", "Au", "Aux")
                   for word, owners in groups)


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
    assert natural_forms("en", "fr") == (natural_english, natural_french)
    with pytest.raises(UsageError, match="this model translates de -> en"):
        natural_forms("de", "en")


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
