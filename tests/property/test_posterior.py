"""The alignment posterior (`rnnsearch align --posterior`): q_ij = alpha_ij p(y_i | s_{i-1}, y_{i-1},
c_i = h_j) / sum_k alpha_ik p(y_i | .., h_k). The likelihood of each h_j is checked against the
model's own step run with the attention forced onto h_j (a source mask with one real word); the
posterior is a distribution over the real source words, Bayes' rule of the two, and padding does
not change it."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import small_model
from rnnsearch.data.batching import make_batch
from rnnsearch.model.decoder import DecoderState

sentences = st.lists(st.lists(st.integers(4, 22), min_size=1, max_size=6), min_size=1, max_size=3)


@settings(max_examples=15, deadline=None)
@given(sentences, st.integers(0, 999), st.sampled_from(["current", "previous"]))
def test_each_likelihood_is_the_step_with_the_attention_on_that_word(src, seed, readout):
    model = small_model(seed=seed, readout_state=readout)
    tgt = [list(reversed(s)) + [5] for s in src]
    b = make_batch(src, tgt)
    with torch.no_grad():
        enc = model.encode(b.src, b.src_mask)
        _, _, queries = model.decoder.features(b.tgt_in, enc, with_queries=True)  # (B, T, D)
        logp = model.decoder.logprob_given_annotations(b.tgt_in, b.tgt_out, queries, enc)  # (B, T, S)
        for j in range(b.src.shape[1]):
            only_j = torch.zeros_like(b.src_mask)
            only_j[:, j] = True  # the attention's softmax then puts all its weight on h_j
            enc_j = model.encode(b.src, b.src_mask)
            enc_j.mask = only_j
            for i in range(b.tgt_in.shape[1]):
                step, _, alpha = model.step(b.tgt_in[:, i], DecoderState(queries[:, i]), enc_j)  # (B, V)
                assert torch.allclose(alpha[:, j], torch.ones(len(src)))
                want = step.gather(1, b.tgt_out[:, i:i + 1]).squeeze(1)  # (B,)
                torch.testing.assert_close(logp[:, i, j], want, rtol=1e-4, atol=1e-4)


@settings(max_examples=20, deadline=None)
@given(sentences, st.integers(0, 999))
def test_the_posterior_is_bayes_rule_over_the_real_source_words(src, seed):
    model = small_model(seed=seed)
    tgt = [s[::2] + [7] for s in src]
    b = make_batch(src, tgt)
    with torch.no_grad():
        alphas, posterior = model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)  # (B, T, S)
        enc = model.encode(b.src, b.src_mask)
        _, _, queries = model.decoder.features(b.tgt_in, enc, with_queries=True)
        likelihood = model.decoder.logprob_given_annotations(b.tgt_in, b.tgt_out, queries, enc).exp()
    real = b.tgt_out != 0  # (B, T)
    joint = alphas * likelihood * b.src_mask.unsqueeze(1)  # (B, T, S)
    torch.testing.assert_close(posterior[real], (joint / joint.sum(-1, keepdim=True))[real], rtol=1e-4, atol=1e-6)
    assert torch.allclose(posterior[real].sum(-1), torch.ones(int(real.sum())))
    assert (posterior.masked_select(~b.src_mask.unsqueeze(1).expand_as(posterior)) == 0).all()


@settings(max_examples=15, deadline=None)
@given(sentences, st.integers(0, 999), st.sampled_from(["current", "previous"]))
def test_padding_never_changes_a_sentences_posterior(src, seed, readout):
    model = small_model(seed=seed, readout_state=readout)
    tgt = [s + [9] for s in src]
    longer = src + [list(range(4, 16))]
    with torch.no_grad():
        b = make_batch(longer, tgt + [list(range(5, 19))])
        _, together = model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)
        for k, (s, t) in enumerate(zip(src, tgt)):
            a = make_batch([s], [t])
            _, alone = model.alignment_posterior(a.src, a.src_mask, a.tgt_in, a.tgt_out)
            torch.testing.assert_close(together[k, : len(t) + 1, : len(s) + 1], alone[0], rtol=1e-4, atol=1e-5)


def test_the_posterior_needs_attention():
    model = small_model("rnnencdec")
    b = make_batch([[4, 5]], [[6]])
    with pytest.raises(ValueError, match="needs attention"):
        model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)
