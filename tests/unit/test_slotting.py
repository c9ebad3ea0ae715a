"""Slots in training pairs (data/slotting.py) and a subword model's slots at translation time
(text/segments.py, text/slots.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnnsearch.config import ConfigError, from_dict
from rnnsearch.data import slotting
from rnnsearch.data.slotting import chosen, marker, shared_items, slotted
from rnnsearch.text import segments, slots


def test_shared_items_are_numbers_urls_and_addresses_written_once_the_same_on_both_sides():
    src = "Bill C-45 was passed in 1992 (see www.parl.gc.ca), 12 members voted; write to a.b@parl.gc.ca."
    tgt = "Le projet de loi C-45 a été adopté en 1992 (voir www.parl.gc.ca) ; 12 députés, 12 voix ; a.b@parl.gc.ca."
    assert shared_items(src, tgt) == ["C-45", "1992", "www.parl.gc.ca", "a.b@parl.gc.ca"]  # 12: twice in French
    assert shared_items("It cost $3.5 million.", "Il a coûté 3,5 millions de dollars.") == []
    assert shared_items("In 2012 we met.", "Nous sommes en 20122.") == []  # whole tokens only


def test_a_chosen_pair_gets_the_same_slot_on_both_sides_and_keeps_its_punctuation():
    line = next(n for n in range(1, 1000) if chosen(n, 0.5))
    src, tgt = slotted("Bill C-45 (1992).", "Le projet de loi C-45 (1992).", line, 0.5)
    assert src == f"Bill {marker(0)} ({marker(1)})." and tgt == f"Le projet de loi {marker(0)} ({marker(1)})."
    other = next(n for n in range(1, 1000) if not chosen(n, 0.5))
    assert slotted("Bill C-45.", "Loi C-45.", other, 0.5) == ("Bill C-45.", "Loi C-45.")
    assert slotted("Bill C-45.", "Loi C-45.", line, 0.0) == ("Bill C-45.", "Loi C-45.")


def test_the_share_of_pairs_chosen_is_the_rate_and_fixed_by_the_line():
    for rate in (0.1, 0.5, 0.9):
        share = np.mean([chosen(n, rate) for n in range(1, 20_001)])
        assert abs(share - rate) < 0.02, (rate, share)
    assert [chosen(n, 0.3) for n in range(1, 200)] == [chosen(n, 0.3) for n in range(1, 200)]
    assert all(chosen(n, 1.0) for n in range(1, 500)) and not any(chosen(n, 0.0) for n in range(1, 500))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["le", "1992", "(C-45)", "x@y.ca", "www.a.org,", "«", "12", "12.", "  ", "\t"]),
                max_size=12), st.integers(1, 10_000))
def test_slotting_changes_only_the_shared_items(words, line):
    """Whatever the pair, only the shared items change: put back, each side is what it was."""
    src = " ".join(words)
    tgt = " ".join(reversed(words))
    a, b = slotted(src, tgt, line, 1.0)
    items = shared_items(src, tgt)
    for text, out in ((src, a), (tgt, b)):
        back = out
        for k, item in enumerate(items):
            assert out.count(marker(k)) == 1
            back = back.replace(marker(k), item)
        assert back == text


def test_slot_rate_is_for_a_subword_vocabulary():
    with pytest.raises(ConfigError, match=r"data.slot_rate: only meaningful with vocab.mode: sentencepiece"):
        from_dict({"data": {"slot_rate": 0.5}})
    assert from_dict({"data": {"slot_rate": 0.5}, "vocab": {"mode": "sentencepiece"}}).data.slot_rate == 0.5
    with pytest.raises(ConfigError, match=r"data.slot_rate: must be <= 1"):
        from_dict({"data": {"slot_rate": 2}, "vocab": {"mode": "sentencepiece"}})


def test_a_subword_unit_of_several_slots_is_split_into_one_unit_each():
    units = ["▁voir", "▁", marker(0) + marker(1), "x" + marker(2), "▁ici"]
    assert segments._one_slot_a_unit(units) == ["▁voir", "▁", marker(0), marker(1), "x", marker(2), "▁ici"]
    assert slotting.BASE == slots.BASE and slots.slot_index(marker(3)) == 3


@pytest.fixture(scope="module")
def sp_codec():
    from rnnsearch.data.tokenize import sentencepiece_codec, train_sentencepiece
    lines = [f"le chat {w} la maison du projet de loi numéro {n}" for n, w in enumerate(["voit", "est", "a"] * 40)]
    return sentencepiece_codec("fr", "moses", train_sentencepiece(lines, 80, "bpe"))


def test_a_subword_slot_comes_back_with_its_space_and_a_stray_unk_is_dropped(sp_codec):
    """A subword output: the slot the model copied is its item; one it did not copy is put back after a
    space piece of its own; an <unk> that matches no slot is dropped, never written as SentencePiece's ⁇."""
    from rnnsearch.decoding.placement import punctuation
    from rnnsearch.decoding.source import Translation
    src = ["▁le", "▁chat", "▁", marker(0), "▁la", "▁maison", "▁", marker(1), "</s>"]
    tokens = ["▁le", "▁chat", "▁", "<unk>", "▁la", "▁maison"]
    rows = np.zeros((7, 9))
    for i, j in enumerate([0, 1, 2, 3, 4, 5, 8]):
        rows[i, j] = 1.0  # (T + 1, S + 1): each output unit read its own source unit
    t = Translation("x", tokens, src, -1.0, None)
    done, put_back = slots.restore(t, [("C-45", "C-45"), ("https://a.org/b", "https://a.org/b")], rows, sp_codec,
                                   punctuation)
    assert done.text == "le chat C-45 la maison https://a.org/b" and put_back == ["https://a.org/b"]
    assert done.alignment.shape == (len(done.tokens) + 1, 9)
    stray = Translation("x", ["▁le", "▁chat", "<unk>", "▁voit"], ["▁le", "▁chat", "▁voit", "</s>"], -1.0, None)
    rows = np.eye(5, 4)
    done, put_back = slots.restore(stray, [], rows, sp_codec, punctuation)
    assert done.text == "le chat voit" and "⁇" not in done.text and put_back == []


