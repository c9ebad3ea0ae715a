"""Additive (Bahdanau) attention, stateless.

Shape legend used across the package: B batch, S source length, T target length,
K beam, E embedding, H encoder hidden per direction, C context size (2H for
RNNsearch), D decoder hidden, A attention, M maxout, V vocabulary.
"""
from __future__ import annotations

import torch
from torch import nn


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
        hidden = torch.tanh(self.W_a(query).unsqueeze(1) + proj_keys)  # (B, S, A)
        energies = self.v_a(hidden).squeeze(2)  # (B, S)
        energies = energies.masked_fill(~mask, float("-inf"))
        alpha = torch.softmax(energies, dim=1)  # (B, S)
        context = torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)  # (B, C)
        return context, alpha
