"""``rnnsearch export CKPT --format onnx --out DIR``: the model as two ONNX graphs traced from its own
modules by PyTorch's ONNX exporter (``torch.onnx.export``), and the vocabularies and config beside them.

- ``encoder.onnx``: src (B, S) int64, mask (B, S) bool -> what :meth:`Seq2Seq.encode` and
  ``init_state`` give: for RNNsearch U_a h_j (``proj_keys``), [C; C_o] h_j (``context_values``) and
  s_0; for RNNencdec s_0, [C_z; C_r; C] c (``context_gates``) and C_o c (``context_readout``).
- ``decoder_step.onnx``: :meth:`Seq2Seq.step`: y_{i-1} and s_{i-1} (N rows) and what the encoder gave
  (B rows, one per sentence; N = B K, each sentence's K hypotheses together) -> log p(y_i | ...)
  (N, V), s_i and alpha_i.
- ``model.json``: the config, the vocabularies (SentencePiece models base64-encoded) and the graphs'
  signature.

The equations are the model's (model/), traced once with two sentences of different lengths and two
hypotheses each, so that every shape the search varies (B, K, S) stays a dimension of the graph.
What tracing needs from the model, it finds there: the paper's encoder GRU runs as a TorchScript loop
when traced (:meth:`PaperGRU.scan`; ``torch.nn.GRU`` exports as ONNX's GRU), the beam's grouped
attention in one chunk, the log-softmax out of place. The products are exported as MatMul (+ Add), not
Gemm, because onnxruntime's dynamic int8 quantiser (decoding/backends.py) reads MatMul.
tests/unit/test_export.py checks outputs, and the beam search over them, against PyTorch's.

Format version 3 (2026-11-28: traced graphs); an export of another version is refused with the
command that writes this one (decoding/backends.py: read_export).
"""
from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import sys
import warnings
from pathlib import Path

import onnx
import torch
from torch import nn
from torch.nn import functional as F

from rnnsearch.model.decoder import DecoderState, EncoderOutput

OPSET = 18
FORMAT = "rnnsearch-onnx"
VERSION = 3  # 3: traced from the modules (2: built op by op; 1: the step read h_j per hypothesis)


class _MatMulLinear(nn.Linear):
    """nn.Linear exported as MatMul + Add rather than Gemm (for onnxruntime's int8 quantiser), as
    model/packed.py's ``linear`` is when traced."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight) if self.bias is None else F.linear(x, self.weight) + self.bias


def _for_export(model) -> nn.Module:
    """A float32 copy of the model in eval mode whose nn.Linear products export as MatMul."""
    model = copy.deepcopy(model).float().eval()
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = _MatMulLinear
    return model


class EncoderGraph(nn.Module):
    """src (B, S), mask (B, S) -> the encoder's outputs as the step graph reads them, and s_0."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src: torch.Tensor, mask: torch.Tensor):
        enc = self.model.encode(src, mask)
        s0 = self.model.init_state(enc).hidden  # (B, D)
        if self.model.arch == "rnnsearch":
            return enc.proj_keys, enc.context_values, s0  # (B, S, A), (B, S, 3D + 2M), (B, D)
        return s0, enc.context_gates, enc.context_readout  # (B, D), (B, 3D), (B, 2M)


