"""Checkpoints: written atomically (temporary file, fsync, rename), loaded with clear errors."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from rnnsearch.errors import UserError, existing_file

FORMAT = "rnnsearch-checkpoint"
VERSION = 1


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be written or read, with the reason."""


def save(path: str | Path, payload: dict) -> None:
    """Write ``payload`` to ``path`` so that ``path`` is always either the old or the new file."""
    path = Path(path)
    payload = {"format": FORMAT, "version": VERSION, **payload}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot write checkpoint: {exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(payload, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise CheckpointError(f"{path}: cannot write checkpoint: {exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path, map_location="cpu") -> dict:
    path = existing_file(path, CheckpointError, "checkpoint", f"a checkpoint file (e.g. {path}/best.pt)")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, EOFError, UnpicklingError, ...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated or corrupt?): {reason}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not an rnnsearch checkpoint")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {payload.get('version')} is not supported "
                              f"(this rnnsearch reads version {VERSION})")
    for key in ("config", "src_codec", "tgt_codec", "model"):
        if key not in payload:
            raise CheckpointError(f"{path}: checkpoint lacks {key!r}")
    return payload
