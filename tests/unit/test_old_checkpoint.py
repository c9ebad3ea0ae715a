"""A checkpoint written by an earlier rnnsearch (tests/fixtures/checkpoint_2026_11_22, see its
README) loads, translates exactly as it did when it was written, and resumes training."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rnnsearch import Translator, checkpoint
from rnnsearch.config import from_dict
from rnnsearch.decoding.settings import SearchSettings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_2026_11_22"


def test_old_checkpoint_translates_as_it_did():
    expected = json.loads((FIXTURE / "expected.json").read_text())
    translator = Translator.from_checkpoint(FIXTURE / "last.pt")
    results = translator.translate(expected["sources"], SearchSettings(beam=3, n_best=2))
    for got, want in zip(results, expected["beam3_nbest2"], strict=True):
        assert got.text == want["text"]
        assert [h.text for h in got.nbest] == [text for text, _ in want["nbest"]]
        assert [h.score for h in got.nbest] == pytest.approx([score for _, score in want["nbest"]], abs=1e-5)
        np.testing.assert_allclose(got.attention, np.array(want["attention"]), atol=1e-5)
    assert [r.text for r in translator.translate(expected["sources"], SearchSettings(beam=1))] == expected["greedy"]


@pytest.mark.slow  # resumes the training loop
def test_old_checkpoint_resumes(tmp_path, monkeypatch):
    from rnnsearch.data.synthetic import generate
    from rnnsearch.training.trainer import Trainer
    monkeypatch.chdir(tmp_path)  # its config names data/fixture, relative
    generate(Path("data/fixture"), n_train=3000, seed=5)
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(FIXTURE / "last.pt", run / "last.pt")
    raw = checkpoint.load(run / "last.pt")["config"]
    raw["train"].update(max_steps=320, valid_every=10)
    result = Trainer(from_dict(raw), run, resume=True, log=lambda *_: None).run()
    assert result["step"] == 320 and result["reason"] == "reached train.max_steps=320"
    assert checkpoint.load(run / "last.pt")["train_state"]["step"] == 320
