"""The campaign's pieces: the loss scale, the core-hour clock, the token cache, the fused loss on a
large vocabulary, denormals, and ``rnnsearch status``."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from conftest import demo_config
from rnnsearch.data import tokenize
from rnnsearch.errors import UsageError
from rnnsearch.config import from_dict
from rnnsearch.model.output import CHUNK_ELEMENTS, chunk_rows, linear_cross_entropy
from rnnsearch.analysis.status import fit_log_curve, format_status, project, run_status
from rnnsearch.training.trainer import Trainer


def _grads_after_one_update(synth_dir, tmp_path, scale: str, idx) -> tuple[dict, int]:
    cfg = demo_config(synth_dir, clip=0.0, loss_scale=scale, max_steps=1)
    cfg["model"].update(dropout=0.0)
    trainer = Trainer(from_dict(cfg), tmp_path / scale, log=lambda *_: None)
    _, n_tokens, ok, *_ = trainer.train_step(idx)
    assert ok
    return {k: p.grad.clone() for k, p in trainer.model.named_parameters() if p.grad is not None}, n_tokens


def test_sentence_loss_scale_is_the_token_mean_times_tokens_per_sentence(synth_dir, tmp_path):
    idx = np.arange(7)
    token, n_tokens = _grads_after_one_update(synth_dir, tmp_path, "token", idx)
    sentence, _ = _grads_after_one_update(synth_dir, tmp_path, "sentence", idx)
    assert token.keys() == sentence.keys() and len(token) > 10
    factor = n_tokens / len(idx)  # GroundHog: summed over time, averaged over the batch's sentences
    assert factor > 3
    for name in token:
        torch.testing.assert_close(sentence[name], token[name] * factor, rtol=1e-4, atol=1e-7, msg=name)


@pytest.mark.slow  # runs the training loop
def test_core_hours_are_cpu_time_and_stop_the_run(synth_dir, tmp_path):
    cfg = demo_config(synth_dir, max_steps=0, max_core_hours=1.5 / 3600, valid_every=10_000, log_every=1)
    result = Trainer(from_dict(cfg), tmp_path / "run", log=lambda *_: None).run()
    assert result["reason"].startswith("reached train.max_core_hours")
    assert 1.5 <= result["cpu_s"] < 1.5 + 6.0  # one update and the final validation past the budget
    logged = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    cpu = [e["cpu_s"] for e in logged]
    assert cpu == sorted(cpu) and cpu[-1] <= round(result["cpu_s"], 2)  # logged to 2 decimals


def test_token_cache_gives_the_same_tokens_and_is_read_back(tmp_path, monkeypatch):
    lines = ["Hello, world!", "", "It's a test: 3.5 km.", "Mr. Smith's \"quote\"  here"]
    plain = [tokenize.pretokenize(t, "moses", "en") for t in lines]
    cache = tmp_path / "cache"
    assert tokenize.pretokenize_lines(lines, "moses", "en", str(cache)) == plain
    [written] = cache.iterdir()
    monkeypatch.setattr(tokenize, "pretokenize", lambda *a: pytest.fail("tokenised again despite the cache"))
    assert tokenize.pretokenize_lines(lines, "moses", "en", str(cache)) == plain
    assert tokenize.pretokenize_lines(lines, "moses", "en", str(cache)) == plain
    monkeypatch.undo()
    written.write_text("a\x1fb\n", encoding="utf-8")  # a torn or foreign file: tokenised again, rewritten
    notes = []
    assert tokenize.pretokenize_lines(lines, "moses", "en", str(cache), notes.append) == plain
    assert notes and "tokenising again" in notes[0]
    assert tokenize.pretokenize_lines(lines[:2], "moses", "en", str(cache)) == plain[:2]  # other content, other file
    assert len(list(cache.iterdir())) == 2


def test_chunks_of_a_large_vocabulary_stay_small():
    assert chunk_rows(8000) == 512 and chunk_rows(30000) == 256 and chunk_rows(10) == 512
    for vocab in (100, 5000, 30000, 80000, 500000):
        rows = chunk_rows(vocab)
        assert 32 <= rows <= 512 and (rows * vocab <= CHUNK_ELEMENTS or rows == 32)


def test_fused_loss_on_a_large_confident_vocabulary_equals_cross_entropy():
    """Logits spread over hundreds of nats (log-probabilities far below -87, where exp gives
    denormals): the loss and gradients still equal cross_entropy's."""
    g = torch.Generator().manual_seed(0)
    rows, m, vocab = 300, 6, 20000
    x = (torch.randn(rows, m, generator=g) * 4).requires_grad_()
    w = (torch.randn(vocab, m, generator=g) * 8).requires_grad_()
    b = torch.randn(vocab, generator=g).requires_grad_()
    y = torch.randint(0, vocab, (rows,), generator=g)
    logits = x @ w.T + b
    assert (logits - logits.max(1, keepdim=True).values < -200).float().mean() > 0.3
    plain = torch.nn.functional.cross_entropy(logits.double(), y, reduction="sum")
    expected = torch.autograd.grad(plain, (x, w, b))
    fused = linear_cross_entropy(x, w, b, y)
    assert fused.item() == pytest.approx(plain.item(), rel=1e-5)
    for got, want in zip(torch.autograd.grad(fused, (x, w, b)), expected):
        torch.testing.assert_close(got.double(), want.double(), rtol=1e-4, atol=1e-4)


