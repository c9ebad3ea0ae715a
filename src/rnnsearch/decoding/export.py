"""``rnnsearch export CKPT --format onnx --out DIR``: the model as two ONNX graphs, built op by op
with onnx.helper from the checkpoint's weights, and the vocabularies and config beside them.

- ``encoder.onnx``: src (B, S) int64, mask (B, S) bool -> for RNNsearch U_a h_j, [C; C_o] h_j and
  s_0; for RNNencdec s_0, [C_z; C_r; C] c and C_o c. The GRU recurrences are ONNX Scan loops over
  the source (the backward one scanned in reverse), so any source length runs.
- ``decoder_step.onnx``: one decoding step, y_{i-1} and s_{i-1} (N rows) and what the encoder gave
  (B rows, one per sentence; N = B K, each sentence's K hypotheses together) -> log p(y_i | ...)
  (N, V), s_i and alpha_i: attention, the GRU, the maxout deep output, the softmax.
- ``model.json``: the config, the vocabularies (SentencePiece models base64-encoded) and the graphs'
  signature.

The graphs compute the paper's equations as the PyTorch model does; the attention energies are
written v_a^T tanh(W_a s + U_a h_j), which the PyTorch model computes as 2 v_a^T sigmoid(2u), equal up
to a constant per row that the softmax removes. As in PyTorch decoding, the context's products are
taken once per sentence: [C; C_o] c_i = sum_j alpha_ij [C; C_o] h_j, so a step sums S rows of
3D + 2M instead of multiplying its N rows of c_i by the (3D + 2M, 2H) matrix.
tests/unit/test_export.py checks outputs, and the beam search over them, against PyTorch's.

Format version 2 (2026-11-23); an export of another version is refused with the command that
writes this one (decoding/backends.py: read_export).
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 18
IR_VERSION = 9  # what onnxruntime >= 1.16 reads (onnx's newest default can be ahead of onnxruntime)
FORMAT = "rnnsearch-onnx"
VERSION = 2  # 2: the step reads one encoder row per sentence and [C; C_o] h_j (version 1: h_j per row)


class Graph:
    """Nodes, initializers and unique names for one onnx.GraphProto."""

    def __init__(self, prefix: str = ""):
        self.nodes, self.inits, self._n, self.prefix = [], [], 0, prefix  # names are unique model-wide

    def const(self, name: str, value) -> str:
        array = np.asarray(value)
        array = array.astype(np.float32) if array.dtype.kind == "f" else array.astype(np.int64)
        self.inits.append(onnx.numpy_helper.from_array(array, self.prefix + name))
        return self.prefix + name

    def op(self, kind: str, *inputs: str, outputs: int = 1, **attrs) -> str | list[str]:
        self._n += 1
        names = [f"{self.prefix}{kind.lower()}_{self._n}_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(kind, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else names

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray | None = None, name: str = "w") -> str:
        """x W^T (+ b), W (out, in) stored transposed, (in, out), for MatMul (and int8 quantisers)."""
        self._n += 1
        y = self.op("MatMul", x, self.const(f"{name}_{self._n}_t", weight.T))
        return y if bias is None else self.op("Add", y, self.const(f"{name}_{self._n}_b", bias))

    def split(self, x: str, sizes: list[int], axis: int = -1) -> list[str]:
        return self.op("Split", x, self.const(f"split_{self._n + 1}", sizes), outputs=len(sizes), axis=axis)

    def make(self, name: str, inputs, outputs) -> onnx.GraphProto:
        return helper.make_graph(self.nodes, name, inputs, outputs, self.inits)


def _w(module) -> np.ndarray:
    return module.detach().float().cpu().numpy()


def _gru_scan(g: Graph, xw: str, mask: str, gru, hidden: int, reverse: bool, cell: str) -> tuple[str, str]:
    """One GRU direction as a Scan over time: xw (S, B, 3H) the input side W x_j + b for every j,
    mask (S, B, 1) float. Padding carries the state through and outputs zeros, like the PyTorch
    encoder. Returns the outputs (S, B, H) and the final state (B, H)."""
    tag = "bwd_" if reverse else "fwd_"
    body = Graph(prefix=tag)
    h, x, m = tag + "h_prev", tag + "x_j", tag + "m_j"
    if cell == "paper":  # z, r = sigmoid(W x + U_zr h); h~ = tanh(W x + U (r h)); h' = h + z (h~ - h)
        u_zr, u = gru
        x_zr, x_h = body.split(x, [2 * hidden, hidden])
        z, r = body.split(body.op("Sigmoid", body.op("Add", x_zr, body.linear(h, u_zr, name="u_zr"))), [hidden, hidden])
        h_tilde = body.op("Tanh", body.op("Add", x_h, body.linear(body.op("Mul", r, h), u, name="u")))
        new = body.op("Add", h, body.op("Mul", z, body.op("Sub", h_tilde, h)))
    else:  # torch.nn.GRU: r, z from W x + U h + b; n = tanh(W_n x + b_n + r (U_n h + b_hn)); h' = n + z (h - n)
        w_hh, b_hh = gru
        x_r, x_z, x_n = body.split(x, [hidden] * 3)
        h_r, h_z, h_n = body.split(body.linear(h, w_hh, b_hh, name="w_hh"), [hidden] * 3)
        r = body.op("Sigmoid", body.op("Add", x_r, h_r))
        z = body.op("Sigmoid", body.op("Add", x_z, h_z))
        n = body.op("Tanh", body.op("Add", x_n, body.op("Mul", r, h_n)))
        new = body.op("Add", n, body.op("Mul", z, body.op("Sub", h, n)))
    keep = body.op("Sub", body.const("one", np.ones(1)), m)
    state = body.op("Add", body.op("Mul", m, new), body.op("Mul", keep, h))  # carried through padding
    out = body.op("Mul", state, m)
    body.nodes.append(helper.make_node("Identity", [state], [tag + "h_next"]))
    body.nodes.append(helper.make_node("Identity", [out], [tag + "y_j"]))
    f = TensorProto.FLOAT
    graph = body.make("gru_step", [helper.make_tensor_value_info(h, f, ["B", hidden]),
                                   helper.make_tensor_value_info(x, f, ["B", 3 * hidden]),
                                   helper.make_tensor_value_info(m, f, ["B", 1])],
                      [helper.make_tensor_value_info(tag + "h_next", f, ["B", hidden]),
                       helper.make_tensor_value_info(tag + "y_j", f, ["B", hidden])])
    batch = g.op("Gather", g.op("Shape", mask), g.const(f"one_{g._n + 1}", np.array([1])))
    h0 = g.op("Expand", g.const(f"zeros_{g._n + 1}", np.zeros((1, hidden))), g.op("Concat", batch, g.const(
        f"h_{g._n + 1}", np.array([hidden])), axis=0))
    directions = [1, 1] if reverse else [0, 0]
    final, outputs = g.op("Scan", h0, xw, mask, outputs=2, body=graph, num_scan_inputs=2,
                          scan_input_directions=directions, scan_output_directions=[directions[0]])
    return outputs, final


def _encoder_weights(encoder, direction: str, cell: str):
    """(W, b) of the input side and the recurrent weights of one direction, as the Scan expects."""
    if cell == "paper":
        gru = getattr(encoder, direction)
        return _w(gru.W.weight), _w(gru.W.bias), (_w(gru.U_zr.weight), _w(gru.U.weight))
    suffix = "" if direction == "fwd" else "_reverse"
    rnn = encoder.rnn
    return (_w(getattr(rnn, f"weight_ih_l0{suffix}")), _w(getattr(rnn, f"bias_ih_l0{suffix}")),
            (_w(getattr(rnn, f"weight_hh_l0{suffix}")), _w(getattr(rnn, f"bias_hh_l0{suffix}"))))


def encoder_graph(model) -> onnx.ModelProto:
    """src (B, S) int64, mask (B, S) bool -> RNNsearch: proj_keys U_a h_j (B, S, A), context_values
    [C; C_o] h_j (B, S, 3D + 2M), s0 (B, D); RNNencdec: s0, context_gates (B, 3D), context_readout (B, 2M)."""
    enc, dec, cell = model.encoder, model.decoder, model.encoder.cell
    g, f = Graph(), TensorProto.FLOAT
    x = g.op("Transpose", g.op("Gather", g.const("E_src", _w(enc.embed.weight)), "src"), perm=[1, 0, 2])  # (S, B, E)
    m = g.op("Unsqueeze", g.op("Cast", g.op("Transpose", "mask", perm=[1, 0]), to=f), g.const("axis2", [2]))
    hidden = enc.hidden
    w, b, rec = _encoder_weights(enc, "fwd", cell)
    fwd, last = _gru_scan(g, g.linear(x, w, b, name="W_fwd"), m, rec, hidden, False, cell)  # (S, B, H), (B, H)
    if model.arch == "rnnsearch":
        w, b, rec = _encoder_weights(enc, "bwd", cell)
        bwd, _ = _gru_scan(g, g.linear(x, w, b, name="W_bwd"), m, rec, hidden, True, cell)
        annotations = g.op("Transpose", g.op("Concat", fwd, bwd, axis=2), perm=[1, 0, 2])  # (B, S, 2H)
        first_backward = g.op("Gather", bwd, g.const("zero", np.array(0)), axis=0)  # (B, H)
        s0 = g.op("Tanh", g.linear(first_backward, _w(dec.W_s.weight), _w(dec.W_s.bias), name="W_s"))
        keys = g.linear(annotations, _w(dec.attention.U_a.weight), name="U_a")  # (B, S, A)
        values = g.linear(annotations, np.concatenate([_w(dec.C.weight), _w(dec.C_o.weight)]), name="C")  # (B, S, 3D + 2M)
        outputs = {"proj_keys": (keys, ["B", "S", dec.attention.W_a.out_features]),
                   "context_values": (values, ["B", "S", 3 * dec.hidden + 2 * dec.maxout]), "s0": (s0, ["B", dec.hidden])}
    else:  # c = tanh(V h_Tx), s_0 = tanh(V' c); the state carried through padding is h_Tx
        c = g.op("Tanh", g.linear(last, _w(model.V.weight), _w(model.V.bias), name="V"))
        s0 = g.op("Tanh", g.linear(c, _w(dec.W_s.weight), _w(dec.W_s.bias), name="W_s"))
        gates, readout = g.split(g.linear(c, np.concatenate([_w(dec.C.weight), _w(dec.C_o.weight)]), name="C"),
                                 [3 * dec.hidden, 2 * dec.maxout])
        outputs = {"s0": (s0, ["B", dec.hidden]), "context_gates": (gates, ["B", 3 * dec.hidden]),
                   "context_readout": (readout, ["B", 2 * dec.maxout])}
    for name, (value, _) in outputs.items():
        g.nodes.append(helper.make_node("Identity", [value], [name]))
    graph = g.make("encoder", [helper.make_tensor_value_info("src", TensorProto.INT64, ["B", "S"]),
                               helper.make_tensor_value_info("mask", TensorProto.BOOL, ["B", "S"])],
                   [helper.make_tensor_value_info(n, f, shape) for n, (_, shape) in outputs.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="rnnsearch",
                             ir_version=IR_VERSION)


def _by_sentence(g: Graph, rows: str, per_sentence: str) -> str:
    """rows (N, X) -> (B, K, X), B the first dimension of ``per_sentence``: the step's N = B K rows
    hold each sentence's K hypotheses together (beam search's order; K = 1 for greedy)."""
    shape = g.op("Concat", g.op("Shape", per_sentence, start=0, end=1), g.const(f"minus_one_{g._n + 1}", [-1]),
                 g.op("Shape", rows, start=1), axis=0)
    return g.op("Reshape", rows, shape)


def _rows(g: Graph, x: str, width: str) -> str:
    """(B, K, X) -> (N, X), X the last dimension of ``width``."""
    shape = g.op("Concat", g.const(f"minus_one_{g._n + 1}", [-1]), g.op("Shape", width, start=-1), axis=0)
    return g.op("Reshape", x, shape)


def _attention(g: Graph, att, wa_s: str) -> tuple[str, str]:
    """alpha_i (N, S) and sum_j alpha_ij [C; C_o] h_j (N, 3D + 2M) for W_a s_{i-1} (N, A), each
    query row against its sentence's keys and values (B rows), which are never copied per row."""
    query = g.op("Unsqueeze", _by_sentence(g, wa_s, "proj_keys"), g.const("axis2", [2]))  # (B, K, 1, A)
    keys = g.op("Unsqueeze", "proj_keys", g.const("axis1", [1]))  # (B, 1, S, A)
    hidden = g.op("Tanh", g.op("Add", query, keys))  # (B, K, S, A)
    energies = g.op("Squeeze", g.linear(hidden, _w(att.v_a.weight), name="v_a"), g.const("axis3", [3]))  # (B, K, S)
    energies = g.op("Where", g.op("Unsqueeze", "mask", "axis1"), energies, g.const("minus_inf", np.array(-np.inf)))
    alpha = g.op("Softmax", energies, axis=2)  # (B, K, S)
    values = g.op("MatMul", alpha, "context_values")  # (B, K, 3D + 2M)
    return _rows(g, alpha, "mask"), _rows(g, values, "context_values")  # (N, S), (N, 3D + 2M)


