"""The one base class of the errors a user can cause and fix: a bad config, corpus, checkpoint or
argument. The command line prints these as one line (exit 2); any other exception is a bug, or a
failure of the machine, and keeps its traceback."""
from __future__ import annotations


class UserError(Exception):
    """Bad input, with a message that names the file, line, key or flag at fault."""


class UsageError(UserError, ValueError):
    """Arguments that do not go together, or a value outside what a function accepts."""
