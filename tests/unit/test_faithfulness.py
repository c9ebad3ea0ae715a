"""The model's step re-computed directly from SPEC.md's equations with the model's own weights."""
import torch

from conftest import small_model
from rnnsearch.data.batching import source_batch



def _weights(layer):
    return layer.weight.detach()


def _spec_step(model, y_prev, s_prev, annotations, mask, context=None):
    """One decoder step written out from SPEC.md: returns (p(y_i), s_i, alpha_i or None)."""
    d = model.decoder
    D = d.hidden
    E = d.embed.weight[y_prev]                                   # E y_{i-1}
    W_z, W_r, W = _weights(d.W)[:D], _weights(d.W)[D:2 * D], _weights(d.W)[2 * D:]
    b_z, b_r, b = d.W.bias[:D], d.W.bias[D:2 * D], d.W.bias[2 * D:]
    U_z, U_r = _weights(d.U_zr)[:D], _weights(d.U_zr)[D:]
    U = _weights(d.U)
    C_z, C_r, C = _weights(d.C)[:D], _weights(d.C)[D:2 * D], _weights(d.C)[2 * D:]
    alpha = None
    if context is None:                                          # RNNsearch: c_i from the alignment model
        a = d.attention
        e = torch.stack([
            torch.stack([_weights(a.v_a)[0] @ torch.tanh(_weights(a.W_a) @ s_prev[b_] + _weights(a.U_a) @ h_j)
                         for h_j in annotations[b_]]) for b_ in range(len(y_prev))])
        e = e.masked_fill(~mask, float("-inf"))                  # only real source positions
        alpha = torch.exp(e) / torch.exp(e).sum(1, keepdim=True)
        c = (alpha[:, :, None] * annotations).sum(1)             # c_i = sum_j alpha_ij h_j
    else:
        c = context
    z = torch.sigmoid(E @ W_z.T + b_z + s_prev @ U_z.T + c @ C_z.T)
    r = torch.sigmoid(E @ W_r.T + b_r + s_prev @ U_r.T + c @ C_r.T)
    s_tilde = torch.tanh(E @ W.T + b + (r * s_prev) @ U.T + c @ C.T)
    s = (1 - z) * s_prev + z * s_tilde
    s_out = s if not d.readout_previous else s_prev
    t_tilde = s_out @ _weights(d.U_o).T + d.U_o.bias + E @ _weights(d.V_o).T + c @ _weights(d.C_o).T
    t = torch.maximum(t_tilde[:, 0::2], t_tilde[:, 1::2])       # t_k = max(t~_{2k-1}, t~_{2k})
    logits = t @ _weights(d.W_o).T + d.W_o.bias
    return torch.softmax(logits, 1), s, alpha


def _paper_gru(layer, x, reverse=False):
    """SPEC.md's GRU over one sentence (no padding): z, r, h~ with U (r * h)."""
    H = layer.hidden
    h = x.new_zeros(H)
    out = [None] * len(x)
    order = range(len(x) - 1, -1, -1) if reverse else range(len(x))
    Wx = x @ _weights(layer.W).T + layer.W.bias
    for j in order:
        z = torch.sigmoid(Wx[j, :H] + _weights(layer.U_zr)[:H] @ h)
        r = torch.sigmoid(Wx[j, H:2 * H] + _weights(layer.U_zr)[H:] @ h)
        h = (1 - z) * h + z * torch.tanh(Wx[j, 2 * H:] + _weights(layer.U) @ (r * h))
        out[j] = h
    return torch.stack(out)


def _sources():
    return source_batch([[5, 6, 7, 8, 9], [10, 11]])


