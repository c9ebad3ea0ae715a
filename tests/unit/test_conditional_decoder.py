"""``model.decoder_cell: conditional`` (model/conditional.py): its step re-computed from the cGRU's
equations with the model's own weights; teacher forcing equal to decoding step by step; the
gradient of the training loss equal to autograd's through the steps; the decoding back ends
(float32 through oneDNN, int8) agreeing with float32; what it cannot do refused in one line."""
import pytest
import torch

from conftest import small_model
from rnnsearch.data.batching import source_batch
from rnnsearch.model.conditional import ConditionalDecoder


def _w(layer):
    return layer.weight.detach()


def _gru(x3, h, u_zr, u):
    """GRU from its input's three parts x3 = [x_z; x_r; x] (B, 3D), state h (B, D)."""
    D = h.shape[1]
    z = torch.sigmoid(x3[:, :D] + h @ u_zr[:D].T)
    r = torch.sigmoid(x3[:, D:2 * D] + h @ u_zr[D:].T)
    return (1 - z) * h + z * torch.tanh(x3[:, 2 * D:] + (r * h) @ u.T)


def _spec_step(model, y_prev, s_prev, annotations, mask):
    """s'_i = GRU_1(s_{i-1}, E y_{i-1}); alpha_i, c_i from s'_i; s_i = GRU_2(s'_i, c_i); p(y_i)."""
    d, a = model.decoder, model.decoder.attention
    E = d.embed.weight[y_prev]
    s_mid = _gru(E @ _w(d.W).T + d.W.bias, s_prev, _w(d.U_zr), _w(d.U))
    e = torch.stack([torch.stack([_w(a.v_a)[0] @ torch.tanh(_w(a.W_a) @ s_mid[b] + _w(a.U_a) @ h_j)
                                  for h_j in annotations[b]]) for b in range(len(y_prev))])
    alpha = torch.softmax(e.masked_fill(~mask, float("-inf")), 1)
    c = (alpha[:, :, None] * annotations).sum(1)
    s = _gru(c @ _w(d.C).T + d.bias2, s_mid, _w(d.U2_zr), _w(d.U2))
    t_tilde = s @ _w(d.U_o).T + d.U_o.bias + E @ _w(d.V_o).T + c @ _w(d.C_o).T
    t = torch.maximum(t_tilde[:, 0::2], t_tilde[:, 1::2])
    return torch.softmax(t @ _w(d.W_o).T + d.W_o.bias, 1), s, alpha


def _model():
    return small_model("rnnsearch", decoder_cell="conditional").double()


def test_the_conditional_step_equals_its_equations():
    model = _model()
    assert isinstance(model.decoder, ConditionalDecoder)
    src, mask = source_batch([[5, 6, 7, 8, 9], [10, 11]])
    y_prev = torch.tensor([12, 4])
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        logp, new_state, alpha = model.step(y_prev, state, enc)
        p, s, alpha_spec = _spec_step(model, y_prev, state.hidden, enc.annotations, mask)
    torch.testing.assert_close(logp.exp(), p)
    torch.testing.assert_close(new_state.hidden, s)
    torch.testing.assert_close(alpha, alpha_spec)


def test_teacher_forcing_equals_decoding_step_by_step_and_its_gradient_autograds():
    model = _model()
    src, mask = source_batch([[5, 6, 7, 8, 9], [10, 11]])
    tgt_in, tgt_out = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]]), torch.tensor([[5, 6, 7, 3], [8, 3, 0, 0]])
    with torch.no_grad():
        logits, attn = model(src, mask, tgt_in)
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        for i in range(tgt_in.size(1)):
            logp, state, alpha = model.step(tgt_in[:, i], state, enc)
            torch.testing.assert_close(logp, torch.log_softmax(logits[:, i], -1))
            torch.testing.assert_close(alpha, attn[:, i])
    model.train()
    model.set_deferred(True)  # does not apply: the loop is autograd's
    nll, n = model.loss(src, mask, tgt_in, tgt_out)
    nll.backward()
    fast = {k: p.grad.clone() for k, p in model.named_parameters()}
    model.zero_grad()
    enc = model.encode(src, mask)
    state, total = model.init_state(enc), 0.0
    for i in range(tgt_in.size(1)):
        logp, state, _ = model.step(tgt_in[:, i], state, enc)
        keep = tgt_out[:, i] != 0
        total = total - logp[keep].gather(1, tgt_out[keep, i, None]).sum()
    total.backward()
    assert n == 6 and torch.isclose(nll, total)
    for k, p in model.named_parameters():
        torch.testing.assert_close(fast[k], p.grad, msg=k)
    assert fast["decoder.U2_zr.weight"].abs().sum() > 0 and fast["decoder.bias2"].abs().sum() > 0


