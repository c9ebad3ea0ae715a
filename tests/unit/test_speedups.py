"""Every speed-up computes what the plain implementation computes (float tolerance)."""
from __future__ import annotations

import os

import numpy as np
import pytest
from unittest import mock
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import demo_config, small_model
from rnnsearch.data.batching import make_batch
from rnnsearch.config import from_dict
from rnnsearch.model.attention import additive_energies
from rnnsearch.model.deferred import DeferredWeights
from rnnsearch.model import output
from rnnsearch.model.output import CHUNK_ROWS, linear_cross_entropy
from rnnsearch.training.trainer import Trainer
from rnnsearch.training.update import micro_batches
from rnnsearch.data.vocab import PAD


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 2 * CHUNK_ROWS + 3), vocab=st.integers(5, 60), seed=st.integers(0, 99),
       smoothing=st.sampled_from([0.0, 0.1, 0.35]))
def test_linear_cross_entropy_equals_cross_entropy(rows, vocab, seed, smoothing):
    """The fused loss is PyTorch's cross-entropy, label smoothing included, values and gradients."""
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    x = torch.randn(rows, 7, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(vocab, 7, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(vocab, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.randint(0, vocab, (rows,), generator=g)
    plain = torch.nn.functional.cross_entropy(x @ w.T + b, y, reduction="sum", label_smoothing=smoothing)
    grads = torch.autograd.grad(plain * 0.37, (x, w, b))
    fused = linear_cross_entropy(x, w, b, y, smoothing)
    assert fused.item() == pytest.approx(plain.item(), rel=1e-6)
    for a, e in zip(torch.autograd.grad(fused * 0.37, (x, w, b)), grads):
        torch.testing.assert_close(a.double(), e, rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        assert linear_cross_entropy(x, w, b, y, smoothing).item() == pytest.approx(plain.item(), rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4), src=st.integers(1, 9), att=st.integers(1, 12), seed=st.integers(0, 99))
def test_sigmoid_energies_give_the_papers_alignments_and_gradients(batch, src, att, seed):
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    q = torch.randn(batch, att, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(batch, src, att, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(att, generator=g, dtype=torch.float64, requires_grad=True)
    h = torch.randn(batch, src, 3, generator=g, dtype=torch.float64)
    probe = torch.randn(batch, 3, generator=g, dtype=torch.float64)

    def outcome(energies):
        alpha = torch.softmax(energies, dim=1)
        return alpha, ((alpha.unsqueeze(2) * h).sum(1) * probe).sum()

    alpha_paper, loss_paper = outcome(torch.tanh(q.unsqueeze(1) + k) @ v)  # e_ij = v^T tanh(W s + U h_j)
    alpha_fast, loss_fast = outcome(additive_energies(q, k, v))
    torch.testing.assert_close(alpha_fast, alpha_paper)
    for a, e in zip(torch.autograd.grad(loss_fast, (q, k, v)), torch.autograd.grad(loss_paper, (q, k, v))):
        torch.testing.assert_close(a, e, rtol=1e-6, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(steps=st.integers(1, 5), batch=st.integers(1, 4), src=st.integers(1, 9), seed=st.integers(0, 99))
def test_energies_in_a_shared_workspace_equal_fresh_ones(steps, batch, src, seed):
    """Steps of a loop writing their hidden layer into one workspace, forward and backward,
    give the energies and gradients of steps that allocate their own."""
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    qs = torch.randn(steps, batch, 6, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(batch, src, 6, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(6, generator=g, dtype=torch.float64, requires_grad=True)
    probe = torch.randn(steps, batch, src, generator=g, dtype=torch.float64)
    workspace = torch.empty_like(k)
    shared = torch.stack([additive_energies(q, k, v, workspace) for q in qs])  # (steps, B, S)
    fresh = torch.stack([additive_energies(q, k, v) for q in qs])
    torch.testing.assert_close(shared, fresh, rtol=0, atol=0)
    for a, e in zip(torch.autograd.grad((shared * probe).sum(), (qs, k, v)),
                    torch.autograd.grad((fresh * probe).sum(), (qs, k, v))):
        torch.testing.assert_close(a, e, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="workspace"):
        additive_energies(qs[0], k, v, torch.empty(batch, src + 1, 6, dtype=torch.float64))


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("readout", ["current", "previous"])
@pytest.mark.parametrize("mode", ["eval", "train"])  # train: prepare() stacks fewer weights
def test_teacher_forcing_equals_step_by_step(arch, readout, mode):
    model = small_model(arch, readout_state=readout).double().train(mode == "train")  # dropout 0
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, PAD, PAD]])
    y_in = torch.tensor([[2, 11, 12, 13], [2, 14, 15, 16]])
    y_out = torch.tensor([[11, 12, 13, 3], [14, 15, 16, 3]])
    mask = src != PAD
    logits, alphas = model(src, mask, y_in)
    enc = model.encode(src, mask)
    state = model.init_state(enc)
    for i in range(y_in.size(1)):
        logp, state, alpha = model.step(y_in[:, i], state, enc)
        torch.testing.assert_close(torch.log_softmax(logits[:, i], -1), logp)
        if alpha is not None:
            torch.testing.assert_close(alphas[:, i], alpha)
    nll, n = model.loss(src, mask, y_in, y_out)
    plain = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y_out.flatten(), reduction="sum")
    assert n == 8 and nll.item() == pytest.approx(plain.item(), rel=1e-9)


def _grads(trainer, idx):
    trainer.train_step(idx)
    return [p.grad.clone() for p in trainer.model.parameters()]


def test_micro_batches_give_the_gradient_of_the_whole_batch(synth_dir, tmp_path):
    cfg = demo_config(synth_dir, batch_size=40, clip=0.0)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    whole = Trainer(from_dict(cfg), tmp_path / "a", log=lambda *_: None)
    split = Trainer(from_dict({**cfg, "train": {**cfg["train"], "max_positions": 100}}), tmp_path / "b",
                    log=lambda *_: None)
    idx = np.arange(40)
    assert len(micro_batches(idx, split.train_data.tgt_lens, split.cfg.train.max_positions)) > 2
    for a, b in zip(_grads(whole, idx), _grads(split, idx)):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-7)


def test_fused_adam_equals_plain_adam():
    torch.manual_seed(0)
    params = [torch.randn(30, 20, requires_grad=True), torch.randn(20, requires_grad=True)]
    twins = [p.detach().clone().requires_grad_() for p in params]
    fused, plain = torch.optim.Adam(params, lr=1e-3, fused=True), torch.optim.Adam(twins, lr=1e-3)
    for _ in range(5):
        grads = [torch.randn_like(p) for p in params]
        for p, q, gr in zip(params, twins, grads):
            p.grad, q.grad = gr.clone(), gr.clone()
        fused.step()
        plain.step()
    for p, q in zip(params, twins):
        torch.testing.assert_close(p, q)


def test_make_batch_is_what_the_loss_expects(synth_dir):
    b = make_batch([[5, 6], [7]], [[8, 9, 10], [11]])
    assert b.n_tokens == 6 and b.tgt_in[:, 0].tolist() == [2, 2]


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 6), batch=st.integers(1, 4), seed=st.integers(0, 99))
def test_deferred_weight_gradients_equal_per_step_gradients(steps, batch, seed):
    """A recurrence s_i = tanh(s_{i-1} U^T + x_i C^T): the same values and gradients with the
    weights' gradients computed once for all steps (DeferredWeights) as with F.linear per step."""
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    u = torch.randn(5, 5, generator=g, dtype=torch.float64, requires_grad=True)
    c = torch.randn(5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    s0 = torch.randn(batch, 5, generator=g, dtype=torch.float64, requires_grad=True)
    xs = torch.randn(steps, batch, 3, generator=g, dtype=torch.float64, requires_grad=True)
    probe = torch.randn(steps, batch, 5, generator=g, dtype=torch.float64)

    def run(tape):
        s, out = s0 if tape is None else tape.start(s0), []
        for x in xs.unbind(0):
            if tape is None:
                s = torch.tanh(torch.nn.functional.linear(s, u) + torch.nn.functional.linear(x, c))
            else:
                s = torch.tanh(tape.linear("U", s) + tape.linear("C", x))
            out.append(s)
        return (torch.stack(out) * probe).sum()

    plain, deferred = run(None), run(DeferredWeights(U=u, C=c))
    assert deferred.item() == pytest.approx(plain.item(), rel=1e-12)
    for a, e in zip(torch.autograd.grad(deferred, (u, c, s0, xs)), torch.autograd.grad(plain, (u, c, s0, xs))):
        torch.testing.assert_close(a, e, rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.integers(1, 7), min_size=1, max_size=5), extra=st.integers(0, 2),
       bidirectional=st.booleans(), seed=st.integers(0, 99))
def test_fused_encoder_loop_equals_torch_gru_on_packed_sequences(lengths, extra, bidirectional, seed):
    """Training's fused GRU loop (running rows only, deferred U) is torch.nn.GRU on packed
    sequences: the same states, zeros on padding, and the same gradients of x and every weight."""
    from rnnsearch.model.encoder import Encoder
    torch.manual_seed(seed)
    enc = Encoder(11, 4, 3, bidirectional=bidirectional, cell="fused", dropout=0.0).double()
    width = max(lengths) + extra
    mask = torch.arange(width)[None] < torch.tensor(lengths)[:, None]  # (B, S), padding beyond the longest too
    x = torch.randn(len(lengths), width, 4, dtype=torch.float64, requires_grad=True)
    probe = torch.randn(len(lengths), width, 3, dtype=torch.float64)
    params = [x, *enc.rnn.parameters()]
    results = []
    for run in (enc.fused_loop, enc.fused_packed):
        states = [s for s in run(x, mask) if s is not None]
        loss = sum((s * probe * (k + 1)).sum() for k, s in enumerate(states))
        results.append((states, torch.autograd.grad(loss, params)))
    (loop, loop_grads), (packed, packed_grads) = results
    for a, e in zip(loop, packed):
        torch.testing.assert_close(a, e, rtol=1e-10, atol=1e-12)
        assert not a[~mask].any()
    for a, e in zip(loop_grads, packed_grads):
        torch.testing.assert_close(a, e, rtol=1e-9, atol=1e-11)


def test_deferred_weights_refuse_a_backward_that_did_not_reach_every_step():
    """A product whose output the loss does not use gets no backward: the weight's gradient would
    miss a step, so the flush refuses instead of returning a wrong gradient."""
    w = torch.randn(4, 4, requires_grad=True)
    tape = DeferredWeights(W=w)
    s = tape.start(torch.randn(2, 4, requires_grad=True))
    tape.linear("W", s)  # never used
    with pytest.raises(RuntimeError, match="deferred weight 'W': 2 steps in forward, 1 in backward"):
        tape.linear("W", s).sum().backward()


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("readout", ["current", "previous"])
@pytest.mark.parametrize("cell", ["paper", "fused"])
def test_training_loss_gradients_equal_the_step_by_step_models(arch, readout, cell):
    """Every training speed-up together (teacher forcing outside the loop, stacked products,
    deferred weight gradients, sigmoid energies, fused output and loss, the fused encoder's loop): the
    gradient of ``model.loss`` is that of the plain sum of -log p(y_i) from ``model.step``, one step at
    a time (whose encoder, without gradients, is torch.nn.GRU for the fused cell)."""
    model = small_model(arch, readout_state=readout, encoder_cell=cell).double().train()  # dropout 0
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, PAD, PAD]])
    y_in = torch.tensor([[2, 11, 12, 13], [2, 14, 3, PAD]])
    y_out = torch.tensor([[11, 12, 13, 3], [14, 3, PAD, PAD]])
    mask = src != PAD
    params = [p for p in model.parameters()]
    nll, n = model.loss(src, mask, y_in, y_out)
    fast = torch.autograd.grad(nll, params, allow_unused=True)
    with torch.no_grad():
        encoded = model.encode(src, mask)
    enc = model.encode(src, mask)
    torch.testing.assert_close(enc.annotations, encoded.annotations, rtol=1e-12, atol=1e-12)
    if cell == "fused":  # the plain sum's encoder: torch.nn.GRU itself, with gradients
        with mock.patch.object(type(model.encoder), "fused_loop", lambda self, x, m: self.fused_packed(x, m)):
            enc = model.encode(src, mask)
    state, plain = model.init_state(enc), 0.0
    for i in range(y_in.size(1)):
        logp, state, _ = model.step(y_in[:, i], state, enc)
        plain = plain + torch.nn.functional.nll_loss(logp, y_out[:, i], ignore_index=PAD, reduction="sum")
    assert n == 6 and nll.item() == pytest.approx(plain.item(), rel=1e-9)
    for (name, _), a, e in zip(model.named_parameters(), fast,
                               torch.autograd.grad(plain, params, allow_unused=True)):
        assert (a is None) == (e is None), name
        if a is not None:
            torch.testing.assert_close(a, e, rtol=1e-7, atol=1e-10, msg=name)


