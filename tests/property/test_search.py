"""Search properties: beam 1 == greedy; reported scores are the model's log-probabilities;
padding never changes a sentence's result; n-best lists are ordered."""
import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import resolved, small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.decoding.scoring import score_ids
from rnnsearch.decoding.search import beam_search, greedy, length_normalise, row_topk
from rnnsearch.data.vocab import BOS, EOS, PAD

sentences = st.lists(st.lists(st.integers(4, 22), min_size=1, max_size=8), min_size=1, max_size=4)


def log_prob(model, src_ids, out_ids):
    """log p(out + </s> | src) by teacher forcing (rnnsearch score's function)."""
    return score_ids(model, [src_ids], [out_ids], torch.get_default_device())[0].logprob


@settings(max_examples=12, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), arch=st.sampled_from(["rnnsearch", "rnnencdec"]))
def test_beam_one_equals_greedy(batch, seed, arch):
    model = small_model(arch, seed=seed)
    src, mask = source_batch(batch)
    g = greedy(model, src, mask, resolved(max_len_ratio=1.5))
    b = beam_search(model, src, mask, resolved(beam=1, max_len_ratio=1.5))
    for gh, bh in zip(g, b):
        assert gh.tokens == bh[0].tokens
        assert math.isclose(gh.score, bh[0].score, rel_tol=1e-5, abs_tol=1e-5)


@settings(max_examples=10, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), beam=st.integers(2, 5))
def test_beam_scores_are_model_log_probabilities(batch, seed, beam):
    model = small_model("rnnsearch", seed=seed)
    src, mask = source_batch(batch)
    for sent, hyps in zip(batch, beam_search(model, src, mask, resolved(beam=beam, max_len_ratio=1.5, n_best=beam))):
        assert len(hyps) == beam
        assert all(a.norm_score >= b.norm_score for a, b in zip(hyps, hyps[1:]))
        for h in hyps:
            assert EOS not in h.tokens and PAD not in h.tokens and BOS not in h.tokens
            assert math.isclose(h.score, log_prob(model, sent, h.tokens), rel_tol=1e-4, abs_tol=1e-4)
            assert h.attention.shape == (len(h.tokens) + 1, len(sent) + 1)
            torch.testing.assert_close(torch.tensor(h.attention.sum(1)), torch.ones(len(h.tokens) + 1))


@settings(max_examples=10, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), beam=st.integers(1, 4))
def test_padding_does_not_change_a_sentence(batch, seed, beam):
    """Each sentence decoded alone equals the same sentence decoded in a padded batch."""
    model = small_model("rnnsearch", seed=seed)
    src, mask = source_batch(batch)
    together = beam_search(model, src, mask, resolved(beam=beam, max_len_ratio=1.5, n_best=beam))
    for sent, hyps in zip(batch, together):
        alone = beam_search(model, *source_batch([sent]), resolved(beam=beam, max_len_ratio=1.5, n_best=beam))[0]
        assert [h.tokens for h in alone] == [h.tokens for h in hyps]
        for a, h in zip(alone, hyps):
            assert math.isclose(a.score, h.score, rel_tol=1e-4, abs_tol=1e-4)


def test_beam_finds_at_least_greedys_score():
    model = small_model("rnnsearch", seed=5)
    src, mask = source_batch([[5, 6, 7, 8], [9, 10], [11, 12, 13, 14, 15, 16]])
    g = greedy(model, src, mask, resolved())
    b = beam_search(model, src, mask, resolved(beam=8))
    for gh, bh in zip(g, b):
        assert bh[0].score >= gh.score - 1e-5


def test_length_limit_and_penalty():
    model = small_model("rnnsearch", seed=2)
    src, mask = source_batch([[5, 6, 7]])
    for h in beam_search(model, src, mask, resolved(beam=4, max_len_ratio=0.5, n_best=4))[0]:
        assert len(h.tokens) + 1 <= int(4 * 0.5) + 5
    assert length_normalise(-6.0, 7, 0.0) == -6.0
    assert math.isclose(length_normalise(-6.0, 7, 1.0), -6.0 / 2.0)
    hyps = beam_search(model, src, mask, resolved(beam=4, length_penalty=1.0, n_best=4))[0]
    assert all(a.norm_score >= b.norm_score for a, b in zip(hyps, hyps[1:]))


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 9), vocab=st.integers(1, 2000), k=st.integers(1, 12), seed=st.integers(0, 10_000),
       ties=st.booleans(), dead=st.booleans())
def test_row_topk_is_topk(rows, vocab, k, seed, ties, dead):
    """The grouped top-k the beam uses gives the k largest values of each row and their columns
    (equal values in any order): with ties, with rows that are -inf but one column (forced </s>)."""
    k = min(k, vocab)
    gen = torch.Generator(torch.get_default_device()).manual_seed(seed)
    x = torch.randn(rows, vocab, generator=gen)
    if ties:
        x = (x * 2).round() / 2  # many equal values
    if dead:
        x[0] = float("-inf")
        x[0, vocab // 2] = -1.0
    top, columns = row_topk(x, k)
    expected, _ = x.topk(k, dim=1)
    torch.testing.assert_close(top, expected)
    torch.testing.assert_close(x.gather(1, columns), top)
    assert all(len(set(r)) == k for r in columns.tolist())  # k distinct columns per row


@settings(max_examples=8, deadline=None)
@given(batch=sentences, seed=st.integers(0, 1000), beam=st.integers(1, 4),
       arch=st.sampled_from(["rnnsearch", "rnnencdec"]))
def test_no_output_is_empty(batch, seed, beam, arch):
    """A model that would end every output at once (</s> by far the most probable token) still writes
    one token first: an empty output translates nothing."""
    model = small_model(arch, seed=seed)
    with torch.no_grad():
        model.decoder.W_o.bias[EOS] += 50.0
    src, mask = source_batch(batch)
    for h in greedy(model, src, mask, resolved(max_len_ratio=1.5)):
        assert len(h.tokens) >= 1
    for hyps in beam_search(model, src, mask, resolved(beam=beam, max_len_ratio=1.5, n_best=beam)):
        assert hyps and all(len(h.tokens) >= 1 for h in hyps)