def test_a_model_that_learned_slots_reads_plain_integers_and_labels_as_items():
    from rnnsearch.text import items
    found = items.find("Bill C-45 passed 212 to 3 in 1998.", "en", "fr", frequent=lambda w: False, labels=True)
    assert [i.text for i in found] == ["C-45", "212", "3", "1998"] and all(i.rendering == i.text for i in found)
    assert [i.text for i in items.find("Bill C-45 passed 212 to 3 in 1998.", "en", "fr")] == []  # a word model's
    found = items.find("Report B52 and F79 at www.canada.ca/bills/C-12, at 6:05 p.m.", "en", "fr",
                       frequent=lambda w: False, labels=True)
    assert [(i.text, i.kind) for i in found] == [("B52", "label"), ("F79", "label"), ("www.canada.ca/bills/C-12", "url"),
                                                 ("6:05 p.m", "time")]  # the time in French's convention: 18 h 05
    assert shared_items("Report B52 at 6:05.", "Rapport B52 à 6:05.") == ["B52"]  # a time is the model's both ways


def test_a_character_the_subword_vocabulary_lacks_is_a_slot_of_its_own(sp_codec):
    slot_items = []
    units = segments._unknown_as_slots(["▁le", "▁", "🙂", "▁chat", "Ω"], slot_items, sp_codec.vocab)
    assert units == ["▁le", "▁", marker(0), "▁chat", marker(1)] and slot_items == [("🙂", "🙂"), ("Ω", "Ω")]


def test_a_start_tag_goes_after_a_subword_space_piece():
    """`in <i>2019</i>`, not `in<i> 2019</i>`: a start tag the alignment put before SentencePiece's lone "▁"
    (before a slot's item) is written after it."""
    from rnnsearch.decoding.markup import Element, render
    tokens = ["▁en", "▁", "2019", "."]
    element = Element("<i>", "i", 0, 4, "</i>", target=(1, 3))
    assert render([element], tokens, "en 2019.") == "en <i>2019</i>."


def test_an_element_ending_on_a_subword_space_piece_takes_the_unit_after_it():
    """`<b>2019</b> :`, not `</b><b>2019 :` (end tag first): an element the alignment ended after
    SentencePiece's lone "▁" (before a slot's item) ends after the unit the space belongs to, as its start
    tag goes after the piece; nested elements alike."""
    from rnnsearch.decoding.markup import Element, render
    tokens = ["▁en", "▁", "2019", "▁:"]
    element = Element("<b>", "b", 0, 4, "</b>", target=(1, 2))
    assert render([element], tokens, "en 2019 :") == "en <b>2019</b> :"
    inner = Element("<i>", "i", 0, 4, "</i>", target=(1, 2))
    outer = Element("<b>", "b", 0, 4, "</b>", target=(0, 2), children=[inner])
    assert render([outer], tokens, "en 2019 :") == "<b>en <i>2019</i></b> :"


def test_a_put_back_slot_does_not_split_a_space_piece_from_its_unit(sp_codec):
    from rnnsearch.decoding.placement import punctuation
    from rnnsearch.decoding.source import Translation
    src = ["▁le", "▁", marker(0), "▁", marker(1), "</s>"]
    tokens = ["▁le", "▁", "<unk>"]  # the model copied slot 1 only
    rows = np.zeros((4, 6))
    rows[0, 0], rows[1, 1], rows[2, 4], rows[3, 5] = 1, 1, 1, 1  # the best gap for slot 0: after the "▁"
    done, put_back = slots.restore(Translation("x", tokens, src, -1.0, None), [("C-45", "C-45"), ("2019", "2019")],
                                   rows, sp_codec, punctuation)
    assert put_back == ["C-45"] and done.text == "le C-45 2019", done.text  # not "le  C-452019"