@pytest.mark.parametrize("with_bias", [True, False])
def test_float32_products_through_onednn_equal_torchs(with_bias):
    """model/gemm.py: oneDNN's float32 product is torch's (float tolerance); operands it does not
    take (transposed, float64) get torch's own product, and RNNSEARCH_GEMM=mkl turns it off."""
    from rnnsearch.model import gemm
    g = torch.Generator().manual_seed(3)
    x, w = torch.randn(37, 19, generator=g), torch.randn(23, 19, generator=g)
    b = torch.randn(23, generator=g) if with_bias else None
    expected = torch.nn.functional.linear(x.double(), w.double(), None if b is None else b.double())
    available = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    assert gemm.enabled() == (available and os.environ.get("RNNSEARCH_GEMM") != "mkl")
    for a, v in ((x, w), (x, w.t().contiguous().t()), (x.t().contiguous().t(), w)):
        torch.testing.assert_close(gemm.linear(a, v, b).double(), expected, rtol=1e-5, atol=1e-5)
    assert gemm.linear(x.double(), w.double(), None if b is None else b.double()).dtype == torch.float64
    gemm.enabled.cache_clear()
    try:
        with mock.patch.dict("os.environ", {"RNNSEARCH_GEMM": "mkl"}):
            assert not gemm.enabled()
    finally:
        gemm.enabled.cache_clear()


