"""Slots in place (text/segments.py, text/slots.py): each slot of a segment stands for what the source
wrote at its place, a name is one slot however many words it has, and a name the model knows written
where the source had a slot is taken as the model's copy of that slot."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from rnnsearch import Source, Translator
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import Vocab
from rnnsearch.decoding.placement import punctuation
from rnnsearch.decoding.source import Translation
from rnnsearch.text import items, slots
from rnnsearch.text.segments import segments_of, sentence_units
from rnnsearch.text.settings import TextSettings

_TINY = {}


def _tiny(run):
    if run not in _TINY:
        _TINY[run] = Translator.from_checkpoint(str(run / "best.pt"))
    return _TINY[run]


@pytest.fixture(scope="module")
def tiny(tiny_run):
    return _tiny(tiny_run)


ITEMS = ["info@health-region.ca", "Raghunathan", "https://x.example.org/a", "(613) 555-0142", "€25,000", "Okonkwo"]


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(ITEMS), min_size=2, max_size=6), st.sampled_from([None, 6]))
def test_each_slot_holds_what_the_source_wrote_there(tiny_run, chosen, max_units):
    text = "The dog sees " + " and the cat sees ".join(chosen) + "."
    segs = segments_of(_tiny(tiny_run), Source(text), 0, TextSettings(max_units=max_units))
    found = []
    for seg in segs:
        ks = [slots.slot_index(u) for u in seg.units if slots.slot_index(u) is not None]
        assert ks == list(range(len(seg.items)))  # numbered in order of appearance, from 0 in each segment
        found += [seg.items[k][0] for k in ks]
    assert found == chosen


def test_a_name_of_several_words_is_one_slot(tiny):
    text = "the dog sees Vandermeer Raghunathan"
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert found == [("Vandermeer Raghunathan", "Vandermeer Raghunathan")] and slots.slot_index(units[-1]) == 0


def test_an_emoji_outside_the_vocabulary_is_a_slot(tiny):
    text = "the dog \U0001F600 sees a cat"
    units, found = sentence_units(tiny, text, 0, len(text), [], True)
    assert found == [("\U0001F600", "\U0001F600")] and units[2] == slots.marker(0)


def test_a_decimal_number_the_vocabulary_holds_is_still_an_item():
    [item] = items.find("Growth was 0.3 percent.", "en", "fr", known=lambda word: True)
    assert item.text == "0.3" and item.rendering == "0,3"
    assert items.find("It was 15 percent.", "en", "fr", known=lambda word: True) == []


def test_a_known_name_written_for_a_slot_is_the_slots_copy():
    """The model wrote "M. Warren Allmand" where the source had slot 0 ("Solberg"): both names aligned to
    it, neither in the source, neither a word in lower case: they are its copy, written once."""
    src = ["met", slots.marker(0), "today", "</s>"]
    tokens = ["M.", "Warren", "Allmand", "a", "rencontré", "aujourd'hui"]
    rows = np.zeros((7, 4))
    rows[[0, 1, 2], 1], rows[[3, 4], 0], rows[5, 2], rows[6, 3] = 1, 1, 1, 1  # (T + 1, S + 1)
    codec = TextCodec("fr", "moses", Vocab.build([["M.", "Warren", "Allmand", "a", "rencontré", "aujourd'hui",
                                                   "m."]], 20, 1))
    t = Translation("x", tokens, src, -1.0, None)
    done, put_back = slots.restore(t, [("Solberg", "Solberg")], rows, codec, punctuation)
    assert done.tokens == ["M.", "Solberg", "a", "rencontré", "aujourd'hui"] and put_back == []
    assert done.alignment.shape == (len(done.tokens) + 1, 4)


def test_a_rare_name_the_vocabulary_holds_is_carried_beside_another_name():
    """``Jean-François Bélanger`` came out ``M. Michel Bélanger``: the model held Jean-François only among its
    rarer units and wrote a first name it knew better; beside another name, such a name is carried."""
    from rnnsearch.text.segments import _rare_in_full_names
    assert _rare_in_full_names(["known", "rare name", "known name", "known"]) == ["known", "name", "known name", "known"]
    assert _rare_in_full_names(["known", "rare name", "known"]) == ["known", "known name", "known"]  # alone: the model's
    assert _rare_in_full_names(["name", "rare name"]) == ["name", "name"]


def _restored(src: list[str], tokens: list[str], reads: list[int], found: list[tuple[str, str]], replaced=()):
    """slots.restore of ``tokens`` (output unit i aligned to source unit reads[i] alone) over ``src``."""
    rows = np.zeros((len(tokens) + 1, len(src) + 1))  # (T + 1, S + 1)
    rows[np.arange(len(tokens)), reads] = 1
    rows[-1, -1] = 1
    codec = TextCodec("fr", "moses", Vocab.build([[t for t in tokens if slots.slot_index(t) is None]], 50, 1))
    return slots.restore(Translation("x", tokens, src + ["</s>"], -1.0, None, replaced=list(replaced)), found, rows,
                         codec, punctuation)


def test_a_number_written_once_too_often_for_a_numbers_slot_is_its_copy():
    """``Revenue grew by 12% to $4.5 million.`` came out ``de 12 à 4,5 12 millions``: the model wrote the
    source's 12 a second time for the slot of 4.5, and the slot was put back beside it."""
    src = ["grew", "by", "12", "%", "to", "$", slots.marker(0), "million", "."]
    tokens = ["augmenté", "de", "12", "à", "12", "millions", "de", "dollars", "."]
    done, put_back = _restored(src, tokens, [0, 1, 2, 4, 6, 7, 5, 7, 8], [("4.5", "4,5")])
    assert done.text == "augmenté de 12 à 4,5 millions de dollars."
    assert put_back == []
    twice = ["12", "and", "12", "and", slots.marker(0)]  # the source's own two 12s stay, the slot put back
    done, put_back = _restored(twice, ["12", "et", "12", "et"], [0, 1, 4, 3], [("4.5", "4,5")])
    assert done.text.split().count("12") == 2 and "4,5" in done.text and put_back == ["4.5"]


def test_a_mark_written_once_too_often_for_a_slot_is_its_copy():
    """``The report (pp. 45-67) cites`` came out ``(45-67))``: the model wrote a second ``)`` for the slot, and
    the <unk> of ``pp.`` was taken for the slot's copy."""
    src = ["report", "(", "pp.", slots.marker(0), ")", "cites"]
    tokens = ["rapport", "(", "pp.", ")", ")", "cite"]
    done, put_back = _restored(src, tokens, [0, 1, 2, 3, 4, 5], [("45-67", "45-67")], replaced=[2])
    assert done.text == "rapport (pp. 45-67) cite" and put_back == []
