"""Attention sums to 1 over real source words and is exactly 0 on padding."""
import dataclasses
from unittest import mock

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.model import AdditiveAttention


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=5), seed=st.integers(0, 10_000))
def test_attention_is_a_distribution_over_real_words(lengths, seed):
    torch.manual_seed(seed)
    att = AdditiveAttention(query_size=6, key_size=4, att_size=5)
    for p in att.parameters():
        torch.nn.init.normal_(p, std=1.0)
    width = max(lengths)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]  # (B, S)
    annotations = torch.randn(len(lengths), width, 4) * mask[:, :, None]
    context, alpha = att(torch.randn(len(lengths), 6), att.proj_keys(annotations), annotations, mask)
    torch.testing.assert_close(alpha.sum(1), torch.ones(len(lengths)))
    assert (alpha[~mask] == 0).all()
    assert (alpha[mask] > 0).all()
    torch.testing.assert_close(context, torch.einsum("bs,bsc->bc", alpha, annotations))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), extra=st.integers(1, 6))
def test_model_attention_ignores_padding(seed, extra):
    """A sentence's annotations and attention are the same alone and beside a longer one."""
    model = small_model("rnnsearch", seed=seed)
    short, long = [5, 6, 7], [8, 9, 10, 11, 12, 13][: 3 + extra]
    with torch.no_grad():
        src1, mask1 = source_batch([short])
        src2, mask2 = source_batch([short, long])
        enc1, enc2 = model.encode(src1, mask1), model.encode(src2, mask2)
        n = int(mask1.sum())
        torch.testing.assert_close(enc2.annotations[0, :n], enc1.annotations[0])
        y = torch.tensor([4])
        _, _, a1 = model.step(y, model.init_state(enc1), enc1)
        _, _, a2 = model.step(torch.tensor([4, 4]), model.init_state(enc2), enc2)
    torch.testing.assert_close(a2[0, :n], a1[0])
    assert (a2[0, n:] == 0).all()


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=4), seed=st.integers(0, 10_000),
       k=st.integers(1, 5), arch=st.sampled_from(["rnnsearch", "rnnencdec"]),
       readout=st.sampled_from(["current", "previous"]), chunk=st.sampled_from([1, 1 << 18]))
def test_step_reads_one_encoder_row_for_k_hypotheses(lengths, seed, k, arch, readout, chunk):
    """Beam search keeps the encoder's output once per sentence and K decoder rows per sentence:
    each row's step equals the step with the sentence's encoder row copied K times (also when the
    grouped attention's hidden layer is made one sentence at a time, ``chunk`` 1)."""
    with mock.patch("rnnsearch.model.attention.CHUNK_ELEMENTS", chunk):
        _check_one_encoder_row_for_k_hypotheses(lengths, seed, k, arch, readout)


def _check_one_encoder_row_for_k_hypotheses(lengths, seed, k, arch, readout):
    model = small_model(arch, seed=seed, readout_state=readout)
    torch.manual_seed(seed)
    batch = [torch.randint(4, 22, (n,)).tolist() for n in lengths]
    src, mask = source_batch(batch)
    rows = torch.arange(len(batch)).repeat_interleave(k)  # (B*K,)
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc).select(rows)
        state = type(state)(state.hidden + 0.3 * torch.randn_like(state.hidden))  # K different hypotheses
        y = torch.randint(4, 22, (len(rows),))
        logp, new, alpha = model.step(y, state, enc)
        logp_rows, new_rows, alpha_rows = model.step(y, state, enc.select(rows))
    torch.testing.assert_close(logp, logp_rows, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(new.hidden, new_rows.hidden, rtol=1e-5, atol=1e-5)
    if arch == "rnnencdec":
        assert alpha is None and alpha_rows is None
        return
    torch.testing.assert_close(alpha, alpha_rows, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(alpha.sum(1), torch.ones(len(rows)))
    assert (alpha[~mask[rows]] == 0).all()


@settings(max_examples=15, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=4), seed=st.integers(0, 10_000),
       k=st.integers(1, 4), readout=st.sampled_from(["current", "previous"]))
def test_decoding_sums_projected_annotations_as_the_paper_projects_the_context(lengths, seed, k, readout):
    """While decoding, [C; C_o] c_i is computed as sum_j alpha_ij [C; C_o] h_j from the encoder's
    ``context_values``: the step equals the one that forms c_i and multiplies it by [C; C_o]."""
    model = small_model("rnnsearch", seed=seed, readout_state=readout).double()
    torch.manual_seed(seed)
    src, mask = source_batch([torch.randint(4, 22, (n,)).tolist() for n in lengths])
    rows = torch.arange(len(lengths)).repeat_interleave(k)  # (B*K,)
    with torch.no_grad():
        enc = model.encode(src, mask)
        assert enc.context_values is not None and enc.context_values.shape[:2] == src.shape
        plain = dataclasses.replace(enc, context_values=None)
        state = model.init_state(enc).select(rows)
        state = type(state)(state.hidden + 0.3 * torch.randn_like(state.hidden))
        y = torch.randint(4, 22, (len(rows),))
        logp, new, alpha = model.step(y, state, enc)
        logp_plain, new_plain, alpha_plain = model.step(y, state, plain)
        model.train()
        assert model.encode(src, mask).context_values is None  # training never makes them
    torch.testing.assert_close(logp, logp_plain)
    torch.testing.assert_close(new.hidden, new_plain.hidden)
    torch.testing.assert_close(alpha, alpha_plain)


def test_grouped_attention_refuses_rows_that_are_not_k_per_sentence():
    model = small_model("rnnsearch")
    src, mask = source_batch([[5, 6], [7, 8, 9]])
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc).select(torch.tensor([0, 0, 1]))
        try:
            model.step(torch.tensor([4, 4, 4]), state, enc)
        except ValueError as e:
            assert "3 query rows for 2 sentences" in str(e)
        else:
            raise AssertionError("3 rows for 2 sentences were accepted")
