"""What the search runs on besides the PyTorch model: the exported ONNX graphs under onnxruntime
(optionally int8), the PyTorch model in int8 (fbgemm dynamic int8, a scale per row) or with bf16 weights,
and an ensemble of models whose probabilities are averaged at every step.

Each offers what decoding/search.py calls: ``encode(src, mask)``, ``init_state(enc)``,
``step(y, state, enc) -> (log p, state, alpha)``, with ``select(rows)`` on what they return, so
that greedy and beam search are the same functions whatever runs under them. ``enc`` has one row
per sentence; the state may have K rows per sentence (beam search's hypotheses, together).
"""
from __future__ import annotations

import base64
import copy
import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from rnnsearch.data.tokenize import TextCodec
from rnnsearch.errors import UsageError
from rnnsearch.model.decoder import DecoderState
from rnnsearch.model.packed import bf16_steps, float32_view, int8_steps, packs_float32
from rnnsearch.cpu import EMULATED_DECODING, emulated_warning, packed_bf16


@dataclass
class Rows:
    """Per-row tensors (any names) with ``select(rows)``, as EncoderOutput has."""
    tensors: dict

    def select(self, rows: torch.Tensor) -> Rows:
        return Rows({k: v.index_select(0, rows) for k, v in self.tensors.items()})


class OnnxModel:
    """encoder.onnx and decoder_step.onnx of ``rnnsearch export`` under onnxruntime (CPU)."""

    def __init__(self, directory: str | Path, threads: int = 0, int8: bool = False):
        import onnxruntime as ort
        directory = Path(directory)
        self.meta = read_export(directory)
        self.arch = self.meta["config"]["model"]["arch"]
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # no spinning: between two steps the search's PyTorch ops need both cores, and a spinning
        # onnxruntime worker took one (1.3-1.6x slower beam search on 2 cores, BENCHMARKS.md)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        step = directory / "decoder_step.onnx"
        if int8:
            step = quantized_step(directory)
        providers = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(str(directory / "encoder.onnx"), options, providers=providers)
        self.decoder = ort.InferenceSession(str(step), options, providers=providers)
        self.step_inputs = [i.name for i in self.decoder.get_inputs()]
        self.training = False

    # the parts of nn.Module the Translator uses
    def to(self, device):
        if torch.device(device).type != "cpu":
            raise UsageError("the onnx backend runs on the CPU (onnxruntime's CPU provider)")
        return self

    def eval(self):
        return self

    def train(self, mode: bool = True):
        return self

    def parameters(self):
        yield torch.empty(self.meta["parameters"])

    def encode(self, src: torch.Tensor, mask: torch.Tensor) -> Rows:
        names = [o.name for o in self.encoder.get_outputs()]
        values = self.encoder.run(names, {"src": src.numpy(), "mask": mask.numpy()})
        out = {n: torch.from_numpy(v) for n, v in zip(names, values)}
        if self.arch == "rnnsearch":
            out["mask"] = mask
        return Rows(out)

    def init_state(self, enc: Rows) -> DecoderState:
        return DecoderState(enc.tensors["s0"])

    def step(self, y_prev: torch.Tensor, state: DecoderState, enc: Rows):
        feeds = {"y_prev": y_prev.numpy(), "s_prev": state.hidden.numpy()}
        feeds.update({k: enc.tensors[k].numpy() for k in self.step_inputs if k not in feeds})
        outputs = self.decoder.run(None, feeds)
        alpha = torch.from_numpy(outputs[2]) if len(outputs) > 2 else None
        return torch.from_numpy(outputs[0]), DecoderState(torch.from_numpy(outputs[1])), alpha

def read_export(directory: Path) -> dict:
    """model.json of an export directory, with a clear error when it is not one."""
    from rnnsearch.decoding.export import FORMAT, VERSION
    path = directory / "model.json"
    if not path.is_file():
        raise UsageError(f"{directory}: not an `rnnsearch export` directory (no model.json)")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise UsageError(f"{path}: not an rnnsearch ONNX export")
    if meta.get("version", 1) != VERSION:
        raise UsageError(f"{directory}: an ONNX export of format version {meta.get('version', 1)}, which this "
                         f"rnnsearch does not read (it reads version {VERSION}): export the checkpoint again with "
                         "`rnnsearch export CKPT --format onnx --out DIR`")
    return meta


def export_codecs(meta: dict) -> tuple[TextCodec, TextCodec]:
    codecs = []
    for side in ("src", "tgt"):
        state = dict(meta["codecs"][side])
        if state.get("sp_proto") is not None:
            state["sp_proto"] = base64.b64decode(state["sp_proto"])
        codecs.append(TextCodec.from_state(state))
    return codecs[0], codecs[1]


