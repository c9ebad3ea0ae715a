"""What the text stage carries as a name and how a sentence's first word is cased (text/segments.py,
text/pipeline.py), on vocabularies built here: a title before a name, a number beside a rare unit and a
label's digits are the model's to translate; a source that begins in small letters is not given a
capital (cases from the Hansards test, Fr->En, where the text stage had changed plain sentences); a
currency sign the model writes joins the number in a slot."""
from __future__ import annotations

from collections import Counter

from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import Vocab
from rnnsearch.decoding.source import Translation
from rnnsearch.text import items, slots
from rnnsearch.text.pipeline import _small
from rnnsearch.text.segments import FREQUENT, Segment, _names_as_slots


def vocab_of(common: list[str], rare: list[str] = ()) -> Vocab:
    """``common`` among the most frequent units, ``rare`` past FREQUENT (fillers between them)."""
    counts = Counter({w: 1000 for w in common})
    counts.update({f"filler{n:05d}": 10 for n in range(FREQUENT)})
    counts.update({w: 1 for w in rare})
    return Vocab.from_counts(counts, FREQUENT + len(common) + len(rare) + 10)


def carried(units: list[str], vocab: Vocab) -> tuple[list[str], list]:
    found: list = []
    out = _names_as_slots(units, found, vocab, " ".join(units))
    return [("slot" if slots.slot_index(u) is not None else u) for u in out], found


def test_a_title_before_an_unknown_name_is_the_models_to_translate():
    vocab = vocab_of(["de", "et", "Mme", "Jean", "des", "gens"])
    assert carried(["de", "Mme", "Rowe", "et", "des", "gens"], vocab) == (
        ["de", "Mme", "slot", "et", "des", "gens"], [("Rowe", "Rowe")])  # "Mme Rowe" came out "Mme Rowe"
    assert carried(["de", "Jean", "Rowe", "et"], vocab) == (["de", "slot", "et"], [("Jean Rowe", "Jean Rowe")])


def test_a_number_beside_a_rare_unit_makes_no_name_of_it():
    vocab = vocab_of(["du", "10", "?", "Brun"], rare=["p.100", "Ethelbert"])
    assert carried(["du", "10", "p.100", "?"], vocab) == (["du", "10", "p.100", "?"], [])  # "10 year rule p.100"
    assert carried(["du", "Brun", "Ethelbert", "?"], vocab)[1] == [("Brun Ethelbert", "Brun Ethelbert")]


def test_a_labels_digits_stay_with_its_letters():
    rare = lambda word: False  # noqa: E731 (no integer is among the vocabulary's frequent units)
    assert items.find("le projet de loi C-223, la Loi", "fr", "en", frequent=rare) == []  # came out "C- 223"
    assert [i.text for i in items.find("pages 223 and -223", "en", "fr", frequent=rare)] == ["223", "-223"]


def small_of(text: str, vocab: Vocab, carried_items=()) -> str:
    codec = TextCodec("en", "moses", vocab)
    t = Translation(text, text.split(), ["x", "</s>"], -1.0, None)
    return _small(t, Segment(0, ["x"], list(carried_items), first="l"), codec).text


def test_a_source_in_small_letters_gives_its_output_small_letters_where_the_vocabulary_writes_them_so():
    vocab = Vocab.from_counts(Counter({"the": 50, "The": 20, "I": 40, "i": 5, "Canada": 30, "freedom": 10}), 20)
    assert small_of("The freedom of assembly;", vocab) == "the freedom of assembly;"  # "c) la liberté"
    assert small_of("I think so", vocab) == "I think so"  # "I" is written so more often than "i"
    assert small_of("Canada is great", vocab) == "Canada is great"  # no "canada"
    assert small_of("The Hague", vocab, [("The Hague", "The Hague")]) == "The Hague"  # a slot's, verbatim


def test_a_currency_sign_the_model_wrote_joins_the_number_in_its_slot():
    import numpy as np
    from rnnsearch.decoding.placement import punctuation
    src = ["une", "subvention", "de", slots.marker(0), "millions", "</s>"]
    tokens = ["a", "$", slots.marker(0), "million", "grant"]  # "a $ 4.2 million grant"
    rows = np.eye(6)[[0, 2, 3, 4, 1, 5]]  # (T + 1, S + 1)
    t = Translation("x", tokens, src, -1.0, None)
    codec = TextCodec("en", "moses", Vocab.build([["a", "$", "million", "grant"]], 10, 1))
    done, _ = slots.restore(t, [("4,2", "4.2")], rows, codec, punctuation)
    assert done.text == "a $4.2 million grant"
