"""The server's limits and batching knobs, one frozen dataclass (CLI flags fill it)."""
from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class ServeSettings:
    batching: bool = True          # gather concurrent requests into one search
    max_batch: int = 32            # sentences per search when batching
    window_ms: float = 5.0         # how long the first waiting request waits for company
    max_chars: int = 1000          # characters per text
    max_texts: int = 64            # texts per request
    max_body_bytes: int = 256 * 1024  # request body
    max_queue: int = 1024          # sentences waiting for the model; more gives 503
    timeout_s: float = 30.0        # per request, from arrival to answer
    max_beam: int = 20             # largest beam a request may ask for
    threads: int = 0               # torch intra-op threads for the model (0 = torch's default)

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("batching",):
                continue
            low = 0 if f.name in ("window_ms", "threads") else 1
            if not isinstance(value, (int, float)) or value < low:
                raise ValueError(f"serve setting {f.name} must be a number >= {low}, got {value!r}")

    def limits(self) -> dict:
        """The request limits, as /health shows them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
