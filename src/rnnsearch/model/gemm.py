"""Float32 products through oneDNN.

PyTorch sends a float32 ``torch.mm`` / ``F.linear`` on a CPU to MKL. On an AMD EPYC (Zen 4, 2 cores)
MKL's float32 products of the shapes training computes ran at 115-150 GFLOP/s where oneDNN's ran at
170-205 (benchmarks/README.md): the output layer's logits (256 x 256 x 30,000) 1.4x faster, the decoder
step's thin products (80 rows) 1.3-1.6x. oneDNN is PyTorch's own (``torch.ops.mkldnn._linear_pointwise``,
the op Inductor's CPU backend emits); :func:`linear` uses it for contiguous float32 CPU operands when
:func:`enabled`, else ``torch.addmm`` / ``torch.mm``. The result is the same product (float tolerance:
the two libraries sum in different orders).
"""
from __future__ import annotations

import functools
import os

import torch


@functools.cache
def enabled() -> bool:
    """Whether float32 products go through oneDNN: PyTorch has it and its linear op, and
    RNNSEARCH_GEMM is not ``mkl``."""
    if os.environ.get("RNNSEARCH_GEMM", "onednn") == "mkl":
        return False
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def takes(t: torch.Tensor) -> bool:
    """Whether :func:`linear` sends products of this float32 CPU operand to oneDNN (when contiguous):
    a caller makes a transposed weight contiguous for it only then."""
    return enabled() and t.device.type == "cpu" and t.dtype == torch.float32


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x W^T + b for x (N, in), W (out, in), b (out,) -> (N, out)."""
    if (takes(x) and takes(weight) and x.dim() == 2 and x.is_contiguous() and weight.is_contiguous()
            and (bias is None or bias.dtype == torch.float32)):
        return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")
    return torch.mm(x, weight.t()) if bias is None else torch.addmm(bias, x, weight.t())
