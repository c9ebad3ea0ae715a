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


def warmup_factor(update: int, warmup: int) -> float:
    """The rate's multiplier at update ``update`` (1-based) with ``train.warmup`` N: n / N up to N,
    then sqrt(N / n) (Marian's ``--lr-warmup N --lr-decay-inv-sqrt N``); 1 when N is 0."""
    if not warmup:
        return 1.0
    return update / warmup if update <= warmup else (warmup / update) ** 0.5


def set_rate(optimizer, train_cfg, done: int) -> None:
    """The rate of the next update, after ``done`` updates, as ``train.warmup`` says (a function of
    the update count alone, so a resumed run continues it); nothing when warm-up is off."""
    if train_cfg.warmup:
        for group in optimizer.param_groups:
            group["lr"] = train_cfg.lr * warmup_factor(done + 1, train_cfg.warmup)


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())
