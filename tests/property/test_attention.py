"""Attention sums to 1 over real source words and is exactly 0 on padding."""
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
