"""int8 decoding (``--quantize int8``, torch back end): the decoder's stacked step products in int8
and W_o, U and U_o (model/packed.py's Int8Linear, int8_steps, a scale per row), close to the
float32 model's step, for both architectures and both readouts."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from conftest import small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.decoding.backends import torch_int8
from rnnsearch.model.packed import Int8Linear, linear


@pytest.mark.parametrize("rows", [1, 7, 300])
def test_an_int8_product_is_close_to_the_float_product(rows):
    torch.manual_seed(0)
    layer = torch.nn.Linear(24, 40)
    x = torch.randn(rows, 3, 24)  # (rows, 3, in): any leading shape
    product = Int8Linear.quantize(layer.weight, layer.bias)
    assert product(x).shape == (rows, 3, 40) and product(x).dtype == torch.float32
    torch.testing.assert_close(product(x), F.linear(x, layer.weight, layer.bias), rtol=0.05, atol=0.05)
    assert not torch.equal(product(x), F.linear(x, layer.weight, layer.bias))  # it did round
    with pytest.raises(ValueError, match="carries its bias"):
        linear(x, product, layer.bias)


def test_an_int8_products_rows_are_its_columns_of_output():
    torch.manual_seed(1)
    layer = torch.nn.Linear(16, 50)
    product, x = Int8Linear.of(layer), torch.randn(9, 16)
    ids = torch.tensor([0, 3, 4, 17, 49])
    assert torch.equal(product.rows(ids)(x), product(x)[:, ids])  # the same int8 rows, scales and bias
    assert product.rows(ids).out_features == 5 and product.q.dtype == torch.int8


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("readout", ["current", "previous"])
def test_int8_steps_compute_the_float_model(arch, readout):
    plain = small_model(arch, readout_state=readout).eval()
    low = torch_int8(plain)
    assert all(isinstance(w, Int8Linear) for w in (low.decoder.packed_steps.query, low.decoder.packed_steps.embed,
                                                   low.decoder.W_o, low.decoder.U, low.decoder.U_o))
    assert plain.decoder.packed_steps is None  # torch_int8 quantises a copy
    src, mask = source_batch([[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]])  # padding in two rows
    rows = torch.tensor([0, 0, 1, 1, 2, 2])  # as the beam search reads the encoder: K = 2 rows per sentence
    with torch.no_grad():
        enc_a, enc_b = plain.encode(src, mask), low.encode(src, mask)
        state_a, state_b = plain.init_state(enc_a).select(rows), low.init_state(enc_b).select(rows)
        y = torch.tensor([2, 7, 9, 4, 5, 6])
        for _ in range(3):
            logp_a, state_a, alpha_a = plain.step(y, state_a, enc_a)
            logp_b, state_b, alpha_b = low.step(y, state_b, enc_b)
            torch.testing.assert_close(logp_b, logp_a, rtol=0.05, atol=0.1)
            torch.testing.assert_close(state_b.hidden, state_a.hidden, rtol=0.05, atol=0.05)
            if arch == "rnnsearch":
                assert float(alpha_b[2:4, 3:].abs().sum()) == 0.0  # padding gets no attention
                torch.testing.assert_close(alpha_b.sum(1), torch.ones(6))
                torch.testing.assert_close(alpha_b, alpha_a, rtol=0.05, atol=0.05)
            y = logp_a.argmax(1)


def test_an_int8_decoder_refuses_to_train():
    model = torch_int8(small_model())
    model.train()
    src, mask = source_batch([[5, 6, 7]])
    with pytest.raises(RuntimeError, match="cannot train"):
        model.encode(src, mask)
