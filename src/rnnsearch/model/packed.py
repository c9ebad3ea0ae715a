"""Weights packed once for oneDNN's bfloat16 products, for decoding with ``--dtype bf16``.

A bf16 product through ``F.linear`` reorders its weight matrix into oneDNN's blocked layout at
every call; on the decoder's step that reorder costs as much as the product (the bench model's
W_o, 8000 x 256, times 150 rows: 0.77 ms per call unpacked, 0.51 ms packed, on 2 cores with AMX).
:class:`PackedLinear` reorders once. Decoding only: a packed weight has no gradient, and the
module's float state_dict is not touched (the packed copy lives beside it). Only where
``rnnsearch.cpu.packed_bf16()``: oneDNN refuses bf16 weights on a CPU without AVX-512 (BW, VL, DQ).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

ROWS_HINT = 256  # the batch size oneDNN plans the packed layout for; any number of rows works
ROW_BUCKET = 64  # rows are padded to a power of two up to this, then to a multiple of it


def padded_rows(rows: int) -> int:
    """The row count a product is computed for. oneDNN compiles one primitive per shape and keeps
    32 (runtime.tune_process); a beam search's row count changes as sentences finish, so without
    buckets every step compiled again (bench model, beam 5, 64 sentences a batch: 1,810 tok/s
    against 2,096 with buckets, and 2,218 with 1,024-entry caches at 900 MiB instead of 576)."""
    return 1 << (rows - 1).bit_length() if rows <= ROW_BUCKET else -(-rows // ROW_BUCKET) * ROW_BUCKET


class PackedLinear(nn.Module):
    """y = x W^T + b with W (out, in) in bfloat16, reordered for oneDNN once; x (..., in) is
    rounded to bf16 (the attention's c_i comes in float32), y is bf16."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        weight = weight.detach().to(torch.bfloat16).contiguous()
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight, ROWS_HINT)
        self.bias = None if bias is None else bias.detach().to(torch.bfloat16).contiguous()

    @classmethod
    def of(cls, linear: nn.Linear) -> PackedLinear:
        return cls(linear.weight, linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, self.in_features).to(torch.bfloat16)  # (rows, in)
        rows = flat.size(0)
        padded = padded_rows(rows)
        if padded != rows:
            flat = torch.cat([flat, flat.new_zeros(padded - rows, self.in_features)])  # (padded, in)
        out = torch.ops.mkldnn._linear_pointwise(flat.contiguous(), self.packed, self.bias, "none", [], "")  # (padded, out)
        return out[:rows].view(*x.shape[:-1], self.out_features)  # (..., out)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def linear(x: torch.Tensor, weight: torch.Tensor | PackedLinear, bias: torch.Tensor | None = None) -> torch.Tensor:
    """F.linear, or the product of a :class:`PackedLinear` (which carries its own bias)."""
    if isinstance(weight, PackedLinear):
        if bias is not None:
            raise ValueError("a PackedLinear carries its bias; pass none")
        return weight(x)
    if bias is not None and torch.jit.is_tracing():  # ONNX export: MatMul + Add, not Gemm (decoding/export.py)
        return F.linear(x, weight) + bias
    return F.linear(x, weight, bias)
