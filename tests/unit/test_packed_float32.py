"""The float32 search's view of a model (model/packed.py's float32_view): its step is the model's
step with the products through oneDNN's packed weights, it leaves the model as it was (training,
saving, modes), a translator makes it again once the model's parameters change, and an ensemble's is its members' views."""
from __future__ import annotations

import pytest
import torch

from conftest import small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.decoding.backends import Ensemble, Float32View
from rnnsearch.model import gemm
from rnnsearch.model.packed import PackedLinear, float32_view, packs_float32

pytestmark = pytest.mark.skipif(not packs_float32(small_model()), reason="float32 products do not go to oneDNN here "
                                "(no oneDNN in this PyTorch, or RNNSEARCH_GEMM=mkl)")


def _steps(model, src, mask, rows, steps=3):
    """log p, s_i and alpha of ``steps`` greedy steps over K rows per sentence (``rows``)."""
    out = []
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc).select(rows)
        y = torch.full((len(rows),), 2)
        for _ in range(steps):
            logp, state, alpha = model.step(y, state, enc)
            out.append((logp, getattr(state, "hidden", None), alpha))  # an Ensemble's: Members, no hidden
            y = logp.argmax(1)
    return out


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("readout", ["current", "previous"])
def test_the_view_steps_as_the_model(arch, readout):
    model = small_model(arch, readout_state=readout)
    view = float32_view(model)
    assert isinstance(view.decoder.W_o, PackedLinear) and view.decoder.W_o.dtype == torch.float32
    src, mask = source_batch([[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]])  # padding in two rows
    rows = torch.tensor([0, 0, 1, 1, 2, 2])  # K = 2 rows per sentence against one encoder row each
    for (logp_a, s_a, alpha_a), (logp_b, s_b, alpha_b) in zip(_steps(model, src, mask, rows),
                                                              _steps(view, src, mask, rows), strict=True):
        torch.testing.assert_close(logp_b, logp_a, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(s_b, s_a, rtol=1e-5, atol=1e-5)
        if arch == "rnnsearch":
            torch.testing.assert_close(alpha_b, alpha_a, rtol=1e-5, atol=1e-6)
            assert float(alpha_b[2:4, 3:].abs().sum()) == 0.0  # the short sentence's padding


def test_the_view_leaves_the_model_as_it_was():
    model = small_model()
    before = {k: (v.data_ptr(), v.clone()) for k, v in model.state_dict().items()}
    model.train()
    view = float32_view(model)
    assert not view.training and not view.decoder.training and not view.decoder.attention.training
    assert model.training and model.decoder.training and model.decoder.attention.training
    assert type(model.decoder.W_o) is torch.nn.Linear and model.decoder.packed_steps is None
    assert view.decoder.W_o.weight.data_ptr() == model.decoder.W_o.weight.data_ptr()  # shared, not copied
    after = model.state_dict()
    assert after.keys() == before.keys()
    for k, (ptr, value) in before.items():
        assert after[k].data_ptr() == ptr and torch.equal(after[k], value), k
    src, mask = source_batch([[5, 6, 7], [8, 9]])
    tgt_in, tgt_out = torch.tensor([[2, 4, 5], [2, 6, 0]]), torch.tensor([[4, 5, 3], [6, 3, 0]])
    loss, _ = model.loss(src, mask, tgt_in, tgt_out)  # the model still trains
    loss.backward()
    assert model.decoder.W_o.weight.grad is not None


def _assert_reads_the_model(view, model):
    """The view's log p over a sentence's K = 2 rows is the model's as it is now."""
    src, mask = source_batch([[5, 6, 7, 8]])
    rows = torch.tensor([0, 0])
    for (logp_a, _, _), (logp_b, _, _) in zip(_steps(model, src, mask, rows), _steps(view, src, mask, rows)):
        torch.testing.assert_close(logp_b, logp_a, rtol=1e-4, atol=1e-4)


def test_a_translator_makes_the_view_again_after_an_update():
    model = small_model()
    views = Float32View(keep=True)  # a translator's own weights (Translator.from_checkpoint)
    first = views.of(model)
    assert first is not model and views.of(model) is first  # made once while nothing changes
    with torch.no_grad():
        model.decoder.W_o.weight.mul_(-1.0)  # an in-place change moves the version
    second = views.of(model)
    assert second is not first
    _assert_reads_the_model(second, model)


def test_a_model_its_caller_trains_is_read_afresh_at_each_search():
    """Training validates through a translator around the model it trains, whose fused Adam step
    changes the weights without moving their versions."""
    model = small_model()
    views = Float32View()
    before = views.of(model)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.5, fused=True)
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    optimiser.step()
    after = views.of(model)
    assert after is not before
    _assert_reads_the_model(after, model)


def test_what_has_no_view(monkeypatch):
    model = small_model()
    assert not packs_float32(small_model().to(torch.bfloat16))
    assert Float32View().of(small_model().double()).decoder.W_o.weight.dtype == torch.float64  # itself
    monkeypatch.setenv("RNNSEARCH_GEMM", "mkl")
    gemm.enabled.cache_clear()
    try:
        assert not packs_float32(model) and Float32View().of(model) is model
    finally:
        monkeypatch.delenv("RNNSEARCH_GEMM")
        gemm.enabled.cache_clear()


def test_an_ensembles_view_is_its_members_views():
    first, second = small_model(), small_model()
    with torch.no_grad():
        for p in second.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    ensemble = Ensemble([first, second])
    views = Float32View(keep=True)
    view = views.of(ensemble)
    assert isinstance(view, Ensemble) and views.of(ensemble) is view  # made once while nothing changes
    assert [type(m.decoder.W_o) for m in view.models] == [PackedLinear, PackedLinear]
    assert [type(m.decoder.W_o) for m in ensemble.models] == [torch.nn.Linear, torch.nn.Linear]  # left as they were
    _assert_reads_the_model(view, ensemble)
    with torch.no_grad():
        second.decoder.W_o.weight.mul_(-1.0)  # a member's update: the ensemble's view is made again
    assert views.of(ensemble) is not view
    _assert_reads_the_model(views.of(ensemble), ensemble)
