"""What a run must carry across a restart: counters, RNG states, the log, the config check."""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from rnnsearch.config import Config, ConfigError, to_dict


class TrainError(RuntimeError):
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


NOT_CHECKED = {("data", "token_cache")}  # where tokens are cached changes no data


def check_resumable(cfg: Config, saved: dict, path: Path) -> None:
    """The model, vocabulary and data of a resumed run must be those of the checkpoint."""
    now = to_dict(cfg)
    for section in ("model", "vocab", "data"):
        for key, value in saved[section].items():
            if (section, key) in NOT_CHECKED:
                continue
            if now[section].get(key) != value:
                raise ConfigError(f"{section}.{key}: {now[section].get(key)!r} differs from the "
                                  f"checkpoint {path} ({value!r}); a resumed run must keep it")


def trim_log(path: Path, step: int) -> int:
    """Drop the log entries written after ``step`` (those a resumed run will write again) and
    any torn last line; returns how many entries went. The file is replaced atomically."""
    if not path.exists():
        return 0
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            dropped += 1
            continue
        if isinstance(entry, dict) and entry.get("step", 0) > step:
            dropped += 1
        else:
            kept.append(line + "\n")
    if dropped:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text("".join(kept), encoding="utf-8")
        os.replace(tmp, path)
    return dropped


def remove_stale_temporaries(out: Path) -> list[str]:
    """Temporary checkpoint files left by a process killed while saving."""
    gone = []
    for tmp in out.glob(".*.pt.*.tmp"):
        tmp.unlink(missing_ok=True)
        gone.append(tmp.name)
    return gone


def check_writable(out: Path) -> None:
    """Fail before any work when the run directory cannot be created or written."""
    probe = out / f".write-test-{os.getpid()}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise TrainError(f"{out}: the run directory cannot be written: {exc.strerror or exc}") from None


def write_config(path: Path, cfg: Config) -> None:
    """The resolved config of this invocation, for people and ``rnnsearch status`` (the checkpoint
    holds its own copy); replaced atomically."""
    import yaml
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
