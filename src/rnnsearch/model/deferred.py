"""Weight gradients of a recurrence's products, computed once for all steps.

A teacher-forced decoder multiplies a weight W by a new input x_i at every step i (U_z s_{i-1},
C c_i, ...). Autograd's default backward computes g_i^T x_i for each step, a thin (B rows)
product, and adds it into W's gradient T times. The sum is the same as one product over all
steps, dW = [g_1; ...; g_T]^T [x_1; ...; x_T], which runs at a much higher fraction of the
machine's matmul speed and needs no per-step accumulation.

:class:`DeferredWeights` does that: its :meth:`~DeferredWeights.linear` computes x_i W^T and, in
backward, only the input gradient g_i W, keeping g_i; :meth:`~DeferredWeights.start` wraps the
recurrence's initial state s_0, whose gradient is complete only after every step's backward has
run, and there computes every weight's gradient in one product each. The mathematics is that of
``F.linear(x_i, W)`` (a test checks it to float tolerance); only the order of the sums changes.
The step products, forward x_i W^T and backward g_i W (against W^T made once per pass), are
:func:`rnnsearch.model.gemm.linear`'s (oneDNN in float32 on CPUs).
"""
from __future__ import annotations

import torch

from rnnsearch.model import gemm


class DeferredWeights:
    """Deferred gradients for named weights (each (out, in)), used by the steps of one forward pass.

    Use: ``tape = DeferredWeights(U=U_weight, C=C_weight)``, ``s = tape.start(s_0)`` before the loop
    (s_0 must feed step 1), then ``tape.linear("U", x_i)`` for x_i U^T inside it. One backward per
    forward pass. With ``annotations`` h (B, S, C), ``tape.context(alpha_i)`` computes
    c_i = sum_j alpha_ij h_j, and h's gradient sum_i alpha_ij dc_i is likewise one batched product
    for all steps.
    """

    def __init__(self, annotations: torch.Tensor | None = None, **weights: torch.Tensor):
        self.names = list(weights) + ([] if annotations is None else [CONTEXT])
        self.weights = tuple(weights.values()) + (() if annotations is None else (annotations,))
        self.slot = {name: k for k, name in enumerate(self.names)}
        compute = _autocast_dtype(self.weights[0].device.type)  # under autocast: cast once per pass, not per step
        self.detached = [w.detach() if compute is None or not w.is_floating_point() else w.detach().to(compute)
                         for w in self.weights]
        self.steps = [0 for _ in self.weights]  # products computed in forward, per weight
        self.transposed: dict[int, torch.Tensor] = {}  # W^T (in, out), h^T (B, C, S): made in the first backward
        # filled in backward (so that the tape holds no reference into the graph, no cycle):
        self.inputs: list[list[torch.Tensor]] = [[] for _ in self.weights]
        self.grads: list[list[torch.Tensor]] = [[] for _ in self.weights]

    def start(self, s0: torch.Tensor) -> torch.Tensor:
        """s_0, unchanged; its backward computes the weights' gradients."""
        return _Flush.apply(s0, self, *self.weights)

    def linear(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """x W^T (B, out) for x (B, in) and the weight called ``name``."""
        k = self.slot[name]
        return _StepLinear.apply(x, self.detached[k], self, k)

    def context(self, alpha: torch.Tensor) -> torch.Tensor:
        """c_i = sum_j alpha_ij h_j (B, C) for alpha_i (B, S) and the annotations h (B, S, C)."""
        k = self.slot[CONTEXT]
        return _StepContext.apply(alpha, self.detached[k], self, k)

    def weight_grads(self) -> list[torch.Tensor | None]:
        grads = []
        for k, (xs, gs) in enumerate(zip(self.inputs, self.grads)):
            if len(gs) != self.steps[k]:
                raise RuntimeError(f"deferred weight {self.names[k]!r}: {self.steps[k]} steps in forward, {len(gs)} "
                                   "in backward (one backward per forward pass, reaching s_0)")
            if not gs:
                grads.append(None)
                continue
            dtype = self.detached[k].dtype  # the products' precision (bfloat16 under bf16 autocast)
            if self.names[k] == CONTEXT:  # dh_j = sum_i alpha_ij dc_i, for every sentence at once
                alphas = torch.stack(xs, dim=2).to(dtype)  # (B, S, T)
                grad = torch.bmm(alphas, torch.stack(gs, dim=1).to(dtype))  # (B, S, T) x (B, T, C)
            else:
                g_all = torch.cat(gs).to(dtype)  # (T*B, out)
                x_all = torch.cat(xs).to(dtype)  # (T*B, in), the same (backward) order
                grad = torch.mm(g_all.t(), x_all)  # (out, in), summed in float32, rounded to dtype
            grads.append(grad.to(self.weights[k].dtype))
            gs.clear()
            xs.clear()
        self.transposed.clear()
        return grads

    def transpose(self, k: int, dtype: torch.dtype) -> torch.Tensor:
        """The k-th weight transposed, contiguous, in ``dtype`` (made once per pass): W^T (in, out) for
        the input gradients g_i W of a product, h^T (B, C, S) for those of the context."""
        held = self.transposed.get(k)
        if held is None or held.dtype != dtype:
            held = self.detached[k].to(dtype).transpose(-2, -1).contiguous()
            self.transposed[k] = held
        return held


CONTEXT = "annotations"  # the slot of h_j, read by :meth:`DeferredWeights.context`


def _autocast_dtype(device_type: str) -> torch.dtype | None:
    return torch.get_autocast_dtype(device_type) if torch.is_autocast_enabled(device_type) else None


def _record_forward(ctx, tape: DeferredWeights, k: int, step_input: torch.Tensor) -> None:
    """Keeps the product's step input for backward (the weight's side comes from the tape)."""
    ctx.tape, ctx.k = tape, k
    ctx.save_for_backward(step_input)
    tape.steps[k] += 1


def _record_backward(ctx, grad: torch.Tensor) -> None:
    """Files (the product's step input, its output gradient) on the tape."""
    ctx.tape.inputs[ctx.k].append(ctx.saved_tensors[0])
    ctx.tape.grads[ctx.k].append(grad)


class _StepLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, tape, k):
        _record_forward(ctx, tape, k, x)
        return gemm.linear(x, weight)  # (B, out)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        _record_backward(ctx, grad)
        return gemm.linear(grad, ctx.tape.transpose(ctx.k, grad.dtype)), None, None, None  # g_i W (B, in)


class _StepContext(torch.autograd.Function):
    @staticmethod
    def forward(ctx, alpha, annotations, tape, k):
        _record_forward(ctx, tape, k, alpha)
        return torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)  # (B, 1, S) x (B, S, C) -> (B, C)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        """dalpha_ij = h_j . dc_i, as the row dc_i (B, 1, C) times h^T (B, C, S): the same product
        with h as the matrix, (B, S, C) x (B, C, 1), ran ~10x slower on CPUs (1.3 ms against 0.13 at
        80 x 27 x 1024, 2 threads; MKL's batched matrix-vector product), at every decoder step."""
        _record_backward(ctx, grad)
        transposed = ctx.tape.transpose(ctx.k, grad.dtype)  # (B, C, S)
        grad_alpha = torch.bmm(grad.unsqueeze(1), transposed).squeeze(1)  # (B, 1, C) x (B, C, S) -> (B, S)
        return grad_alpha, None, None, None


class _Flush(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s0, tape, *weights):
        ctx.tape = tape
        return s0.clone()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        return (grad, None, *ctx.tape.weight_grads())
