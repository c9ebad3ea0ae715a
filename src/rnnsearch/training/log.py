"""The run's records: ``log.jsonl`` (one JSON object per line), TensorBoard scalars beside it
(``train.tensorboard``), and progress on the terminal.

Progress is a tqdm bar when standard output is a terminal; otherwise (nohup, a cluster's log file)
one plain line per ``train.log_every`` updates, never a bar repainted with carriage returns. A log
that cannot be written stops training with the file's name and the reason, not a traceback.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from rnnsearch.training.state import TrainError, TrainState

SCALARS = {"loss": "train/loss", "align_cost": "train/align_cost", "tok_per_s": "train/tok_per_s",
           "dev_bleu": "dev/bleu", "dev_loss": "dev/loss", "lr": "train/lr"}  # log.jsonl key -> TensorBoard tag


class RunLog:
    """``log.jsonl``: one JSON object per line, each with step, elapsed_s, cpu_s and tgt_tokens;
    with ``tensorboard``, the numbers of SCALARS also go to RUN/tensorboard."""

    def __init__(self, path: Path, state: TrainState, enabled: bool = True, tensorboard: bool = False):
        self.path, self.state, self.enabled, self.tensorboard = Path(path), state, enabled, tensorboard
        self._file = None
        self._writer = None

    def __enter__(self) -> RunLog:
        if not self.enabled:
            return self
        try:
            self._file = open(self.path, "a", encoding="utf-8")
        except OSError as exc:
            raise TrainError(f"{self.path}: cannot open the training log: {exc.strerror or exc}") from None
        if self.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise TrainError("train.tensorboard needs the 'tensorboard' extra (tensorboard not installed): "
                                 "pip install 'rnnsearch[tensorboard]'") from None
            self._writer = SummaryWriter(str(self.path.parent / "tensorboard"))
        return self

    def __exit__(self, *exc) -> None:
        for closable in (self._file, self._writer):
            if closable is not None:
                try:
                    closable.close()
                except OSError:
                    pass

    def write(self, entry: dict) -> None:
        if self._file is None:
            return
        entry.setdefault("elapsed_s", round(self.state.elapsed_s, 2))
        entry.setdefault("cpu_s", round(self.state.cpu_s, 2))
        entry.setdefault("tgt_tokens", self.state.tgt_tokens)
        try:
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()
        except OSError as exc:
            raise TrainError(f"{self.path}: cannot write the training log: {exc.strerror or exc}") from None
        if self._writer is not None:
            for key, tag in SCALARS.items():
                if isinstance(entry.get(key), (int, float)):
                    self._writer.add_scalar(tag, entry[key], entry["step"])
            self._writer.flush()

    def meter(self, train_cfg, show: bool) -> Meter:
        return Meter(self, train_cfg, show)


class Meter:
    """Training loss and target tokens/s over windows of ``train.log_every`` updates; with guided
    alignment, also the alignment cost per guided target position ("align_cost")."""

    def __init__(self, runlog: RunLog, train_cfg, show: bool, stream=None):
        self.runlog, self.cfg, self.stream = runlog, train_cfg, stream or sys.stdout
        s = runlog.state
        self.bar = None
        self.lines = show and not self.stream.isatty()
        if show and not self.lines:
            self.bar = tqdm(total=train_cfg.max_steps or None, initial=s.step, unit="step", dynamic_ncols=True,
                            file=self.stream)
        self._reset()

    def _reset(self) -> None:
        self.loss, self.tokens, self.start = 0.0, 0, time.monotonic()
        self.align, self.rows = 0.0, 0

    def update(self, step) -> None:
        """Count one update (a :class:`rnnsearch.training.update.Step`; a skipped one adds nothing)."""
        s, t = self.runlog.state, self.cfg
        if step.ok:
            self.loss, self.tokens = self.loss + step.nll, self.tokens + step.tokens
            self.align, self.rows = self.align + step.align_cost, self.rows + step.align_rows
        if self.bar is not None:
            self.bar.update(1)
        if s.step % t.log_every:
            return
        rate = self.tokens / max(time.monotonic() - self.start, 1e-9)
        mean = self.loss / self.tokens if self.tokens else float("nan")
        entry = {"step": s.step, "epoch": s.epoch, "elapsed_s": round(s.elapsed_s, 2),
                 "tgt_tokens": s.tgt_tokens, "loss": mean if self.tokens else None, "tok_per_s": round(rate, 1)}
        align = self.align / self.rows if self.rows else None
        if align is not None:
            entry["align_cost"] = align
        self.runlog.write(entry)
        left = f"{t.max_minutes - s.elapsed_s / 60:.1f}" if t.max_minutes else "-"
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{mean:.3f}", tok_s=f"{rate:.0f}", min=f"{s.elapsed_s / 60:.1f}", min_left=left)
        elif self.lines:
            cost = "" if align is None else f", align cost {align:.3f}"
            self.write(f"step {s.step} epoch {s.epoch}: loss {mean:.3f}{cost}, {rate:,.0f} tok/s, "
                       f"{s.elapsed_s / 60:.1f} min, {s.cpu_s / 3600:.2f} core-hours")
        self._reset()

    def write(self, message: str) -> None:
        if not self.runlog.enabled:
            return
        if self.bar is not None:
            self.bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
