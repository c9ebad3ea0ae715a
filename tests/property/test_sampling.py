"""Sampling (translate --sample): top-1 sampling is greedy search; a draw's score is the model's
log-probability of it; the first token's draws follow the (tempered, top-k) distribution; a seed
fixes the draws; the flags are checked."""
from __future__ import annotations

import math

import pytest
import torch
from pydantic import ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import resolved, small_model
from rnnsearch.cli import main
from rnnsearch.data.batching import source_batch
from rnnsearch.data.vocab import BOS, PAD
from rnnsearch.decoding.sampling import Sampling, sample
from rnnsearch.decoding.scoring import score_ids
from rnnsearch.decoding.search import greedy
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.decoding.settings import SearchSettings

sentences = st.lists(st.lists(st.integers(4, 22), min_size=1, max_size=8), min_size=1, max_size=4)


@settings(max_examples=10, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), arch=st.sampled_from(["rnnsearch", "rnnencdec"]))
def test_top_1_sampling_is_greedy(batch, seed, arch):
    model = small_model(arch, seed=seed)
    src, mask = source_batch(batch)
    drawn = sample(model, src, mask, resolved(n_best=2, sampling=Sampling(topk=1, temperature=0.7, seed=seed)))
    for hyps, g in zip(drawn, greedy(model, src, mask, resolved())):
        for h in hyps:
            assert h.tokens == g.tokens and math.isclose(h.score, g.score, rel_tol=1e-5, abs_tol=1e-5)


@settings(max_examples=10, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), topk=st.integers(0, 6), temperature=st.floats(0.3, 3.0))
def test_a_draws_score_is_the_models_log_probability(batch, seed, topk, temperature):
    model = small_model(seed=seed)
    src, mask = source_batch(batch)
    drawn = sample(model, src, mask, resolved(n_best=3, sampling=Sampling(topk=topk, temperature=temperature, seed=seed)))
    for sent, hyps in zip(batch, drawn):
        assert [h.norm_score for h in hyps] == sorted((h.norm_score for h in hyps), reverse=True)
        for h, s in zip(hyps, score_ids(model, [sent] * len(hyps), [h.tokens for h in hyps], torch.get_default_device())):
            assert math.isclose(h.score, s.logprob, rel_tol=1e-4, abs_tol=1e-4)


@pytest.mark.parametrize("topk, temperature", [(0, 1.0), (5, 2.0), (0, 0.5)])
def test_the_first_tokens_follow_the_distribution(topk, temperature):
    model, n = small_model(seed=7), 4000
    src, mask = source_batch([[5, 9, 13, 4]])
    with torch.no_grad():
        enc = model.encode(src, mask)
        logp, _, _ = model.step(torch.tensor([BOS]), model.init_state(enc), enc)  # (1, V)
    logp = logp[0] / temperature
    logp[[PAD, BOS]] = float("-inf")  # never drawn (decoding/search.py)
    if topk:
        logp[logp < logp.topk(topk).values[-1]] = float("-inf")
    expected = torch.softmax(logp, 0)
    drawing = Sampling(topk=topk, temperature=temperature, seed=11)
    drawn = sample(model, src, mask, resolved(n_best=n, max_len_ratio=0.1, sampling=drawing))
    first = torch.tensor([(h.tokens + [3])[0] for h in drawn[0]])  # </s> (3) when the draw ended at once
    counts = torch.bincount(first, minlength=len(expected)).float() / n
    assert float((counts - expected).abs().max()) < 0.03, (counts, expected)
    assert float(counts[expected == 0].sum()) == 0.0  # nothing outside the top k


def test_a_seed_fixes_the_draws():
    model = small_model(seed=3)
    src, mask = source_batch([[5, 6, 7, 8], [9, 10, 11]])
    draw = lambda seed: [[h.tokens for h in hyps]  # noqa: E731
                         for hyps in sample(model, src, mask, resolved(n_best=4, sampling=Sampling(seed=seed)))]
    assert draw(1) == draw(1) and draw(1) != draw(2)



@settings(max_examples=10, deadline=None)
@given(batch=sentences, others=sentences, seed=st.integers(0, 1000), topk=st.integers(0, 6))
def test_a_sentences_seeded_draws_do_not_depend_on_the_sentences_beside_it(batch, others, seed, topk):
    """``translate --sample --seed`` drew another output for a line when other lines shared its batch."""
    model = small_model(seed=5)
    drawing = resolved(n_best=3, sampling=Sampling(topk=topk, seed=seed))
    alone = [[h.tokens for h in hyps] for s in batch for hyps in sample(model, *source_batch([s]), drawing)]
    src, mask = source_batch(others + batch[::-1])
    together = [[h.tokens for h in hyps] for hyps in sample(model, src, mask, drawing)][len(others):][::-1]
    assert together == alone

def test_translator_and_cli(tiny_run, synth_dir, capsys):
    t = Translator.from_checkpoint(tiny_run / "best.pt")
    sources = (synth_dir / "test.en").read_text().splitlines()[:5]
    results = t.translate(sources, SearchSettings(n_best=4, sampling=Sampling(temperature=1.5, seed=2)))
    assert all(len(r.nbest) == 4 and r.text == r.nbest[0].text for r in results)
    with pytest.raises(UsageError, match="no beam"):
        t.translate(sources, SearchSettings(beam=4, sampling=Sampling()))
    with pytest.raises(ValidationError, match="greater than 0"):
        Sampling(temperature=0.0)
    ckpt, src = str(tiny_run / "best.pt"), str(synth_dir / "test.en")
    assert main(["translate", ckpt, "--input", src, "--temperature", "0.5"]) == 2
    assert "--temperature: only with --sample" in capsys.readouterr().err
    assert main(["translate", ckpt, "--input", src, "--sample", "--temperature", "0"]) == 2
    assert "--temperature: must be > 0" in capsys.readouterr().err
    outputs = []
    for _ in range(2):
        assert main(["translate", ckpt, "--input", src, "--sample", "--seed", "5", "--n-best", "2"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 2 * len(open(src).read().splitlines())