def test_flush_denormals_makes_them_zero():
    from rnnsearch.runtime import flush_denormals
    if not flush_denormals():
        pytest.skip("this CPU has no flush-to-zero mode")
    tiny = torch.tensor([1e-39, 3e-38], dtype=torch.float32)
    assert (tiny * 1.0).tolist()[0] == 0.0 and (tiny * 1.0).tolist()[1] > 0


def test_projection_follows_a_log_curve():
    curve = [(h, 5.0 + 4.0 * math.log(h)) for h in (0.5, 1, 2, 3, 4, 6, 8)]
    a, b = fit_log_curve(curve)
    assert a == pytest.approx(5.0) and b == pytest.approx(4.0)
    p = project(curve, 20.0)
    assert p["core_hours_total"] == pytest.approx(math.exp(15 / 4), rel=1e-3)
    assert p["core_hours_more"] == pytest.approx(math.exp(15 / 4) - 8, rel=1e-3)
    flat = project([(h, 7.0 - 0.01 * h) for h in (1, 2, 3, 4)], 20.0)
    assert flat["core_hours_more"] is None and flat["note"].startswith("flat")
    assert project(curve[:2], 20.0)["fit"] is None
    assert project(curve, 6.0)["note"] == "reached"
    assert p["at_budget"] is None
    assert project(curve, 20.0, budget=12.0)["at_budget"] == {"core_hours": 12.0,
                                                              "dev_bleu": pytest.approx(5 + 4 * math.log(12), abs=0.01)}
    assert project(curve[:2], 20.0, budget=12.0)["at_budget"] is None  # no fit, no reading
    assert p["note"].startswith("extrapolated to 5x the core-hours so far")  # e^3.75 = 42.5 of 8: a rough guide
    assert project(curve, 14.0)["note"] == "extrapolated"  # e^2.25 = 9.5 of 8: near


def test_status_of_a_run(tiny_run):
    s = run_status(tiny_run, target=100.0)
    assert s["step"] > 0 and s["dev"] and s["best"]["dev_bleu"] == max(d["dev_bleu"] for d in s["dev"])
    assert s["core_hours"] is not None and s["core_hours"] > 0
    text = format_status(s)
    assert f"step {s['step']:,}" in text and "dev BLEU" in text and "to dev BLEU 100" in text
    assert s["tok_per_core_s"] > 0 and "per core-second" in text
    assert s["align_cost"] is None and "alignment cost" not in text  # not a guided run
    budget = {**s, "projection": {**s["projection"], "fit": {"a": 1.0, "b": 2.0, "points": 3}, "core_hours_more": 1.0,
                                  "core_hours_total": 2.0, "at_budget": {"core_hours": 12, "dev_bleu": 5.97}}}
    assert "at the budget of 12 core-hours: dev BLEU 5.97 on the fitted curve" in format_status(budget)


