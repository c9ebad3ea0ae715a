"""The one base class of the errors a user can cause and fix: a bad config, corpus, checkpoint or
argument. The command line prints these as one line (exit 2); any other exception is a bug, or a
failure of the machine, and keeps its traceback."""
from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """Bad input, with a message that names the file, line, key or flag at fault."""


class UsageError(UserError, ValueError):
    """Arguments that do not go together, or a value outside what a function accepts."""


def existing_file(path, error: type[UserError], missing: str, expected: str) -> Path:
    """``path`` as a Path when it names an existing file; else ``error``: "PATH: {missing} not
    found" or "PATH: is a directory, expected {expected}"."""
    path = Path(path)
    if not path.exists():
        raise error(f"{path}: {missing} not found")
    if path.is_dir():
        raise error(f"{path}: is a directory, expected {expected}")
    return path


def flag(field: str) -> str:
    """A settings field as the command line calls it, in its flags and its errors: n_best -> --n-best."""
    return "--" + field.replace("_", "-")