@pytest.mark.parametrize("cell", ["paper", "fused"])
def test_float32_training_gradients_equal_the_step_by_step_models(cell):
    """The same in float32, where the output layer's and the loops' products go through oneDNN
    (model/gemm.py) and the step-by-step sum's through torch: equal to float32 tolerance."""
    model = small_model("rnnsearch", encoder_cell=cell, seed=1).train()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)
    src = torch.tensor([[5, 6, 7, 8, 3], [9, 10, 3, PAD, PAD]])
    y_in, y_out = torch.tensor([[2, 11, 12, 13], [2, 14, 3, PAD]]), torch.tensor([[11, 12, 13, 3], [14, 3, PAD, PAD]])
    params = list(model.parameters())
    nll, _ = model.loss(src, src != PAD, y_in, y_out)
    fast = torch.autograd.grad(nll, params)
    with mock.patch.object(type(model.encoder), "fused_loop", lambda self, x, m: self.fused_packed(x, m)):
        enc = model.encode(src, src != PAD)
    state, plain = model.init_state(enc), 0.0
    for i in range(y_in.size(1)):
        logp, state, _ = model.step(y_in[:, i], state, enc)
        plain = plain + torch.nn.functional.nll_loss(logp, y_out[:, i], ignore_index=PAD, reduction="sum")
    assert nll.item() == pytest.approx(plain.item(), rel=1e-5)
    for (name, _), a, e in zip(model.named_parameters(), fast, torch.autograd.grad(plain, params)):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4 * float(e.abs().max()), msg=name)