def test_rnnsearch_step_equals_spec():
    model = small_model("rnnsearch").double()
    src, mask = _sources()
    y_prev = torch.tensor([12, 4])
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        # s_0 = tanh(W_s backward h_1): the backward GRU's state at the first word
        for b in range(2):
            n = int(mask[b].sum())
            x = model.encoder.embed.weight[src[b, :n]]
            fwd, bwd = _paper_gru(model.encoder.fwd, x), _paper_gru(model.encoder.bwd, x, reverse=True)
            torch.testing.assert_close(enc.annotations[b, :n], torch.cat([fwd, bwd], 1))
            assert (enc.annotations[b, n:] == 0).all()
            s0 = torch.tanh(_weights(model.decoder.W_s) @ bwd[0] + model.decoder.W_s.bias)
            torch.testing.assert_close(state.hidden[b], s0)
        logp, new_state, alpha = model.step(y_prev, state, enc)
        p, s, alpha_spec = _spec_step(model, y_prev, state.hidden, enc.annotations, mask)
    torch.testing.assert_close(logp.exp(), p)
    torch.testing.assert_close(new_state.hidden, s)
    torch.testing.assert_close(alpha, alpha_spec)


def test_rnnsearch_previous_state_readout_equals_spec():
    model = small_model("rnnsearch", readout_state="previous").double()
    src, mask = _sources()
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        logp, _, _ = model.step(torch.tensor([7, 9]), state, enc)
        p, _, _ = _spec_step(model, torch.tensor([7, 9]), state.hidden, enc.annotations, mask)
    torch.testing.assert_close(logp.exp(), p)


def test_rnnencdec_step_equals_spec():
    model = small_model("rnnencdec").double()
    src, mask = _sources()
    y_prev = torch.tensor([3, 14])
    with torch.no_grad():
        enc = model.encode(src, mask)
        state = model.init_state(enc)
        for b in range(2):
            n = int(mask[b].sum())
            h = _paper_gru(model.encoder.fwd, model.encoder.embed.weight[src[b, :n]])
            c = torch.tanh(_weights(model.V) @ h[-1] + model.V.bias)        # c = tanh(V h_Tx)
            torch.testing.assert_close(enc.context[b], c)
            s0 = torch.tanh(_weights(model.decoder.W_s) @ c + model.decoder.W_s.bias)  # s_0 = tanh(V' c)
            torch.testing.assert_close(state.hidden[b], s0)
        logp, new_state, alpha = model.step(y_prev, state, enc)
        p, s, _ = _spec_step(model, y_prev, state.hidden, None, mask, context=enc.context)
    assert alpha is None
    torch.testing.assert_close(logp.exp(), p)
    torch.testing.assert_close(new_state.hidden, s)


def test_teacher_forcing_equals_stepwise_decoding():
    for arch in ("rnnsearch", "rnnencdec"):
        model = small_model(arch).double()
        src, mask = _sources()
        tgt_in = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]])
        with torch.no_grad():
            logits, attn = model(src, mask, tgt_in)
            enc = model.encode(src, mask)
            state = model.init_state(enc)
            for i in range(tgt_in.size(1)):
                logp, state, alpha = model.step(tgt_in[:, i], state, enc)
                torch.testing.assert_close(logp, torch.log_softmax(logits[:, i], -1))
                if alpha is not None:
                    torch.testing.assert_close(alpha, attn[:, i])


def test_paper_initialisation():
    from rnnsearch.config import from_dict
    from rnnsearch.model import build_model
    cfg = from_dict({"model": {"emb": 30, "enc_hidden": 40, "dec_hidden": 40, "att": 40, "maxout": 20}})
    model = build_model(cfg.model, 500, 600, seed=0)
    d = model.decoder
    for block in _weights(d.U_zr).split(40):
        torch.testing.assert_close(block @ block.T, torch.eye(40), atol=1e-5, rtol=0)
    assert (_weights(d.attention.v_a) == 0).all()
    assert abs(float(_weights(d.attention.W_a).std()) - 0.001) < 0.0003
    assert abs(float(_weights(d.W_o).std()) - 0.01) < 0.002
    assert all((p == 0).all() for n, p in model.named_parameters() if n.endswith("bias"))
