"""Weights packed once for decoding: for oneDNN's float32 products (the default CPU search,
:func:`float32_view`) and bfloat16 products (``--dtype bf16``), and for fbgemm's int8 products
(``--quantize int8``, :class:`Int8Linear`).

A product through ``F.linear`` reads its weight matrix in PyTorch's layout at every call (bf16:
oneDNN reorders it each time; float32: MKL's product); on the decoder's step, whose products have
few rows (K per sentence), that costs as much as the product. :class:`PackedLinear` reorders once
into oneDNN's blocked layout (bf16, the bench model's W_o, 8000 x 256, times 150 rows: 0.77 ms per
call unpacked, 0.51 ms packed, on 2 cores with AMX; float32, W_o 30,000 x 256 on one core of an AMD
EPYC: 6.4 ms (MKL) -> 1.5 at 5 rows, 34 -> 24 at 160, benchmarks/gemm_shapes.py). Decoding only: a packed
weight has no gradient, and the module's state_dict is not touched (the packed copy lives beside
it, or in a view of the model). bf16 only where ``rnnsearch.cpu.packed_bf16()``: oneDNN refuses
bf16 weights on a CPU without AVX-512 (BW, VL, DQ); float32 where ``model/gemm.py`` sends products
to oneDNN.
"""
from __future__ import annotations

import copy
import dataclasses
import warnings

import torch
from torch import nn
from torch.nn import functional as F

from rnnsearch.checkpoint import quantize_rows
from rnnsearch.model import gemm

AO_DEPRECATION = r"torch\.quantize_per_tensor.*deprecated"  # the notice torch's quantized tensors print
ROWS_HINT = 256  # the batch size oneDNN plans the packed layout for; any number of rows works
ROW_BUCKET = 64  # rows are padded to a power of two up to this, then to a multiple of it


def padded_rows(rows: int) -> int:
    """The row count a product is computed for. oneDNN compiles one primitive per shape and keeps
    32 (runtime.tune_process); a beam search's row count changes as sentences finish, so without
    buckets every step compiled again (bench model, beam 5, 64 sentences a batch: 1,810 tok/s
    against 2,096 with buckets, and 2,218 with 1,024-entry caches at 900 MiB instead of 576). bf16
    only: float32 products ran faster at their own row counts (the Marian race's model, beam 5, one
    thread, 200 sentences: 524 tok/s against 457 with buckets; W_o at 160 rows 24.5 ms, at 192 28.8)."""
    return 1 << (rows - 1).bit_length() if rows <= ROW_BUCKET else -(-rows // ROW_BUCKET) * ROW_BUCKET


class PackedLinear(nn.Module):
    """y = x W^T + b with W (out, in) reordered for oneDNN once, in ``dtype``: bfloat16 (x is
    rounded to bf16, the attention's c_i comes in float32; y is bf16) or float32. ``weight``: the
    float32 W of an nn.Linear packed so (:meth:`of`), whose rows a shortlist reads; else None."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        self.dtype = dtype
        weight = weight.detach().to(dtype).contiguous()
        self.weight: torch.Tensor | None = None
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight, ROWS_HINT)
        self.bias = None if bias is None else bias.detach().to(dtype).contiguous()

    @classmethod
    def of(cls, linear: nn.Linear, dtype: torch.dtype = torch.bfloat16) -> PackedLinear:
        packed = cls(linear.weight, linear.bias, dtype)
        if dtype == torch.float32:
            packed.weight = linear.weight.detach()  # (out, in), shared with the model
        return packed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, self.in_features).to(self.dtype)  # (rows, in)
        rows = flat.size(0)
        padded = padded_rows(rows) if self.dtype == torch.bfloat16 else rows  # float32: see padded_rows
        if padded != rows:
            flat = torch.cat([flat, flat.new_zeros(padded - rows, self.in_features)])  # (padded, in)
        out = torch.ops.mkldnn._linear_pointwise(flat.contiguous(), self.packed, self.bias, "none", [], "")  # (padded, out)
        return out[:rows].view(*x.shape[:-1], self.out_features)  # (..., out)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"{str(self.dtype).removeprefix('torch.')}")


class Int8Linear(nn.Module):
    """y = x W^T + b with W in int8 (one scale per output row) packed for fbgemm once, for decoding
    with ``--quantize int8``: x is quantised at each call as torch.ao's dynamic Linear quantises it
    (per tensor, reduce_range), y is float32. Every product of the decoder's step (int8_steps);
    :meth:`rows` gives the product over some of W's rows (the output layer under a shortlist)."""

    def __init__(self, q: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None = None):
        super().__init__()
        self.out_features, self.in_features = q.shape
        self.q, self.scales, self.bias = q, scales, bias  # int8 (out, in), float32 (out,): kept for rows()
        with warnings.catch_warnings():  # torch.ao's deprecation notice (decoding/backends.torch_int8)
            warnings.filterwarnings("ignore", message=AO_DEPRECATION, category=UserWarning)
            scales = scales.double()
            weight = torch._make_per_channel_quantized_tensor(q, scales, torch.zeros_like(scales, dtype=torch.long), 0)
            self.packed = torch.ops.quantized.linear_prepack(weight, bias)

    @classmethod
    def quantize(cls, weight: torch.Tensor, bias: torch.Tensor | None = None) -> Int8Linear:
        """W (out, in) rounded to int8 row by row (rnnsearch.checkpoint.quantize_rows, as releases store it)."""
        return cls(*quantize_rows(weight), None if bias is None else bias.detach().float())

    @classmethod
    def of(cls, linear: nn.Linear) -> Int8Linear:
        return cls.quantize(linear.weight, linear.bias)

    def rows(self, ids: torch.Tensor) -> Int8Linear:
        """The product over rows ``ids`` (V',) of W and b: the same int8 rows and scales."""
        return Int8Linear(self.q.index_select(0, ids), self.scales.index_select(0, ids),
                          None if self.bias is None else self.bias.index_select(0, ids))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, self.in_features).float().contiguous()  # (rows, in)
        out = torch.ops.quantized.linear_dynamic(flat, self.packed, True)  # (rows, out)
        return out.view(*x.shape[:-1], self.out_features)  # (..., out)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8"


