"""What a run must carry across a restart: its counters, the RNG states, and the check that a
resumed run keeps the checkpoint's model, vocabulary and data."""
from __future__ import annotations

import random
import signal
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from rnnsearch.config import Config, ConfigError, first_difference, to_dict
from rnnsearch.errors import UserError


class TrainError(UserError, RuntimeError):
    """Training cannot start or continue; the message says why."""


@dataclass
class TrainState:
    step: int = 0                 # minibatches consumed (skipped non-finite updates included)
    epoch: int = 0
    batch_index: int = 0          # next minibatch of this epoch's plan
    tgt_tokens: int = 0           # target tokens trained on, cumulative
    elapsed_s: float = 0.0        # wall time in the training loop, cumulative over resumes
    cpu_s: float = 0.0            # CPU time in the training loop (all threads, all ranks), cumulative
    best_bleu: float = -1.0
    best_step: int = 0
    bad_evals: int = 0            # validations since the best one
    last_valid_step: int = -1
    last_save_step: int = -1
    nonfinite_total: int = 0      # updates skipped for a non-finite loss or gradient
    nonfinite_run: int = 0        # ... of them in a row, up to now


def rng_state() -> dict:
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"torch": torch.get_rng_state(), "python": random.getstate(),
             "numpy": [kind, keys.tolist(), pos, has_gauss, cached]}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(tuple(state["python"][:1]) + (tuple(state["python"][1]),) + tuple(state["python"][2:]))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def check_resumable(cfg: Config, saved: dict, path: Path) -> None:
    """The model, vocabulary and data of a resumed run must be those of the checkpoint."""
    diff = first_difference(saved, to_dict(cfg))
    if diff is not None:
        key, then, now = diff
        raise ConfigError(f"{key}: {now!r} differs from the checkpoint {path} ({then!r}); a resumed run must keep it")


def catch_stop_signals(handler) -> dict:
    """``handler`` for SIGINT and SIGTERM (the trainer saves last.pt and stops); returns the
    previous handlers for :func:`restore_signals`. Outside the main thread, signals are left alone."""
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass
    return previous


def restore_signals(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)
