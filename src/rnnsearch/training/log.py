"""The run's JSONL log and progress bar. A log that cannot be written stops training with
the file's name and the reason, not a traceback."""
from __future__ import annotations

import json
import time
from pathlib import Path

from tqdm import tqdm

from rnnsearch.training.state import TrainError, TrainState


class RunLog:
    """``log.jsonl``: one JSON object per line, each with step, elapsed_s and tgt_tokens."""

    def __init__(self, path: Path, state: TrainState, enabled: bool = True):
        self.path, self.state, self.enabled = Path(path), state, enabled
        self._file = None

    def __enter__(self) -> "RunLog":
        if self.enabled:
            try:
                self._file = open(self.path, "a", encoding="utf-8")
            except OSError as exc:
                raise TrainError(f"{self.path}: cannot open the training log: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass

    def write(self, entry: dict) -> None:
        if self._file is None:
            return
        entry.setdefault("elapsed_s", round(self.state.elapsed_s, 2))
        entry.setdefault("tgt_tokens", self.state.tgt_tokens)
        entry.setdefault("cpu_s", round(self.state.cpu_s, 2))
        try:
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()
        except OSError as exc:
            raise TrainError(f"{self.path}: cannot write the training log: {exc.strerror or exc}") from None

    def meter(self, train_cfg, disable: bool) -> "Meter":
        return Meter(self, train_cfg, disable)


class Meter:
    """Training loss and target tokens/s over a window of ``train.log_every`` updates."""

    def __init__(self, runlog: RunLog, train_cfg, disable: bool):
        self.runlog, self.cfg = runlog, train_cfg
        s = runlog.state
        self.bar = tqdm(total=train_cfg.max_steps or None, initial=s.step, disable=disable, unit="step",
                        dynamic_ncols=True)
        self._reset()

    def _reset(self) -> None:
        self.loss, self.tokens, self.start = 0.0, 0, time.monotonic()

    def update(self, loss: float, tokens: int) -> None:
        s, t = self.runlog.state, self.cfg
        self.loss, self.tokens = self.loss + loss, self.tokens + tokens
        self.bar.update(1)
        if s.step % t.log_every:
            return
        rate = self.tokens / max(time.monotonic() - self.start, 1e-9)
        mean = self.loss / self.tokens if self.tokens else float("nan")
        self.runlog.write({"step": s.step, "epoch": s.epoch, "elapsed_s": round(s.elapsed_s, 2),
                           "tgt_tokens": s.tgt_tokens, "loss": mean if self.tokens else None,
                           "tok_per_s": round(rate, 1)})
        left = f"{t.max_minutes - s.elapsed_s / 60:.1f}" if t.max_minutes else "-"
        self.bar.set_postfix(loss=f"{mean:.3f}", tok_s=f"{rate:.0f}", min=f"{s.elapsed_s / 60:.1f}", min_left=left)
        self._reset()

    def write(self, message: str) -> None:
        if self.runlog.enabled:
            self.bar.write(message)

    def close(self) -> None:
        self.bar.close()