def linear(x: torch.Tensor, weight: torch.Tensor | PackedLinear | Int8Linear,
           bias: torch.Tensor | None = None) -> torch.Tensor:
    """F.linear, or the product of a :class:`PackedLinear` or :class:`Int8Linear` (which carry their own bias)."""
    if isinstance(weight, (PackedLinear, Int8Linear)):
        if bias is not None:
            raise ValueError("a packed product carries its bias; pass none")
        return weight(x)
    if bias is not None and torch.jit.is_tracing():  # ONNX export: MatMul + Add, not Gemm (decoding/export.py)
        return F.linear(x, weight) + bias
    return F.linear(x, weight, bias)


def _stack(decoder, product) -> None:
    """The decoder's stacked step weights (Decoder.step_weights) as ``product(weight[, bias])`` each."""
    w = decoder.step_weights()
    decoder.packed_steps = dataclasses.replace(w, query=product(w.query), context=product(w.context),
                                               embed=product(w.embed, w.embed_bias), embed_bias=None)


def bf16_steps(decoder) -> None:
    """For decoding with bf16 weights: the decoder's step products with their weights packed for
    oneDNN once, the stacked ones and U, U_o, W_o, W_s and U_a. The attention's element-wise work
    and c_i = sum_j alpha_ij h_j stay float32 (Decoder.prepare keeps h_j and U_a h_j in float32),
    where this CPU is faster than in bf16: 2,435 against 2,283 tok/s, bench model, beam 5. The
    decoder cannot train afterwards."""
    _pack_steps(decoder, torch.bfloat16)


def _pack_steps(decoder, dtype: torch.dtype) -> None:
    _stack(decoder, lambda weight, bias=None: PackedLinear(weight, bias, dtype))
    owners = [(decoder, name) for name in ("U", "U_o", "W_o", "W_s")]
    owners += [(decoder.attention, "U_a")] if decoder.attention is not None else []
    for owner, name in owners:
        if type(getattr(owner, name)) is nn.Linear:  # not one already in int8
            setattr(owner, name, PackedLinear.of(getattr(owner, name), dtype))


def packs_float32(model) -> bool:
    """Whether :func:`float32_view` applies: one float32 Seq2Seq on a CPU, its decoder not packed
    already (int8, bf16), and float32 products going to oneDNN (model/gemm.py; RNNSEARCH_GEMM=mkl: not)."""
    decoder = getattr(model, "decoder", None)
    return (isinstance(model, nn.Module) and decoder is not None and decoder.packed_steps is None
            and type(decoder.W_o) is nn.Linear and gemm.takes(decoder.W_o.weight)
            and hasattr(torch.ops.mkldnn, "_reorder_linear_weight"))


def float32_view(model: nn.Module) -> nn.Module:
    """``model`` as a float32 search on a CPU reads it: the same parameters (shared, not copied),
    in eval mode, its decoder's step products (the stacked ones, U, U_o, W_o, W_s, U_a) through
    oneDNN with their weights reordered once (beam 5, the Marian race's model: 1.23x the tokens/s
    of MKL's products on one thread, 1.29x with 2 workers, benchmarks/README.md). ``model`` itself is not changed: it
    still trains, exports and saves; the view is stale once its parameters change."""
    view = _shallow(model)
    view.decoder = _shallow(model.decoder)
    if view.decoder.attention is not None:
        view.decoder.attention = _shallow(model.decoder.attention)
    _pack_steps(view.decoder, torch.float32)
    for module in (view, view.decoder, view.decoder.attention):
        if module is not None:
            module.training = False  # the copies only: the shared children keep their own mode
    return view


def _shallow(module: nn.Module) -> nn.Module:
    """A copy of ``module`` that shares its parameters, buffers and children, and whose children
    can be replaced without touching ``module``."""
    twin = copy.copy(module)
    twin._modules = dict(module._modules)
    return twin


def int8_steps(decoder) -> None:
    """For decoding with ``--quantize int8``: every product of the decoder's step in int8
    (:class:`Int8Linear`, a scale per row), the stacked ones ([W_a; U_z; U_r], [C; C_o], [W; V_o])
    and U, U_o and W_o. The decoder cannot train afterwards."""
    _stack(decoder, Int8Linear.quantize)
    for name in ("U", "U_o", "W_o"):
        setattr(decoder, name, Int8Linear.of(getattr(decoder, name)))
