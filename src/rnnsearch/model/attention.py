"""Additive (Bahdanau) attention, stateless.

Shape legend used across the package: B batch, S source length, T target length,
K beam, E embedding, H encoder hidden per direction, C context size (2H for
RNNsearch), D decoder hidden, A attention, M maxout, V vocabulary.
"""
from __future__ import annotations

import torch
from torch import nn


CHUNK_ELEMENTS = 1 << 18  # grouped attention: hidden-layer elements per chunk (1 MiB in float32)


class AdditiveAttention(nn.Module):
    """e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j); alpha_ij = softmax_j(e_ij); c_i = sum_j alpha_ij h_j.

    U_a h_j does not depend on i: callers compute it once per sentence with
    :meth:`proj_keys` and pass it to every step. Nothing is stored on the module.
    """

    def __init__(self, query_size: int, key_size: int, att_size: int):
        super().__init__()
        self.W_a = nn.Linear(query_size, att_size, bias=False)
        self.U_a = nn.Linear(key_size, att_size, bias=False)
        self.v_a = nn.Linear(att_size, 1, bias=False)

    def proj_keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """U_a h_j for every source position: (B, S, C) -> (B, S, A)."""
        return self.U_a(annotations)  # (B, S, A)

    def forward(self, query: torch.Tensor, proj_keys: torch.Tensor, annotations: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """query s_{i-1} (B, D); proj_keys (B, S, A); annotations h (B, S, C); mask (B, S), True = real.

        Returns the context c_i (B, C) and the weights alpha_i (B, S), exactly 0 on padding.
        """
        return self.attend(self.W_a(query), proj_keys, annotations, mask)

    def attend(self, proj_query: torch.Tensor, proj_keys: torch.Tensor, annotations: torch.Tensor,
               mask: torch.Tensor, tape=None, workspace: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """As :meth:`forward`, with W_a s_{i-1} (B, A) already computed (the decoder's teacher-forced
        pass computes it in one product with [U_z; U_r] s_{i-1}, and passes its
        :class:`~.deferred.DeferredWeights`, which computes c_i and defers the gradient of h,
        and a ``workspace`` like proj_keys for the energies' hidden layer, shared by all steps).
        ``annotations`` are the values summed with the weights
        alpha_ij: h_j, or, while decoding, [C; C_o] h_j, which gives [C; C_o] c_i."""
        if proj_query.size(0) != proj_keys.size(0):  # beam search: K rows per sentence
            return self._attend_grouped(proj_query, proj_keys, annotations, mask)
        energies = additive_energies(proj_query, proj_keys, self.v_a.weight[0], workspace)  # (B, S)
        energies = energies.masked_fill(~mask, float("-inf"))
        alpha = torch.softmax(energies, dim=1)  # (B, S)
        if tape is not None:
            return tape.context(alpha), alpha  # (B, C)
        context = torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)  # (B, C)
        return context, alpha

    def _attend_grouped(self, proj_query: torch.Tensor, proj_keys: torch.Tensor, annotations: torch.Tensor,
                        mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`attend` for K query rows per sentence (a beam's hypotheses, each sentence's K rows
        together): W_a s_{i-1} (B*K, A) against the sentence's U_a h_j (B, S, A) and h_j (B, S, C),
        which are kept once per sentence, not copied per hypothesis. Decoding only (no gradient).

        The energies' hidden layer (B, K, S, A) is made a few sentences at a time, each chunk small
        enough to stay in the L2 cache from the add to the product with v_a: 128 sentences x 5 x 34
        positions x 512 took 8.2 ms at once (written out to memory and read back twice), 4.8 ms in
        chunks of 4 sentences (this CPU, 2 threads, float32)."""
        if proj_query.requires_grad:
            raise RuntimeError("grouped attention (K query rows per sentence) is for decoding only")
        n = proj_keys.size(0)
        if proj_query.size(0) % n:
            raise ValueError(f"{proj_query.size(0)} query rows for {n} sentences: not K rows per sentence")
        query = proj_query.to(proj_keys.dtype).view(n, -1, 1, proj_keys.size(2)) * 2.0  # (B, K, 1, A)
        keys, v = proj_keys.unsqueeze(1), self.v_a.weight.t().to(proj_keys.dtype)  # (B, 1, S, A), (A, 1)
        # sentences per chunk; one chunk of any number when traced for the ONNX export (decoding/export.py)
        per = n if torch.jit.is_tracing() else max(1, CHUNK_ELEMENTS // (query[0].numel() * keys.size(2)))
        hidden = (torch.add(query[i:i + per], keys[i:i + per], alpha=2.0).sigmoid() for i in range(0, n, per))  # sigmoid(2u)
        energies = torch.cat([torch.matmul(h, v).squeeze(-1) for h in hidden]) * 2.0  # (B, K, S), as _AdditiveEnergies
        alpha = torch.softmax(energies.masked_fill(~mask.unsqueeze(1), float("-inf")), dim=2)  # (B, K, S)
        context = torch.bmm(alpha, annotations)  # (B, K, C)
        return context.flatten(0, 1), alpha.flatten(0, 1)  # (B*K, C), (B*K, S)


class _AdditiveEnergies(torch.autograd.Function):
    """e_ij + sum(v_a) = 2 v_a^T sigmoid(2 (W_a s_{i-1} + U_a h_j)) for all j.

    v_a^T tanh(u) = 2 v_a^T sigmoid(2u) - sum(v_a): the paper's energies up to a constant per
    row, which the softmax over j removes, so alpha_ij and c_i are the paper's (on CPUs sigmoid
    is several times faster than tanh). Only the inputs are saved; the (B, S, A) hidden layer
    is recomputed in backward, so teacher forcing keeps no (B, S, A) tensor per step.

    With a ``workspace`` (like keys), the hidden layer is written there, forward and backward:
    a loop over steps then allocates no (B, S, A) tensor per step. A fresh one per step, freed
    while the step's small outputs live on, fragments the heap: the process grew by about one
    (B, S, A) tensor per step (~130 MiB over a 43-step batch of 54 x 44 sources, in float32).
    """

    @staticmethod
    def forward(ctx, query, keys, v, workspace):
        """query W_a s (B, A), keys U_a h (B, S, A), v (A,) -> (B, S)."""
        ctx.workspace = workspace
        hidden = torch.add(query.unsqueeze(1), keys, out=workspace).mul_(2.0).sigmoid_()  # (B, S, A)
        ctx.save_for_backward(query, keys, v)
        return torch.matmul(hidden, v).mul_(2.0)  # (B, S)

    @staticmethod
    def backward(ctx, grad):
        query, keys, v = ctx.saved_tensors
        hidden = torch.add(query.unsqueeze(1), keys, out=ctx.workspace).mul_(2.0).sigmoid_()  # (B, S, A), recomputed
        grad_v = torch.mm(grad.reshape(1, -1), hidden.flatten(0, 1)).squeeze(0).mul_(2.0)  # (A,)
        grad_u = torch.addcmul(hidden, hidden, hidden, value=-1.0)  # sigmoid' = h (1 - h)  (B, S, A)
        grad_u.mul_(grad.unsqueeze(2)).mul_(4.0 * v)  # d/du of 2 v^T sigmoid(2u)
        return grad_u.sum(1), grad_u, grad_v, None  # (B, A), (B, S, A), (A,)


def additive_energies(query: torch.Tensor, keys: torch.Tensor, v: torch.Tensor,
                      workspace: torch.Tensor | None = None) -> torch.Tensor:
    """Attention energies (B, S) from W_a s (B, A), U_a h (B, S, A) and v_a (A,), in one dtype
    (also under autocast); ``workspace``: None or a tensor like keys, overwritten."""
    dtype = keys.dtype
    if workspace is not None and (workspace.shape != keys.shape or workspace.dtype != dtype):
        raise ValueError(f"attention workspace {tuple(workspace.shape)} {workspace.dtype} does not match "
                         f"the keys {tuple(keys.shape)} {dtype}")
    return _AdditiveEnergies.apply(query.to(dtype), keys, v.to(dtype), workspace)