def quantized_step(directory: Path) -> Path:
    """decoder_step.int8.onnx beside decoder_step.onnx (made once for each export): onnxruntime's dynamic int8
    quantisation of the step's matrix products (weights int8, activations quantised per call)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process
    out, step = directory / "decoder_step.int8.onnx", directory / "decoder_step.onnx"
    if not out.exists() or out.stat().st_mtime < step.stat().st_mtime:  # made again for a step exported since
        prepared = directory / "decoder_step.pre.onnx"  # onnxruntime's pre-processing: shapes, graph optimisation
        quant_pre_process(str(directory / "decoder_step.onnx"), str(prepared), skip_symbolic_shape=True)
        try:
            quantize_dynamic(str(prepared), str(out), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
        finally:
            prepared.unlink(missing_ok=True)
    return out


def torch_int8(model):
    """A copy of the model with every product of the decoder's step in int8, a scale per output row
    (model/packed.py's int8_steps: fbgemm's dynamic int8 product, as torch.ao's). torch warns on
    every quantised tensor it makes that quantized tensors are deprecated (PyTorch issue 184982);
    that notice is for PyTorch's own API and is not printed to our users (the int8 tests fail once
    it is gone)."""
    model = copy.deepcopy(model).float().eval()
    int8_steps(model.decoder)
    return model


def bf16_model(model, pack: bool = True):
    """The model with bfloat16 weights, for decoding: every product and the recurrences in bf16;
    the log-probabilities (Seq2Seq.step) and the search's scores stay float32. Faster than
    autocast here, which casts every weight again at every step (1.15-1.25x float32 against ~1.0x
    for autocast on the bench model, beam 5, 2 threads; BLEU within 0.05). With ``pack`` (and
    oneDNN's packed linear in this PyTorch) the decoder's step weights are reordered for oneDNN
    once rather than at every product (model/packed.py); the products are the same bf16 products.
    On a CPU without native bf16 (rnnsearch.cpu) it warns once with the measured cost and does not pack."""
    message = emulated_warning("bf16 decoding (--dtype bf16)", EMULATED_DECODING)
    if message:
        warnings.warn(message, stacklevel=2)
    model = model.to(torch.bfloat16)
    if pack and packed_bf16():
        bf16_steps(model.decoder)
    return model


class Float32View:
    """What a float32 search on a CPU runs on: model/packed.py's ``float32_view`` of the
    translator's model (its step weights reordered for oneDNN once); any other model as it is.
    ``keep``: the weights are the translator's own (Translator.from_checkpoint), so the view is made
    once and again only if a parameter's version moves (load_state_dict, an in-place update);
    else (a model its caller trains: validation) a view per call, as a fused optimiser's step
    (torch.optim.Adam(fused=True)) changes the weights without moving their versions."""

    def __init__(self, keep: bool = False):
        self.keep = keep
        self._key, self._view = None, None

    def of(self, model):
        """``model``'s view; an Ensemble's: an Ensemble of its members' views (those that have one)."""
        members = model.models if isinstance(model, Ensemble) else [model]
        if not any(packs_float32(m) for m in members):
            return model
        if self.keep:
            key = tuple((id(p), p._version) for p in model.parameters())
            if key == self._key:
                return self._view
        view = (Ensemble([float32_view(m) if packs_float32(m) else m for m in members])
                if isinstance(model, Ensemble) else float32_view(model))
        if self.keep:
            self._key, self._view = key, view
        return view


@dataclass
class Members:
    """One value per ensemble member, selected together."""
    items: list

    def select(self, rows):
        return Members([x.select(rows) for x in self.items])


class Ensemble:
    """Several models searched as one: p(y_i | ...) is the mean of the members' probabilities
    (log of the mean of exp log p), every member keeping its own state; alpha is the mean of the
    members' alignments (None when no member has attention)."""

    def __init__(self, models: list):
        self.models = models
        self.arch = "rnnsearch" if any(getattr(m, "arch", "") == "rnnsearch" for m in models) else "rnnencdec"
        self.training = False

    def to(self, device):
        self.models = [m.to(device) for m in self.models]
        return self

    def eval(self):
        return self

    def train(self, mode: bool = True):
        for m in self.models:
            m.train(mode)
        return self

    def parameters(self):
        for m in self.models:
            yield from m.parameters()

    def encode(self, src, mask):
        return Members([m.encode(src, mask) for m in self.models])

    def init_state(self, enc: Members):
        return Members([m.init_state(e) for m, e in zip(self.models, enc.items)])

    def step(self, y_prev, state: Members, enc: Members):
        outs = [m.step(y_prev, s, e) for m, s, e in zip(self.models, state.items, enc.items)]
        logps = torch.stack([o[0].float() for o in outs])  # (members, N, V)
        logp = torch.logsumexp(logps, dim=0) - math.log(len(outs))
        alphas = [o[2] for o in outs if o[2] is not None]
        alpha = torch.stack(alphas).mean(0) if alphas else None
        return logp, Members([o[1] for o in outs]), alpha


def check_same_vocabularies(first, other, name: str) -> None:
    """Members of an ensemble must read and write the same units."""
    for side in ("src_codec", "tgt_codec"):
        a, b = getattr(first, side), getattr(other, side)
        if a.vocab.itos != b.vocab.itos or a.sp_proto != b.sp_proto or a.tokenizer != b.tokenizer:
            raise UsageError(f"--ensemble {name}: its {side.split('_')[0]} vocabulary differs from the first model's; "
                             "an ensemble needs the same vocabularies")