def _per_row(g: Graph, rows: str, per_sentence: str) -> str:
    """rows (N, X) + per_sentence (B, X), each sentence's value added to its K rows -> (N, X)."""
    total = g.op("Add", _by_sentence(g, rows, per_sentence), g.op("Unsqueeze", per_sentence, g.const(
        f"axis_{g._n + 1}", [1])))  # (B, K, X)
    return _rows(g, total, per_sentence)


def decoder_graph(model) -> onnx.ModelProto:
    """One step: y_prev (N,) int64, s_prev (N, D) and the encoder's outputs (B rows, N = B K) ->
    logp (N, V), s (N, D) and, for RNNsearch, alpha (N, S)."""
    dec, g, f = model.decoder, Graph(), TensorProto.FLOAT
    d, m = dec.hidden, dec.maxout
    emb = g.op("Gather", g.const("E_tgt", _w(dec.embed.weight)), "y_prev")  # (N, E)
    x_i, emb_readout = g.split(g.linear(emb, np.concatenate([_w(dec.W.weight), _w(dec.V_o.weight)]),
                                        np.concatenate([_w(dec.W.bias), np.zeros(2 * m)]), name="W"), [3 * d, 2 * m])
    inputs = [helper.make_tensor_value_info("y_prev", TensorProto.INT64, ["N"]),
              helper.make_tensor_value_info("s_prev", f, ["N", d])]
    if dec.attention is not None:
        att = dec.attention
        a = att.W_a.out_features
        wa_s, u_zr = g.split(g.linear("s_prev", np.concatenate([_w(att.W_a.weight), _w(dec.U_zr.weight)]),
                                      name="W_a"), [a, 2 * d])
        alpha, c_projected = _attention(g, att, wa_s)  # (N, S), (N, 3D + 2M)
        cc, c_readout = g.split(c_projected, [3 * d, 2 * m])
        gates = g.op("Add", x_i, cc)  # (N, 3D)
        inputs += [helper.make_tensor_value_info("proj_keys", f, ["B", "S", a]),
                   helper.make_tensor_value_info("context_values", f, ["B", "S", 3 * d + 2 * m]),
                   helper.make_tensor_value_info("mask", TensorProto.BOOL, ["B", "S"])]
    else:
        u_zr = g.linear("s_prev", _w(dec.U_zr.weight), name="U_zr")
        gates, c_readout = _per_row(g, x_i, "context_gates"), None  # (N, 3D)
        inputs += [helper.make_tensor_value_info("context_gates", f, ["B", 3 * d]),
                   helper.make_tensor_value_info("context_readout", f, ["B", 2 * m])]
    gates_zr, gates_h = g.split(gates, [2 * d, d])
    z, r = g.split(g.op("Sigmoid", g.op("Add", gates_zr, u_zr)), [d, d])
    s_tilde = g.op("Tanh", g.op("Add", gates_h, g.linear(g.op("Mul", r, "s_prev"), _w(dec.U.weight), name="U")))
    s = g.op("Add", "s_prev", g.op("Mul", z, g.op("Sub", s_tilde, "s_prev")))  # (1 - z) s_{i-1} + z s~_i
    t_tilde = g.op("Add", g.linear("s_prev" if dec.readout_previous else s, _w(dec.U_o.weight),
                                   _w(dec.U_o.bias), name="U_o"), emb_readout)  # (N, 2M)
    t_tilde = g.op("Add", t_tilde, c_readout) if c_readout else _per_row(g, t_tilde, "context_readout")
    t = g.op("ReduceMax", g.op("Reshape", t_tilde, g.const("pairs", [0, m, 2])), g.const("axis_pair", [2]),
             keepdims=0)  # maxout over (2k-1, 2k): (N, M)
    logp = g.op("LogSoftmax", g.linear(t, _w(dec.W_o.weight), _w(dec.W_o.bias), name="W_o"), axis=1)
    outputs = {"logp": (logp, ["N", dec.W_o.out_features]), "s": (s, ["N", d])}
    if dec.attention is not None:
        outputs["alpha"] = (alpha, ["N", "S"])
    for name, (value, _) in outputs.items():
        g.nodes.append(helper.make_node("Identity", [value], [name]))
    graph = g.make("decoder_step", inputs, [helper.make_tensor_value_info(n, f, s) for n, (_, s) in outputs.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="rnnsearch",
                             ir_version=IR_VERSION)


def export(translator, out_dir: str | Path) -> Path:
    """Write encoder.onnx, decoder_step.onnx and model.json for ``translator``'s model to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = translator.model.float().eval()
    for name, graph in (("encoder.onnx", encoder_graph(model)), ("decoder_step.onnx", decoder_graph(model))):
        onnx.checker.check_model(graph, full_check=True)
        onnx.save(graph, out / name)
    codecs = {}
    for side, codec in (("src", translator.src_codec), ("tgt", translator.tgt_codec)):
        state = dict(codec.to_state())
        if state.get("sp_proto") is not None:
            state["sp_proto"] = base64.b64encode(state["sp_proto"]).decode("ascii")
        codecs[side] = state
    meta = {"format": FORMAT, "version": VERSION, "config": translator.config.model_dump(), "codecs": codecs,
            "train_state": translator.train_state, "parameters": sum(p.numel() for p in model.parameters())}
    (out / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    return out

