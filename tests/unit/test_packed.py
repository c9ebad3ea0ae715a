"""bf16 decoding with weights packed for oneDNN once (model/packed.py) computes the same bf16
products as F.linear with the bf16 weights, for both architectures and both readouts."""
from __future__ import annotations

import copy

import pytest
import torch

from conftest import small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.cpu import describe, packed_bf16
from rnnsearch.model.packed import PackedLinear, bf16_steps, linear

pytestmark = pytest.mark.skipif(not packed_bf16(), reason=f"no oneDNN packed bf16 linear on this CPU or PyTorch "
                                f"({describe()})")


@pytest.mark.parametrize("rows", [1, 7, 300])
def test_a_packed_product_is_the_bf16_product(rows):
    torch.manual_seed(0)
    layer = torch.nn.Linear(24, 40).to(torch.bfloat16)
    x = torch.randn(rows, 3, 24).to(torch.bfloat16)  # (rows, 3, in): any leading shape
    packed = PackedLinear.of(layer)
    torch.testing.assert_close(packed(x).float(), layer(x).float(), rtol=2e-2, atol=2e-2)
    assert packed(x).shape == (rows, 3, 40)
    with pytest.raises(ValueError, match="carries its bias"):
        linear(x, packed, layer.bias)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("readout", ["current", "previous"])
def test_packed_steps_compute_the_bf16_model(arch, readout):
    plain = small_model(arch, readout_state=readout).to(torch.bfloat16)
    packed = copy.deepcopy(plain)
    bf16_steps(packed.decoder)
    assert isinstance(packed.decoder.W_o, PackedLinear)
    src, mask = source_batch([[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]])  # padding in two rows
    with torch.no_grad():
        enc_a, enc_b = plain.encode(src, mask), packed.encode(src, mask)
        state_a, state_b = plain.init_state(enc_a), packed.init_state(enc_b)
        y = torch.tensor([2, 7, 9])
        for _ in range(3):
            logp_a, state_a, alpha_a = plain.step(y, state_a, enc_a)
            logp_b, state_b, alpha_b = packed.step(y, state_b, enc_b)
            torch.testing.assert_close(logp_b, logp_a, rtol=0.05, atol=0.1)
            torch.testing.assert_close(state_b.hidden.float(), state_a.hidden.float(), rtol=0.05, atol=0.05)
            if arch == "rnnsearch":
                assert float(alpha_b[1, 3:].abs().sum()) == 0.0  # padding gets no attention
                torch.testing.assert_close(alpha_b.float(), alpha_a.float(), rtol=0.05, atol=0.05)
            y = logp_a.argmax(1)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_packed_steps_read_one_encoder_row_for_k_hypotheses(arch):
    """As beam search runs it: K = 3 rows per sentence against the encoder's rows kept once."""
    packed = small_model(arch).to(torch.bfloat16)
    bf16_steps(packed.decoder)
    src, mask = source_batch([[5, 6, 7, 8, 9, 10], [11, 12]])
    rows = torch.tensor([0, 0, 0, 1, 1, 1])
    with torch.no_grad():
        enc = packed.encode(src, mask)
        state = packed.init_state(enc).select(rows)
        y = torch.tensor([2, 7, 9, 4, 5, 6])
        logp, new, alpha = packed.step(y, state, enc)
        logp_rows, new_rows, alpha_rows = packed.step(y, state, enc.select(rows))
    torch.testing.assert_close(logp, logp_rows, rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(new.hidden.float(), new_rows.hidden.float(), rtol=1e-2, atol=1e-2)
    if arch == "rnnsearch":
        torch.testing.assert_close(alpha, alpha_rows, rtol=1e-4, atol=1e-5)
        assert float(alpha[3:, 3:].abs().sum()) == 0.0  # the short sentence's padding (2 words + </s>)


def test_a_packed_decoder_refuses_to_train():
    model = small_model().to(torch.bfloat16)
    bf16_steps(model.decoder)
    model.train()
    src, mask = source_batch([[5, 6, 7]])
    with pytest.raises(RuntimeError, match="cannot train"):
        model.encode(src, mask)
