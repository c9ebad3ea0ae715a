"""Scoring given translations (rnnsearch score, Translator.score): the score of a search's output
is the score the search reported; a pair's score does not depend on its batch; a blank target
scores p(</s> | source); bad requests are refused with clear errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DEVICE, small_model
from rnnsearch.cli import main
from rnnsearch.data.batching import source_batch
from rnnsearch.data.vocab import BOS, EOS
from rnnsearch.decoding.scoring import score_ids
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.decoding.settings import SearchSettings

pairs = st.lists(st.tuples(st.lists(st.integers(4, 22), min_size=0, max_size=9),
                           st.lists(st.integers(1, 22), min_size=0, max_size=9)), min_size=1, max_size=6)


@settings(max_examples=15, deadline=None)
@given(batch=pairs, seed=st.integers(0, 1000), arch=st.sampled_from(["rnnsearch", "rnnencdec"]))
def test_a_pairs_score_does_not_depend_on_its_batch(batch, seed, arch):
    model = small_model(arch, seed=seed).eval()
    src, tgt = [s for s, _ in batch], [t for _, t in batch]
    together = score_ids(model, src, tgt, torch.get_default_device(), batch_size=len(batch), details=True)
    alone = [score_ids(model, [s], [t], torch.get_default_device(), details=True)[0] for s, t in batch]
    for a, b, s, t in zip(together, alone, src, tgt):
        assert math.isclose(a.logprob, b.logprob, rel_tol=1e-5, abs_tol=1e-5)
        assert a.units == len(t) + 1 and a.unknown == t.count(1) and a.logprob <= 0.0
        # the details: one term per unit, </s> last, adding up to the score; alpha_ij over the
        # source and its </s>, a distribution per step, whatever else shares the batch
        assert len(a.unit_logprobs) == a.units and all(x <= 0.0 for x in a.unit_logprobs)
        assert math.isclose(sum(a.unit_logprobs), a.logprob, rel_tol=1e-5, abs_tol=1e-4)
        assert a.unit_logprobs == pytest.approx(b.unit_logprobs, abs=1e-5)
        if arch == "rnnencdec":
            assert a.attention is None and b.attention is None
        else:
            assert a.attention.shape == (a.units, len(s) + 1)
            assert np.allclose(a.attention.sum(1), 1.0, atol=1e-5)
            assert np.allclose(a.attention, b.attention, atol=1e-5)


def test_a_blank_target_scores_the_end_of_sentence(tiny_run):
    translator = Translator.from_checkpoint(tiny_run / "best.pt", device=DEVICE)
    model = translator.model.eval()
    [got] = translator.score(["The big dog sees a small cat ."], [""])
    src, mask = source_batch([translator.src_codec.vocab.encode(translator.source_units("The big dog sees a small cat ."))])
    with torch.no_grad():
        enc = model.encode(src, mask)
        logp, _, _ = model.step(torch.tensor([BOS]), model.init_state(enc), enc)
    assert got.units == 1 and math.isclose(got.logprob, float(logp[0, EOS]), rel_tol=1e-4, abs_tol=1e-4)


def test_the_score_of_a_search_output_is_the_score_the_search_reported(tiny_run, synth_dir):
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    sources = (synth_dir / "test.en").read_text().splitlines()[:30]
    results = translator.translate(sources, SearchSettings(beam=4, n_best=3))
    every = [(s, h) for s, r in zip(sources, results) for h in r.nbest]
    # the outputs whose detokenised text Moses reads back as the same units (not, e.g., a
    # "professeur. un" inside a degenerate hypothesis, which it reads as "professeur." "un")
    hyps = [(s, h) for s, h in every if translator.tgt_codec.units(h.text) == h.tokens]
    assert len(hyps) >= 0.8 * len(every)
    scores = translator.score([s for s, _ in hyps], [h.text for _, h in hyps], batch_size=7, details=True)
    for (_, h), s in zip(hyps, scores, strict=True):
        assert math.isclose(s.logprob, h.score, rel_tol=1e-4, abs_tol=1e-4), (h.text, s.logprob, h.score)
        # teacher forcing the search's output reads the attention the search reported for it
        assert list(s.tokens) == h.tokens and list(s.source_tokens) == h.source_tokens
        assert np.allclose(s.attention, h.attention, atol=1e-4), h.text


def test_bad_requests_are_refused(tiny_run, tmp_path, capsys):
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    with pytest.raises(UsageError, match="2 source sentences for 1 target"):
        translator.score(["a", "b"], ["c"])
    with pytest.raises(UsageError, match="PyTorch model"):
        Translator.from_checkpoint(tiny_run / "best.pt", backend="onnx").score(["a"], ["b"])
    src, tgt = tmp_path / "s", tmp_path / "t"
    src.write_text("The dog .\nA cat sleeps .\n")
    tgt.write_text("Le chien .\n")
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(tgt)]) == 2
    assert f"{src} has 2 lines but {tgt} has 1" in capsys.readouterr().err


def test_cli_writes_one_score_per_pair(tiny_run, synth_dir, tmp_path, capsys):
    src, ref = synth_dir / "test.en", synth_dir / "test.fr"
    n = len(src.read_text().splitlines())
    out = tmp_path / "scores"
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(ref), "--output", str(out)]) == 0
    values = [float(v) for v in out.read_text().splitlines()]
    assert len(values) == n and all(v <= 0.0 for v in values)
    summary = capsys.readouterr().err
    assert f"{n} pairs" in summary and "perplexity" in summary
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(ref), "--normalize"]) == 0
    per_unit = [float(v) for v in capsys.readouterr().out.splitlines()]
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(ref), "--json"]) == 0
    rows = [__import__("json").loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["logprob"] for r in rows] == pytest.approx(values, abs=1e-5)
    assert per_unit == pytest.approx([r["logprob"] / r["units"] for r in rows], abs=1e-5)
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(ref), "--json", "--units"]) == 0
    detailed = [__import__("json").loads(line) for line in capsys.readouterr().out.splitlines()]
    codec = Translator.from_checkpoint(tiny_run / "best.pt").tgt_codec
    for r, d, text in zip(rows, detailed, ref.read_text().splitlines(), strict=True):
        assert d["logprob"] == r["logprob"] and d["tokens"] == codec.units(text)
        assert len(d["unit_logprobs"]) == d["units"] == len(d["tokens"]) + 1
        assert sum(d["unit_logprobs"]) == pytest.approx(d["logprob"], abs=1e-4)
    assert main(["score", str(tiny_run / "best.pt"), "--src", str(src), "--tgt", str(ref), "--units"]) == 2
    assert "--units adds fields to the JSON lines: give --json too" in capsys.readouterr().err
