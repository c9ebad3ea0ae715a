"""Folders written whole or not at all (a release, a prepared dataset)."""
from __future__ import annotations

import shutil
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
