"""One training update: teacher-forced loss over the minibatch (split over ranks and, above
``train.max_positions``, into micro-batches whose gradients add up), backward, clipping, and the
optimiser's step unless the loss or the gradient is not finite."""
from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from rnnsearch.data.batching import make_batch
from rnnsearch.data.guided import guide_matrix
from rnnsearch.training import distributed


class TrainingLoss(nn.Module):
    """The model's summed training objective as ``forward``, so that DistributedDataParallel can
    wrap it: (objective, NLL, alignment cost), the NLL label-smoothed by ``train.label_smoothing``;
    with a ``guide`` (train.guided_alignment) the objective adds the weighted alignment cost (else
    the cost is 0)."""

    def __init__(self, model, smoothing: float = 0.0, guide_weight: float = 0.0, guide_cost: str = "ce"):
        super().__init__()
        self.model, self.smoothing = model, smoothing
        self.guide_weight, self.guide_cost = guide_weight, guide_cost

    def forward(self, src, src_mask, tgt_in, tgt_out, guide=None):
        if guide is None:
            nll, _ = self.model.loss(src, src_mask, tgt_in, tgt_out, self.smoothing)
            return nll, nll, torch.zeros((), device=nll.device)
        nll, _, cost = self.model.guided_loss(src, src_mask, tgt_in, tgt_out, guide, self.guide_cost, self.smoothing)
        return nll + self.guide_weight * cost, nll, cost


class Step(NamedTuple):
    """What one update measured, summed over all ranks."""
    nll: float  # summed NLL of the minibatch's target tokens
    tokens: int  # target tokens, </s> included
    ok: bool  # the update was applied (False: non-finite loss or gradient)
    align_cost: float = 0.0  # summed guided-alignment cost (0 without links)
    align_rows: int = 0  # target positions the links guide (the cost's terms)


def train_step(loss_fn, model, optimizer, data, idx, t, ctx) -> Step:
    """One update of ``model`` on minibatch ``idx`` of ``data`` (a Corpus), ``t`` the train config:
    returns the summed NLL and target tokens over all ranks, whether the update was applied
    (False: non-finite loss or gradient) and, with links, the summed alignment cost and the number
    of target positions it covers. The gradient is that of the minibatch's summed NLL
    divided by its target tokens (``train.loss_scale: token``) or by its sentences (``sentence``:
    GroundHog's cost, summed over time and averaged over the batch), however it is split over
    ranks and micro-batches; with the corpus's guided-alignment links, the objective adds the
    weighted alignment cost (the returned loss stays the NLL). ``loss_fn`` is the model's loss
    (trainer._Loss), DDP-wrapped under torchrun."""
    total_n = int(data.tgt_lens[idx].sum()) + len(idx)  # target tokens, </s> included
    divisor = total_n if t.loss_scale == "token" else len(idx)
    rows, weight = distributed.shard(idx, ctx), 1.0
    if len(rows) == 0:  # fewer sentences than ranks: take part in the all-reduce, add nothing
        rows, weight = idx[:1], 0.0
    parts = micro_batches(rows, data.tgt_lens, t.max_positions)
    optimizer.zero_grad(set_to_none=True)
    local_nll = local_cost = local_rows = 0.0
    for k, part in enumerate(parts):
        batch = make_batch([data.src_ids[i] for i in part], [data.tgt_ids[i] for i in part]).to(ctx.device)
        guide = None if data.links is None else guide_matrix(data.links, part, data.src_lens, data.tgt_lens)
        hold = ctx.enabled and k < len(parts) - 1  # DDP: all-reduce gradients after the last part
        with (loss_fn.no_sync() if hold else contextlib.nullcontext()), \
                (torch.autocast(ctx.device.type, dtype=torch.bfloat16) if t.bf16 else contextlib.nullcontext()):
            objective, nll, cost = loss_fn(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out,
                                           None if guide is None else guide.to(ctx.device))
        (objective * (weight * ctx.world / divisor)).backward()  # DDP averages: sum over ranks / divisor
        local_nll += float(nll.detach()) * weight
        if guide is not None:
            local_cost += float(cost.detach()) * weight
            local_rows += float((guide.sum(-1) > 0).sum()) * weight
    total_nll, total_cost, total_rows = distributed.all_sum([local_nll, local_cost, local_rows], ctx)
    params = [p for p in model.parameters() if p.grad is not None]
    if t.clip > 0:
        norm = torch.nn.utils.clip_grad_norm_(params, t.clip)
    else:
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params]))
    ok = math.isfinite(total_nll) and math.isfinite(float(norm))
    if ok:
        optimizer.step()
    return Step(total_nll, total_n, ok, total_cost, int(total_rows))


def micro_batches(rows, tgt_lens: np.ndarray, limit: int) -> list:
    """``rows`` split into consecutive parts of at most ``limit`` padded target positions
    (sentences x longest target) each, to bound activation memory; 0 = never split."""
    positions = len(rows) * (int(tgt_lens[rows].max()) + 1)
    if not limit or positions <= limit or len(rows) == 1:
        return [rows]
    return [part for part in np.array_split(rows, min(len(rows), math.ceil(positions / limit))) if len(part)]
