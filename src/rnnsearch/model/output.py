"""The output layer and its loss in one pass: p(y_i | ...) = softmax(W_o t_i + b_o), summed NLL.

Training never materialises the (N, V) logits of a whole batch: rows are processed in chunks,
and as the loss is the last operation, the gradient of each chunk's logits (softmax - one-hot)
is known in the forward pass and folded straight into the gradients of t, W_o and b_o. The
mathematics is that of ``cross_entropy(t @ W_o.T + b_o, y, reduction="sum")`` (a test checks it
to float tolerance); the memory is one chunk of logits instead of all of them.
"""
from __future__ import annotations

import torch

CHUNK_ROWS = 512  # 512 x 8000 float32 logits = 16 MB


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, target, with_grad: bool):
        """x (N, M), weight (V, M), bias (V,), target (N,) -> summed NLL (scalar)."""
        total = torch.zeros((), dtype=torch.float64, device=x.device)
        gx = torch.empty_like(x) if with_grad else None  # (N, M)
        gw = torch.zeros_like(weight) if with_grad else None  # (V, M)
        gb = torch.zeros_like(bias) if with_grad else None  # (V,)
        rows = min(CHUNK_ROWS, len(x))
        minus_one = torch.full((rows, 1), -1.0, dtype=x.dtype, device=x.device)
        logits_buf = x.new_empty(rows, len(weight))  # (n, V), one pair of buffers for all chunks
        logp_buf = x.new_empty(rows, len(weight))  # (n, V)
        for start in range(0, len(x), CHUNK_ROWS):
            xs, ys = x[start:start + CHUNK_ROWS], target[start:start + CHUNK_ROWS, None]  # (n, M), (n, 1)
            logits = torch.addmm(bias, xs, weight.t(), out=logits_buf[: len(xs)])  # (n, V)
            logp = torch.log_softmax(logits, dim=1, out=logp_buf[: len(xs)])  # (n, V)
            total -= logp.gather(1, ys).sum(dtype=torch.float64)
            if with_grad:
                grad = logp.exp_()  # softmax, in place (n, V)
                grad.scatter_add_(1, ys, minus_one[: len(xs)])  # softmax - one-hot
                torch.mm(grad, weight, out=gx[start:start + CHUNK_ROWS])  # (n, M)
                gw.addmm_(grad.t(), xs)  # (V, M)
                gb += grad.sum(0)  # (V,)
        ctx.save_for_backward(gx, gw, gb)
        return total.to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        gx, gw, gb = ctx.saved_tensors
        if gx is None:
            raise RuntimeError("linear_cross_entropy was called without gradients; cannot backpropagate")
        return gx * grad_out, gw * grad_out, gb * grad_out, None, None


def linear_cross_entropy(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                         target: torch.Tensor) -> torch.Tensor:
    """Summed ``cross_entropy(x @ weight.T + bias, target)`` over the rows of x (N, M), in float32
    at least (also under autocast). Callers pass only real (non-padding) rows."""
    with_grad = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or bias.requires_grad)
    dtype = torch.promote_types(torch.promote_types(x.dtype, weight.dtype), torch.float32)
    with torch.autocast(x.device.type, enabled=False):
        return _LinearCrossEntropy.apply(x.to(dtype), weight.to(dtype), bias.to(dtype), target, with_grad)
