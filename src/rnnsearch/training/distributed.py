"""Data parallelism over torch.distributed: ``torchrun --nproc_per_node N -m rnnsearch train``.

Every rank builds the same epoch plan (it is a function of seed and epoch) and trains on its
own shard of every minibatch (rows ``rank::world``); DistributedDataParallel averages the
gradients. Only rank 0 writes logs and checkpoints. With one process nothing here talks to
torch.distributed, so single-process training is unchanged.
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass

import torch
import torch.distributed as dist

from rnnsearch.config import ConfigError


@dataclass(frozen=True)
class Context:
    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    """``auto`` picks this rank's CUDA device when there is one, else the CPU."""
    if name == "cpu" or (name == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ConfigError("train.device: cuda was asked for but torch sees no CUDA device")
    return torch.device("cuda", local_rank % torch.cuda.device_count())


def setup(device_name: str) -> Context:
    """Join the process group torchrun describes in the environment (WORLD_SIZE, RANK,
    LOCAL_RANK, MASTER_ADDR/PORT): NCCL on CUDA, gloo on the CPU."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = resolve_device(device_name, local_rank)
    if world <= 1:
        return Context(device=device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Context(dist.get_rank(), dist.get_world_size(), local_rank, device)


def teardown(ctx: Context, wait: bool = False) -> None:
    """Leave the process group. ``wait``: first wait for every rank (on a normal end), so
    that no rank tears gloo down while rank 0 is still writing its checkpoint."""
    if ctx.enabled and dist.is_initialized():
        if wait:
            dist.barrier()
        dist.destroy_process_group()


def exit_rank(ctx: Context, code: int = 0) -> None:
    """End a torchrun rank that has finished and left its group without interpreter
    finalisation; a no-op in a single process.

    DistributedDataParallel (torch 2.13) keeps its process group alive from C++ after the
    wrapper is gone and destroy_process_group has run (10 references stay), so the gloo
    threads (gloo_tcp_loop, two pt_gloo_runloop) still run when the interpreter finalises.
    One rank of a make-test run aborted there ("terminate called without an active exception",
    SIGABRT) after all its work was done; likely (not reproduced) a thread that took the GIL
    during finalisation and was ended by a forced unwind, as in pytorch/pytorch#179291. Logs, checkpoints and the tensorboard
    writer are closed before this; the streams are flushed here."""
    if not ctx.enabled:
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


def shard(rows, ctx: Context):
    """This rank's rows of a minibatch."""
    return rows[ctx.rank::ctx.world] if ctx.enabled else rows


def all_sum(values: list[float], ctx: Context) -> list[float]:
    """Element-wise sum over ranks (float64)."""
    return _all_reduce(values, ctx, dist.ReduceOp.SUM)


def all_max(values: list[float], ctx: Context) -> list[float]:
    """Element-wise maximum over ranks (float64)."""
    return _all_reduce(values, ctx, dist.ReduceOp.MAX)


def _all_reduce(values: list[float], ctx: Context, op) -> list[float]:
    if not ctx.enabled:
        return [float(v) for v in values]
    t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=_comm_device(ctx))
    dist.all_reduce(t, op=op)
    return t.tolist()


def all_gather(obj, ctx: Context) -> list:
    """Every rank's ``obj``, in rank order (picklable objects)."""
    if not ctx.enabled:
        return [obj]
    out = [None] * ctx.world
    dist.all_gather_object(out, obj)
    return out


def _comm_device(ctx: Context) -> torch.device:
    return ctx.device if ctx.device.type == "cuda" else torch.device("cpu")