class StepGraph(nn.Module):
    """One step of :meth:`Seq2Seq.step` over the encoder's outputs of :class:`EncoderGraph`."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, y_prev: torch.Tensor, s_prev: torch.Tensor, first: torch.Tensor, second: torch.Tensor,
                mask: torch.Tensor | None = None):
        weights = self.model.decoder.step_weights()  # folded into the graph's constants
        if self.model.arch == "rnnsearch":  # first, second: U_a h_j (B, S, A), [C; C_o] h_j (B, S, 3D + 2M)
            enc = EncoderOutput(None, mask, first, None, None, weights=weights, context_values=second)
        else:  # first, second: [C_z; C_r; C] c (B, 3D), C_o c (B, 2M)
            enc = EncoderOutput(None, None, None, None, None, first, second, weights)
        logp, state, alpha = self.model.step(y_prev, DecoderState(s_prev), enc)  # (N, V), (N, D), (N, S)
        return (logp, state.hidden) if alpha is None else (logp, state.hidden, alpha)


def _signature(model) -> dict:
    """Each graph's inputs and outputs with their dynamic dimensions."""
    if model.arch == "rnnsearch":
        encoder_out = {"proj_keys": ["B", "S"], "context_values": ["B", "S"], "s0": ["B"]}
        step_in = {"y_prev": ["N"], "s_prev": ["N"], "proj_keys": ["B", "S"], "context_values": ["B", "S"],
                   "mask": ["B", "S"]}
        step_out = {"logp": ["N"], "s": ["N"], "alpha": ["N", "S"]}
    else:
        encoder_out = {"s0": ["B"], "context_gates": ["B"], "context_readout": ["B"]}
        step_in = {"y_prev": ["N"], "s_prev": ["N"], "context_gates": ["B"], "context_readout": ["B"]}
        step_out = {"logp": ["N"], "s": ["N"]}
    return {"encoder": ({"src": ["B", "S"], "mask": ["B", "S"]}, encoder_out), "decoder_step": (step_in, step_out)}


@contextlib.contextmanager
def _quiet():
    """The exporter's notes, which are about tracing, not about the graph: the trace's on Python values
    (Python warnings) and its C++ shape-inference notes on packed sequences (written to file
    descriptor 2). Errors still raise."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _write(module: nn.Module, args: tuple, path: Path, inputs: dict, outputs: dict) -> None:
    axes = {name: dict(enumerate(dims)) for name, dims in {**inputs, **outputs}.items()}
    with _quiet():
        torch.onnx.export(module, args, str(path), dynamo=False, opset_version=OPSET, input_names=list(inputs),
                          output_names=list(outputs), dynamic_axes=axes)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)


def export(translator, out_dir: str | Path) -> Path:
    """Write encoder.onnx, decoder_step.onnx and model.json for ``translator``'s model to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("decoder_step.int8.onnx", "decoder_step.pre.onnx"):  # an earlier model's int8 decoder: it decoded
        (out / stale).unlink(missing_ok=True)                         # this one's encodings into garbage
    model = _for_export(translator.model)
    signature = _signature(model)
    src = torch.tensor([[4, 5, 4], [5, 4, 0]])  # two sentences, the second padded: (B, S) = (2, 3)
    mask = src != 0
    rows = torch.tensor([0, 0, 1, 1])  # K = 2 hypotheses per sentence: N = 4
    with torch.no_grad():
        encoded = EncoderGraph(model)(src, mask)
        _write(EncoderGraph(model), (src, mask), out / "encoder.onnx", *signature["encoder"])
        if model.arch == "rnnsearch":
            keys, values, s0 = encoded
            step_args = (torch.tensor([2, 4, 5, 4]), s0.index_select(0, rows), keys, values, mask)
        else:
            s0, gates, readout = encoded
            step_args = (torch.tensor([2, 4, 5, 4]), s0.index_select(0, rows), gates, readout)
        _write(StepGraph(model), step_args, out / "decoder_step.onnx", *signature["decoder_step"])
    codecs = {}
    for side, codec in (("src", translator.src_codec), ("tgt", translator.tgt_codec)):
        state = dict(codec.to_state())
        if state.get("sp_proto") is not None:
            state["sp_proto"] = base64.b64encode(state["sp_proto"]).decode("ascii")
        codecs[side] = state
    config = {**translator.config.model_dump(), "name": translator.name}  # a release's name, not its recipe's
    meta = {"format": FORMAT, "version": VERSION, "config": config, "codecs": codecs,
            "train_state": translator.train_state, "parameters": sum(p.numel() for p in model.parameters()),
            "replace_unk": translator.replace_unk, "lexicon": translator.lexicon}  # the translator's <unk> replacement
    (out / "model.json").write_text(json.dumps(meta), encoding="utf-8")
    return out