def test_status_of_a_guided_run_shows_its_latest_alignment_cost(tmp_path):
    entries = [{"step": 100, "loss": 3.0, "align_cost": 2.5, "tgt_tokens": 10, "cpu_s": 1.0},
               {"step": 200, "loss": 2.8, "align_cost": 1.25, "tgt_tokens": 20, "cpu_s": 2.0}]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    s = run_status(tmp_path)
    assert s["align_cost"] == 1.25 and "train loss 2.800, alignment cost 1.250" in format_status(s)


def test_rate_changes_are_listed_where_they_happen():
    from rnnsearch.analysis.status import rate_changes
    valid = [{"step": 1000, "lr": 1e-3}, {"step": 2000, "lr": 1e-3}, {"step": 3000, "lr": 5e-4},
             {"step": 4000}, {"step": 5000, "lr": 5e-4}, {"step": 6000, "lr": 2.5e-4}]
    assert rate_changes(valid) == [{"step": 1000, "lr": 1e-3}, {"step": 3000, "lr": 5e-4},
                                   {"step": 6000, "lr": 2.5e-4}]
    assert rate_changes([{"step": 1, "dev_bleu": 3.0}]) == []
    s = {"run": "r", "step": 6000, "epoch": 1, "wall_hours": 1.0, "core_hours": 1.0, "budget_core_hours": None,
         "tgt_tokens": 0, "loss": None, "tok_per_s": None, "dev": [{"step": 6000, "dev_bleu": 5.0, "core_hours": 1.0}],
         "best": {"step": 6000, "dev_bleu": 5.0}, "rates": rate_changes(valid)}
    expected = ("learning rate (at the validations): 0.001 from step 1,000, 0.0005 from step 3,000, "
                "0.00025 from step 6,000")
    assert expected in format_status(s)


def test_speed_per_core_second_skips_a_resume():
    from rnnsearch.analysis.status import tokens_per_core_second
    log = [{"tgt_tokens": 1000, "cpu_s": 10.0}, {"tgt_tokens": 3000, "cpu_s": 12.0},
           {"tgt_tokens": 5000, "cpu_s": 14.0}, {"tgt_tokens": 200, "cpu_s": 14.5}]  # the last: after a resume
    assert tokens_per_core_second(log) == 1000.0
    assert tokens_per_core_second(log[:1]) is None and tokens_per_core_second([{"tgt_tokens": 5}]) is None


def test_status_of_a_directory_without_a_log(tmp_path):
    with pytest.raises(UsageError, match="no log.jsonl"):
        run_status(tmp_path)


def test_label_smoothing_trains_on_the_smoothed_loss_and_validates_on_the_nll(synth_dir, tmp_path):
    """train.label_smoothing eps: the trainer's loss is PyTorch's label-smoothed cross-entropy of
    the model's logits; the model's own loss (what validation reads) stays the plain NLL."""
    from rnnsearch.data.batching import make_batch
    from rnnsearch.data.vocab import PAD
    cfg = demo_config(synth_dir, label_smoothing=0.2, max_steps=1)
    cfg["model"].update(dropout=0.0)
    trainer = Trainer(from_dict(cfg), tmp_path / "run", log=lambda *_: None)
    data = trainer.train_data
    b = make_batch([data.src_ids[i] for i in range(6)], [data.tgt_ids[i] for i in range(6)])
    with torch.no_grad():
        logits, _ = trainer.model(b.src, b.src_mask, b.tgt_in)  # (B, T, V)
        real = b.tgt_out != PAD  # (B, T)
        for eps, got in [(0.2, trainer.loss_fn(b.src, b.src_mask, b.tgt_in, b.tgt_out)[0]),
                         (0.0, trainer.model.loss(b.src, b.src_mask, b.tgt_in, b.tgt_out)[0])]:
            want = torch.nn.functional.cross_entropy(logits[real], b.tgt_out[real], reduction="sum",
                                                     label_smoothing=eps)
            assert float(got) == pytest.approx(float(want), rel=1e-5), eps
    assert trainer.train_step(np.arange(6))[2]
