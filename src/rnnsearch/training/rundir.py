"""A run directory (``--out RUN``) and its files: one training process at a time (a lock), the
resolved config, the log's and checkpoints' upkeep on resume, and the checkpoints kept.

The lock is ``RUN/.lock``, held with flock for the whole run by the one process that writes (rank
0 under torchrun); the file names the holder's pid and host. A second ``train`` on the same
directory stops at once, naming that pid. The kernel drops a dead process's lock, so a run killed
with SIGKILL leaves only the file, whose pid is no longer running: the next run takes the lock
over and says so.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path

from rnnsearch import checkpoint
from rnnsearch.config import Config, to_dict
from rnnsearch.training.state import TrainError

KEPT = "step-{step:08d}.pt"  # train.keep_last's copies (hard links to that step's last.pt)


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_fd: int | None = None

    # -- one process per run ------------------------------------------------------------------
    def lock(self) -> str | None:
        """Take RUN/.lock or raise TrainError naming its holder; returns a note when the lock of a
        process that is no longer running was taken over."""
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise TrainError(f"{self.path} is in use by another training process ({holder}); wait for it to "
                             "end or stop it (it saves last.pt on SIGTERM), or choose another --out") from None
        previous, note = _read_holder(fd), None
        if previous and previous.split()[1] != str(os.getpid()):
            note = f"{self.path}: took over the lock of {previous}, which is no longer running"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        self._lock_fd = fd
        return note

    def unlock(self) -> None:
        """Release the lock (the file stays, empty: no holder)."""
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None

    # -- files ------------------------------------------------------------------------------
    def check_writable(self) -> None:
        """Fail before any work when the run directory cannot be created or written."""
        probe = self.path / f".write-test-{os.getpid()}"
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError as exc:
            raise TrainError(f"{self.path}: the run directory cannot be written: {exc.strerror or exc}") from None

    def write_config(self, cfg: Config) -> None:
        """The resolved config of this invocation, for people and ``rnnsearch status`` (the
        checkpoint holds its own copy); replaced atomically."""
        import yaml
        _replace_text(self.path / "config.yaml", yaml.safe_dump(to_dict(cfg), sort_keys=False))

    def remove_stale_temporaries(self) -> list[str]:
        """Temporary checkpoint files left by a process killed while saving."""
        gone = []
        for tmp in self.path.glob(".*.pt.*.tmp"):
            tmp.unlink(missing_ok=True)
            gone.append(tmp.name)
        return gone

    def trim_log(self, step: int) -> int:
        """Drop the log entries written after ``step`` (those a resumed run will write again) and
        any torn last line; returns how many entries went. The file is replaced atomically."""
        path = self.path / "log.jsonl"
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
            _replace_text(path, "".join(kept))
        return dropped

    def save(self, payload: dict, names: tuple[str, ...], step: int, keep_last: int = 0) -> None:
        """Write the checkpoint ``names`` in order (atomically each); with ``keep_last``, also keep
        this save as step-N.pt (a hard link to last.pt) and remove the older ones beyond N."""
        for name in names:
            try:
                checkpoint.save(self.path / name, payload)
            except checkpoint.CheckpointError as exc:
                kept = " (the previous one is intact)" if (self.path / name).exists() else ""
                raise TrainError(f"{exc}{kept}") from None
        if keep_last and "last.pt" in names:
            kept = self.path / KEPT.format(step=step)
            kept.unlink(missing_ok=True)
            os.link(self.path / "last.pt", kept)
            for old in self.kept()[:-keep_last]:
                old.unlink(missing_ok=True)

    def kept(self) -> list[Path]:
        """The step-N.pt checkpoints of train.keep_last, oldest first."""
        return sorted(self.path.glob("step-*.pt"))


def _read_holder(fd: int) -> str:
    text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    return text if text.startswith("pid ") else ""


def _replace_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
