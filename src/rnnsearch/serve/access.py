"""API keys and request limits of the LibreTranslate endpoints, as LibreTranslate's ``--api-keys`` and
``--req-limit`` work: off by default; with keys on, a key the server does not know is refused (403
"Invalid API key"), a request without one is served at the default limit, and a client (its key, or
its address without one) past its requests per minute is told to slow down (429 "Slowdown: N per 1
minute").

The keys file: one key a line, optionally a tab and that key's own limit per minute; blank lines and
lines from ``#`` are skipped.
"""
from __future__ import annotations

import time
from collections import defaultdict, deque
from pathlib import Path

from rnnsearch.errors import UsageError

WINDOW_S = 60.0


def read_api_keys(path: str | Path) -> dict[str, int | None]:
    """{key: its limit per minute (None: the default)} from a keys file; a bad line is one error naming it."""
    keys: dict[str, int | None] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--api-keys {path}: cannot read it ({exc.__class__.__name__}): give a text file of keys") from None
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, limit = line.partition("\t")
        if not key.strip() or (limit.strip() and not limit.strip().isdigit()):
            raise UsageError(f"--api-keys {path} line {n}: expected 'KEY' or 'KEY<TAB>REQUESTS PER MINUTE'")
        keys[key.strip()] = int(limit) if limit.strip() else None
    if not keys:
        raise UsageError(f"--api-keys {path}: no key in it")
    return keys


class Access:
    """Who may ask, and how often: ``check(key, address)`` gives None (go on) or (status, message)."""

    def __init__(self, keys: dict[str, int | None] | None = None, req_limit: int = 0, clock=time.monotonic):
        self.keys, self.req_limit, self.clock = keys, req_limit, clock
        self.seen: dict[str, deque] = defaultdict(deque)

    @property
    def keys_on(self) -> bool:
        return self.keys is not None

    def check(self, key: str | None, address: str) -> tuple[int, str] | None:
        if self.keys is not None and key and key not in self.keys:
            return 403, "Invalid API key"
        limit = (self.keys or {}).get(key) if key else None
        limit = limit if limit is not None else self.req_limit
        if limit <= 0:
            return None
        now, seen = self.clock(), self.seen[f"key:{key}" if key else f"address:{address}"]
        while seen and now - seen[0] >= WINDOW_S:
            seen.popleft()
        if len(seen) >= limit:
            return 429, f"Slowdown: {limit} per 1 minute"
        seen.append(now)
        return None
