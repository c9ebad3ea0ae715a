"""A subword model trained with slots (data.slot_rate, data/slotting.py) carries the text stage's items:
URLs, numbers and amounts come through as the source writes them (or in the target's convention),
copied where the model writes <unk> or put back by the alignment; one trained without slots is left
to spell them itself."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import demo_config
from rnnsearch.config import from_dict
from rnnsearch.decoding.translator import Translator
from rnnsearch.text.pipeline import LineStats, TextSettings, translate_lines
from rnnsearch.text.segments import can_carry
from rnnsearch.training.trainer import train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    rng = np.random.default_rng(11)
    en = "the a cat dog sees big small house red runs".split()
    fr = "le la chat chien voit grand petit maison rouge court".split()
    src, tgt = [], []
    for i in range(1500):
        k = rng.integers(0, len(en), 4)
        src.append(" ".join(en[j] for j in k) + f" in {1000 + i % 900} .")
        tgt.append(" ".join(fr[j] for j in k) + f" en {1000 + i % 900} .")
    for split, n in (("train", 1400), ("dev", 50), ("test", 50)):
        rows = range(n) if split == "train" else range(1400, 1400 + n)
        (folder / f"{split}.en").write_text("".join(src[i] + "\n" for i in rows))
        (folder / f"{split}.fr").write_text("".join(tgt[i] + "\n" for i in rows))
    return folder


def _model(corpus, out, rate: float) -> Translator:
    raw = demo_config(corpus, max_steps=120, valid_every=120, valid_max_sentences=20, threads=1)
    raw["vocab"] = {"mode": "sentencepiece", "size": 120, "joint": True}
    raw["data"]["slot_rate"] = rate
    train(from_dict(raw), out, log=lambda *_: None)
    return Translator.from_checkpoint(out / "best.pt")


def test_a_subword_model_trained_with_slots_carries_the_items(corpus, tmp_path):
    translator = _model(corpus, tmp_path / "slots", 0.5)
    assert can_carry(translator)
    lines = ["the cat sees the dog in 2031 . the big house runs at https://example.org/a_b?c=1 .",
             "a red dog sees 12,400 cats and info@example.org .", "the small cat runs in 1212 with C-45 ."]
    stats = LineStats()
    out = [t.text for part in translate_lines(translator, lines, translator.search_settings(beam=3), TextSettings(),
                                              stats=stats) for t in part]
    assert "2031" in out[0] and "https://example.org/a_b?c=1" in out[0], out
    assert "12 400" in out[1].replace("\u202f", " ").replace("\u00a0", " ") and "info@example.org" in out[1], out
    assert "1212" in out[2] and "C-45" in out[2], out  # a plain integer and a label: items of a model with slots
    assert not any("⁇" in o or "<unk>" in o for o in out), out
    assert stats.slots >= 6
    plain = _model(corpus, tmp_path / "plain", 0.0)
    assert not can_carry(plain)  # never shown a slot: it would not copy one