def test_deferred_weights_under_bf16_autocast_give_float32_gradients():
    model = small_model("rnnsearch").train()
    src = torch.tensor([[5, 6, 7, 3]])
    y_in, y_out = torch.tensor([[2, 11, 12]]), torch.tensor([[11, 12, 3]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        nll, _ = model.loss(src, src != PAD, y_in, y_out)
    nll.backward()
    for name, p in model.named_parameters():
        assert p.grad is None or (p.grad.dtype == torch.float32 and torch.isfinite(p.grad).all()), name
    assert model.decoder.U.weight.grad.abs().sum() > 0



def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.bfloat16).float()


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, CHUNK_ROWS + 3), vocab=st.integers(5, 60), seed=st.integers(0, 99),
       small=st.booleans(), smoothing=st.sampled_from([0.0, 0.1]))
def test_linear_cross_entropy_under_bf16_autocast_is_autocasts_linear_then_float32_loss(rows, vocab, seed, small,
                                                                                       smoothing):
    """Under bf16 autocast the fused loss equals what autocast's own F.linear followed by a float32
    cross-entropy computes: bfloat16 operands, the bias, softmax and loss in float32; the gradients
    are those of that computation to bfloat16 precision, and come back in float32. ``small``: in
    chunks of 4 rows, gradients in groups of 3 chunks (the last ones partial)."""
    with mock.patch.object(output, "CHUNK_ROWS", 4 if small else CHUNK_ROWS), \
            mock.patch.object(output, "GROUP_ELEMENTS", 12 * vocab if small else output.GROUP_ELEMENTS):
        _bf16_linear_cross_entropy_is_autocasts(rows, vocab, seed, smoothing)