def test_the_decoding_back_ends_agree_with_float32():
    from rnnsearch.model.packed import float32_view, int8_steps, packs_float32
    model = small_model("rnnsearch", decoder_cell="conditional")
    src, mask = source_batch([[5, 6, 7, 8, 9], [10, 11]])
    y_prev = torch.tensor([12, 4])
    with torch.no_grad():
        enc = model.encode(src, mask)
        expected, _, _ = model.step(y_prev, model.init_state(enc), enc)
        if packs_float32(model):
            view = float32_view(model)
            enc = view.encode(src, mask)
            got, _, _ = view.step(y_prev, view.init_state(enc), enc)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
        int8_steps(model.decoder)
        enc = model.encode(src, mask)
        got, _, _ = model.step(y_prev, model.init_state(enc), enc)
    assert (got.exp() - expected.exp()).abs().max() < 0.05  # int8 products: close, not equal


def test_the_paper_initialisation_makes_its_second_recurrence_orthogonal():
    from rnnsearch.config import from_dict
    from rnnsearch.model.seq2seq import build_model
    cfg = from_dict({"model": {"emb": 8, "enc_hidden": 10, "dec_hidden": 12, "att": 9, "maxout": 7,
                               "decoder_cell": "conditional"}})
    d = build_model(cfg.model, 20, 20, seed=1).decoder
    for block in (d.U2.weight, d.U2_zr.weight[:12], d.U2_zr.weight[12:]):
        torch.testing.assert_close(block @ block.T, torch.eye(12), atol=1e-5, rtol=0)
    assert (d.bias2 == 0).all()


def test_what_it_cannot_do_is_refused():
    with pytest.raises(ValueError, match="needs attention"):
        small_model("rnnencdec", decoder_cell="conditional")
    with pytest.raises(ValueError, match="readout_state=current"):
        small_model("rnnsearch", decoder_cell="conditional", readout_state="previous")
    model = _model()
    src, mask = source_batch([[5, 6, 7]])
    tgt = torch.tensor([[2, 5, 6]])
    with pytest.raises(ValueError, match="s_\\{i-1\\} as the attention's query"):
        model.alignment_posterior(src, mask, tgt, tgt)


@pytest.mark.parametrize("cell", ["paper", "conditional"])
def test_a_tanh_readout_and_a_mean_initial_state_are_their_equations(cell):
    """``model.readout=tanh``: t_i = tanh(U_o s_i + V_o E y_{i-1} + C_o c_i) of size M, no maxout;
    ``model.init_state=mean``: s_0 = tanh(W_s mean_j h_j) over the real source positions; teacher
    forcing still equals decoding step by step."""
    model = small_model("rnnsearch", decoder_cell=cell, readout="tanh", init_state="mean").double()
    d = model.decoder
    assert d.U_o.out_features == d.maxout == d.W_o.in_features and d.W_s.in_features == 2 * model.encoder.fwd.hidden
    src, mask = source_batch([[5, 6, 7, 8, 9], [10, 11]])
    tgt_in = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]])
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        for b in range(2):
            mean = enc.annotations[b, :int(mask[b].sum())].mean(0)
            torch.testing.assert_close(state.hidden[b], torch.tanh(_w(d.W_s) @ mean + d.W_s.bias))
        logits, _ = model(src, mask, tgt_in)
        steps = []
        for i in range(tgt_in.size(1)):
            logp, state, alpha = model.step(tgt_in[:, i], state, enc)
            torch.testing.assert_close(logp, torch.log_softmax(logits[:, i], -1))
            steps.append((state.hidden, alpha))
        # the first step's output from its equations, given s_1 and alpha_1 from the model
        s, alpha = steps[0]
        c = (alpha[:, :, None] * enc.annotations).sum(1)
        E = d.embed.weight[tgt_in[:, 0]]
        t = torch.tanh(s @ _w(d.U_o).T + d.U_o.bias + E @ _w(d.V_o).T + c @ _w(d.C_o).T)
        torch.testing.assert_close(torch.log_softmax(t @ _w(d.W_o).T + d.W_o.bias, 1), torch.log_softmax(logits[:, 0], -1))
    with pytest.raises(ValueError, match="init_state=mean reads the annotations"):
        small_model("rnnencdec", init_state="mean")
