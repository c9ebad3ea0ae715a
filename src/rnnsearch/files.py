"""Folders and files written whole or not at all (a release, a prepared dataset, a snapshot, a
translated document), and files' digests."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator


@contextmanager
def whole_or_absent(out: str | Path) -> Iterator[Path]:
    """Yields ``.NAME.partial`` beside ``out`` to fill. When the block ends normally it becomes
    ``out`` (an existing ``out`` is replaced); on any exception, Ctrl-C included, it is removed and
    ``out`` is left as it was."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        yield tmp
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def file_whole_or_absent(path: str | Path, newline: str = "\n") -> Iterator:
    """An open text file (UTF-8; ``newline`` ends each line written) on ``.NAME.partial`` beside ``path``, which
    becomes ``path`` when the block ends normally; on any exception (Ctrl-C, SIGTERM made an exception by the
    caller) it is removed and ``path`` left as it was."""
    path = Path(path)
    if path.exists() and not path.is_file():  # a device or a pipe (/dev/stdout): written through, as it goes
        with open(path, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
        return
    path = path.resolve()  # a symbolic link: the file it names is the one written
    tmp = path.with_name(f".{path.name}.partial")
    try:
        with open(tmp, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
        if path.exists():
            shutil.copymode(path, tmp)  # the file's permissions stay its own
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_whole(path: str | Path, data: str | bytes) -> None:
    """``data`` (text as UTF-8) into ``path``, whole or not at all (``file_whole_or_absent``)."""
    with file_whole_or_absent(path, "") as fh:
        fh.buffer.write(data.encode("utf-8") if isinstance(data, str) else data)


def writable_file(out: str | Path, inputs=()) -> None:
    """A UsageError naming ``out`` where no file can be written there: a folder, no folder to put it in, or one
    of the command's ``inputs`` (``translate --input F --output F`` wrote French over the English)."""
    from rnnsearch.errors import UsageError
    out = Path(out)
    if any(str(i) not in ("", "-") and out.resolve() == Path(i).resolve() for i in inputs if i is not None):
        raise UsageError(f"{out}: the output would overwrite an input; name another file")
    if out.is_dir():
        raise UsageError(f"{out}: a folder; name the file to write")
    if not out.resolve().parent.is_dir():
        raise UsageError(f"{out}: no folder {out.resolve().parent} to write it in")
    if out.exists() and not out.resolve().is_file():
        return  # a device or a pipe: written through
    try:  # where its whole-or-absent copy goes: found out now, not after the work (/proc, a read-only folder)
        with tempfile.NamedTemporaryFile(dir=out.resolve().parent, prefix=".rnnsearch-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"{out}: cannot write in {out.resolve().parent} ({exc.strerror or exc})") from None


def sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex (read a MiB at a time)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