def _bf16_linear_cross_entropy_is_autocasts(rows, vocab, seed, smoothing=0.0):
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    x = torch.randn(rows, 7, generator=g, requires_grad=True)
    w = torch.randn(vocab, 7, generator=g, requires_grad=True)
    b = torch.randn(vocab, generator=g, requires_grad=True)
    y = torch.randint(0, vocab, (rows,), generator=g)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        fused = linear_cross_entropy(x, w, b, y, smoothing)
        logits = torch.nn.functional.linear(x, w)  # (N, V) in bfloat16
    plain = torch.nn.functional.cross_entropy(logits.float() + b, y, reduction="sum", label_smoothing=smoothing)
    assert fused.dtype == torch.float32
    assert fused.item() == pytest.approx(plain.item(), rel=1e-5, abs=1e-4)
    fast = torch.autograd.grad(fused, [x, w, b])
    slow = torch.autograd.grad(plain, [x, w, b])
    for name, a, e in zip("xwb", fast, slow):
        assert a.dtype == torch.float32, name
        torch.testing.assert_close(a, e, rtol=2e-2, atol=2e-2 * e.abs().max().item(), msg=name)


@settings(max_examples=15, deadline=None)
@given(steps=st.integers(1, 5), batch=st.integers(1, 4), seed=st.integers(0, 99))
def test_deferred_weights_under_bf16_autocast_equal_autocasts_per_step_products(steps, batch, seed):
    """Under bf16 autocast the tape casts each weight once per pass and computes the deferred
    gradients from the bfloat16 step inputs and output gradients: the same values as autocast's
    per-step F.linear (to bfloat16 precision), the weight's gradient in float32."""
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    w = torch.randn(6, 6, generator=g, requires_grad=True)
    s0 = torch.randn(batch, 6, generator=g, requires_grad=True)

    def run(deferred_on: bool):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            tape = DeferredWeights(W=w) if deferred_on else None
            s = tape.start(s0) if deferred_on else s0
            for _ in range(steps):
                s = torch.tanh(tape.linear("W", s) if deferred_on else torch.nn.functional.linear(s, w))
            loss = s.float().square().sum()
        return loss, torch.autograd.grad(loss, [w, s0])

    (fast_loss, fast), (slow_loss, slow) = run(True), run(False)
    assert fast_loss.item() == pytest.approx(slow_loss.item(), rel=1e-6)
    for name, a, e in zip(["W", "s0"], fast, slow):
        assert a.dtype == torch.float32, name
        torch.testing.assert_close(a, e, rtol=3e-2, atol=3e-2 * e.abs().max().item(), msg=name)


