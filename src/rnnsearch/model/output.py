"""The output layer and its loss in one pass: p(y_i | ...) = softmax(W_o t_i + b_o), summed NLL.

Training never materialises the (N, V) logits of a whole batch: rows are processed in chunks,
and as the loss is the last operation, the gradient of each chunk's logits (softmax - one-hot)
is known in the forward pass and folded straight into the gradients of t, W_o and b_o. The
mathematics is that of ``cross_entropy(t @ W_o.T + b_o, y, reduction="sum")`` (a test checks it
to float tolerance), with label smoothing eps as PyTorch's ``label_smoothing``: (1 - eps) NLL +
eps mean_v(-log p_v), whose logits' gradient is softmax - (1 - eps) one-hot - eps / V. The memory
is one chunk of logits instead of all of them (under bf16, and a group of chunks' gradients: see
``group_rows``).

Under bf16 autocast the three products take bfloat16 operands (as autocast's own linear would),
while the bias, the softmax, the loss and the gradients' sums stay in float32. In float32 the logits
and t's gradient are oneDNN's products (model/gemm.py), W_o's gradient MKL's (a transposed operand).
"""
from __future__ import annotations

import torch

from rnnsearch.model import gemm

CHUNK_ROWS = 512  # rows per chunk at most (512 x 8000 float32 logits = 16 MB)
CHUNK_ELEMENTS = 1 << 23  # logits per chunk at most: a 30k vocabulary gets 256-row chunks (31 MB)
GROUP_ELEMENTS = 1 << 24  # bf16 logits' gradients kept for one pair of products (a 30k vocabulary: 512 rows, 30 MiB)
MIN_LOG_PROB = -87.0  # exp below this gives float32 denormals, 60x slower on CPUs (and < 2e-38 anyway)


def group_rows(vocab: int, step: int, rows: int) -> int:
    """Rows whose logits' gradients are kept together (a multiple of ``step``, at most
    GROUP_ELEMENTS gradients, at least one chunk): W_o's gradient is then one product per group
    rather than per chunk. Its (V, M) sum is what costs: under bf16, converting and adding one
    (30000, 256) product took 13-19 ms against the product's 4 ms (benchmarks/README.md)."""
    group = max(step, GROUP_ELEMENTS // vocab // step * step)
    return min(group, -(-rows // step) * step)


def chunk_rows(vocab: int) -> int:
    """Rows per chunk: a power of two, so that a chunk holds at most CHUNK_ELEMENTS logits (within
    [32, CHUNK_ROWS]). Large chunks of a large vocabulary spill the caches and, over 32 MiB, come
    from fresh pages at every call (glibc's mmap threshold): 512 x 30000 ran 2-4x slower per logit; 256 x 30000
    trains 1.05x faster than 128 x 30000 in float32 (benchmarks/README.md)."""
    rows = CHUNK_ROWS
    while rows > 32 and rows * vocab > CHUNK_ELEMENTS:
        rows //= 2
    return rows


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, target, with_grad: bool, compute: torch.dtype, smoothing: float = 0.0):
        """x (N, M), weight (V, M), bias (V,), target (N,) -> summed NLL (scalar, float32 at least),
        label-smoothed by ``smoothing``; the products in ``compute``, everything else in ``bias.dtype``."""
        dtype = bias.dtype
        total = torch.zeros((), dtype=torch.float64, device=x.device)
        gx = torch.empty(x.shape, dtype=dtype, device=x.device) if with_grad else None  # (N, M)
        gw = torch.zeros(weight.shape, dtype=dtype, device=x.device) if with_grad else None  # (V, M)
        gb = torch.zeros_like(bias) if with_grad else None  # (V,)
        xc, wc = x.to(compute), weight.to(compute)  # (N, M), (V, M)
        wt = wc.t().contiguous() if with_grad and gemm.takes(wc) else wc.t()  # (M, V): a copy only for oneDNN
        step = chunk_rows(len(weight))
        mixed = with_grad and compute != dtype  # bf16 products: logits' gradients kept per group
        group = group_rows(len(weight), step, len(x)) if mixed else step
        rows = min(step, len(x))
        minus_target = torch.full((rows, 1), smoothing - 1.0, dtype=dtype, device=x.device)  # -(1 - eps)
        logits_buf = bias.new_empty(rows, len(weight)) if compute != dtype else None  # (n, V), for all chunks
        logp_buf = bias.new_empty(rows, len(weight))  # (n, V)
        grads = x.new_empty(min(group, len(x)), len(weight), dtype=compute) if mixed else None  # (G, V)
        for first in range(0, len(x), group):
            last = min(first + group, len(x))
            for start in range(first, last, step):
                end = min(start + step, last)
                xs, ys = xc[start:end], target[start:end, None]  # (n, M), (n, 1)
                if compute == dtype:
                    logits = gemm.linear(xs, wc, bias)  # (n, V)
                else:
                    logits = torch.add(torch.mm(xs, wc.t()), bias, out=logits_buf[: len(xs)])  # (n, V)
                logp = torch.log_softmax(logits, dim=1, out=logp_buf[: len(xs)])  # (n, V)
                total -= (1.0 - smoothing) * logp.gather(1, ys).sum(dtype=torch.float64)
                if smoothing:
                    total -= smoothing * logp.mean(1).sum(dtype=torch.float64)
                if not with_grad:
                    continue
                grad = logp.clamp_(min=MIN_LOG_PROB).exp_()  # softmax, in place (n, V); see MIN_LOG_PROB
                grad.scatter_add_(1, ys, minus_target[: len(xs)])  # softmax - (1 - eps) one-hot
                if smoothing:
                    grad.sub_(smoothing / len(weight))  # - eps / V
                gb += grad.sum(0)  # (V,)
                if mixed:
                    grads[start - first:end - first] = grad  # (n, V) in bfloat16
                else:
                    gx[start:end] = gemm.linear(grad, wt)  # (n, M)
                    gw.addmm_(grad.t(), xs)  # (V, M)
            if mixed:  # bfloat16 operands, one pair of products per group; the sums in float32
                gx[first:last] = torch.mm(grads[: last - first], wc)  # (G, M)
                gw += torch.mm(grads[: last - first].t(), xc[first:last])  # (V, M)
        ctx.save_for_backward(gx, gw, gb)
        ctx.dtypes = (x.dtype, weight.dtype)
        return total.to(dtype)

    @staticmethod
    def backward(ctx, grad_out):
        gx, gw, gb = ctx.saved_tensors
        if gx is None:
            raise RuntimeError("linear_cross_entropy was called without gradients; cannot backpropagate")
        x_dtype, w_dtype = ctx.dtypes
        return (gx * grad_out).to(x_dtype), (gw * grad_out).to(w_dtype), gb * grad_out, None, None, None, None


def linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                         target: torch.Tensor, smoothing: float = 0.0) -> torch.Tensor:
    """Summed ``cross_entropy(x @ weight.T + bias, target, label_smoothing=smoothing)`` over the
    rows of x (N, M), the softmax and loss in float32 at least; under autocast the products take
    the autocast dtype. Callers pass only real (non-padding) rows."""
    with_grad = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or bias.requires_grad)
    dtype = torch.promote_types(torch.promote_types(x.dtype, weight.dtype), torch.float32)
    device = x.device.type
    compute = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else dtype
    with torch.autocast(device, enabled=False):
        return _LinearCrossEntropy.apply(x, weight, bias.to(dtype), target, with_grad, compute, float(smoothing))
