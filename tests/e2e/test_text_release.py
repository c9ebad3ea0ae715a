"""The released RNNsearch-50 on running text of our own writing (experiments/data/paragraphs_en.jsonl,
phones_times_en.jsonl, formulas_money_en.jsonl and units_emoji_en.jsonl, their held-out halves: not looked at
while the text stage was built): no sentence dropped, and every URL, e-mail address, phone number, amount (in French
convention, its currency sign unchanged), formula, unit, emoji and name outside the vocabulary comes through."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rnnsearch import SearchSettings, Translator
from rnnsearch.text import sentences
from rnnsearch.text.items import find
from rnnsearch.text.pipeline import translate_lines

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SPACE = re.compile(r"[\s\u00a0\u202f]+")


def holds(output: str, item) -> bool:
    return any(SPACE.sub(" ", i) in SPACE.sub(" ", output) for i in ([item] if isinstance(item, str) else item))


def count(text: str, lang: str) -> int:
    """Sentences of a text, as the splitter reads them with its items kept whole."""
    keep = [(i.start, i.end) for i in find(text, lang, "en" if lang == "fr" else "fr")]
    return sum(1 for a, b in sentences.split(text, lang, keep) if text[a:b].strip())


@pytest.mark.parametrize("data", ["paragraphs_en", "phones_times_en", "formulas_money_en", "units_emoji_en"])
def test_held_out_paragraphs_keep_every_sentence_and_item(data):
    rows = [json.loads(line) for line in (REPO / f"experiments/data/{data}.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["split"] == "held-out"]
    translator = Translator.from_pretrained("hansards_enfr_rnnsearch50")
    out = [t for part in translate_lines(translator, [r["text"] for r in rows], SearchSettings(beam=5)) for t in part]
    assert len(out) == len(rows)
    for r, t in zip(rows, out):
        assert len(t.segments) == count(r["text"], "en") and all(s.text for s in t.segments), (r["text"], t.text)
        assert count(t.text, "fr") >= count(r["text"], "en"), (r["text"], t.text)
        missing = [i for i in r["items"] if not holds(t.text, i)]
        assert not missing, (r["text"], t.text, missing)