def test_bf16_training_gradient_is_the_float32_gradient_to_bf16_precision():
    """The whole bf16 training loss (autocast, deferred gradients, fused loss) against float32 on the
    same model and batch: the loss within 1%, and every parameter's gradient points the same way
    (cosine > 0.98) with the same size (within 5%)."""
    model = small_model("rnnsearch", vocab=40).train()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.3)  # moderate activations, as in training
    g = torch.Generator(torch.get_default_device()).manual_seed(3)
    src = torch.randint(4, 40, (6, 9), generator=g)
    y = torch.randint(4, 44, (6, 8), generator=g)
    y_in, y_out = torch.cat([torch.full((6, 1), 2), y[:, :-1]], 1), y
    params = list(model.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low, _ = model.loss(src, src != PAD, y_in, y_out)
    low_grads = torch.autograd.grad(low, params, allow_unused=True)
    high, _ = model.loss(src, src != PAD, y_in, y_out)
    high_grads = torch.autograd.grad(high, params, allow_unused=True)
    assert low.item() == pytest.approx(high.item(), rel=1e-2)
    for (name, _), a, e in zip(model.named_parameters(), low_grads, high_grads):
        if e is None or e.abs().max() == 0:
            continue
        assert a.dtype == torch.float32, name
        cos = torch.nn.functional.cosine_similarity(a.flatten(), e.flatten(), dim=0).item()
        assert cos > 0.98, (name, cos)
        assert a.norm().item() == pytest.approx(e.norm().item(), rel=5e-2), name


def test_fused_encoder_loop_under_bf16_autocast_is_torch_grus_float32_result_to_bf16_precision():
    """The fused loop under bf16 autocast (its products in bfloat16, the state in float32): states
    within bf16 precision of torch.nn.GRU's in float32, zeros on padding, float32 gradients that
    point the same way (cosine > 0.99)."""
    from rnnsearch.model.encoder import Encoder
    torch.manual_seed(5)
    enc = Encoder(11, 16, 24, bidirectional=True, cell="fused", dropout=0.0)
    mask = torch.arange(9)[None] < torch.tensor([9, 4, 7, 1])[:, None]  # (B, S)
    x = torch.randn(4, 9, 16, requires_grad=True)
    probe = torch.randn(4, 9, 24)
    params = [x, *enc.rnn.parameters()]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = enc.fused_loop(x, mask)
    high = enc.fused_packed(x, mask)
    grads = [torch.autograd.grad(sum((s.float() * probe * (k + 1)).sum() for k, s in enumerate(states)), params)
             for states in (low, high)]
    for a, e in zip(low, high):
        assert a.dtype == torch.float32 and not a[~mask].any()
        torch.testing.assert_close(a, e, rtol=0, atol=3e-2)
    for a, e in zip(*grads):
        assert a.dtype == torch.float32
        assert torch.nn.functional.cosine_similarity(a.flatten(), e.flatten(), dim=0).item() > 0.99
