"""Whatever the links and however the translation is worded (terms kept verbatim or repeated, full stops,
brackets, words glued together), ``transfer-tags`` puts every source tag into the translation once,
nested as the source nests them, never inside a word, and leaves the translation's text as given."""
from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rnnsearch.analysis.transfer_tags import transfer_tags
from rnnsearch.decoding.markup import parse
from rnnsearch.decoding.translator import Translator
from conftest import TINY_RUN

WORDS = ["Log", "Filters", "the", "dog", "Essentials", "Edition", "de", "des", "journaux", ".", "(", ")", "la",
         "Suivi", "fil", "données.Les", "error.csv.", "Clear", "Test", "Data", "l'onglet", "et"]
TRANSLATOR = Translator.from_pretrained(str(TINY_RUN / "best.pt"))


@st.composite
def pair(draw):
    src = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
    tgt = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=14))
    cuts = sorted(draw(st.lists(st.integers(0, len(src)), min_size=2, max_size=6, unique=True)))
    cuts = cuts[: len(cuts) // 2 * 2]
    words = list(src)
    for n, (a, b) in enumerate(zip(cuts[::2], cuts[1::2])):  # elements side by side
        tag = ("b", "i", "ph")[n % 3]
        words[a] = f"<{tag}>" + words[a]
        words[b - 1] = words[b - 1] + f"</{tag}>"
    if cuts and draw(st.booleans()):  # and one inside the first, around its first word
        words[cuts[0]] = words[cuts[0]].replace("<b>", "<b><x>", 1)
        first = src[cuts[0]]
        words[cuts[0]] = words[cuts[0]].replace(first, first + "</x>", 1) if cuts[1] - cuts[0] > 1 else words[cuts[0]]
        words[cuts[0]] = words[cuts[0]] if "</x>" in words[cuts[0]] else words[cuts[0]].replace("<x>", "")
    source = " ".join(words)
    links = draw(st.sets(st.tuples(st.integers(0, len(src) - 1), st.integers(0, len(tgt) - 1)), min_size=1))
    return source, " ".join(tgt), links


def tags(text: str) -> list[str]:
    return sorted(re.findall(r"</?[a-z]+>", text))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pair())
def test_every_tag_once_nested_and_the_text_as_given(case):
    source, translation, links = case
    (done,) = transfer_tags(TRANSLATOR, [source], [translation], links=[links], links_over="words")
    assert done.error is None, (source, done.error)
    plain, _ = parse(done.text)  # well-formed: nested as the source nests
    assert plain == translation
    assert tags(done.text) == tags(source)
    for m in re.finditer(r"</?[a-z]+>", done.text):  # never inside a word: no letter on both sides
        before = re.sub(r"(</?[a-z]+>)+$", "", done.text[:m.start()])
        after = re.sub(r"^(</?[a-z]+>)+", "", done.text[m.end():])
        assert not (before[-1:].isalpha() and after[:1].isalpha()), done.text
