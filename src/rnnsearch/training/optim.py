"""Optimiser, rate schedule and parameter count as the ``train`` config section says."""
from __future__ import annotations

import torch


def make_optimizer(train_cfg, model) -> torch.optim.Optimizer:
    if train_cfg.optimizer == "adadelta":
        return torch.optim.Adadelta(model.parameters(), lr=train_cfg.lr, rho=train_cfg.rho, eps=train_cfg.eps)
    return torch.optim.Adam(model.parameters(), lr=train_cfg.lr, fused=True)


def make_scheduler(train_cfg, optimizer):
    """Rate decay on stalled dev BLEU (``train.lr_decay`` < 1), else none."""
    if train_cfg.lr_decay >= 1:
        return None
    return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=train_cfg.lr_decay,
                                                      patience=train_cfg.lr_decay_patience)


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())
