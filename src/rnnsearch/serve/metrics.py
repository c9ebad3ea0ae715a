"""Counters and latency percentiles for ``GET /metrics``."""
from __future__ import annotations

import time
from collections import Counter, deque

import numpy as np


class Metrics:
    def __init__(self, window: int = 10000):
        self.started = time.monotonic()
        self.requests = 0
        self.status = Counter()          # HTTP status -> responses
        self.errors = Counter()          # error kind -> responses
        self.sentences = 0               # sentences translated
        self.searches = 0                # calls of the model's search (batches)
        self.latencies = deque(maxlen=window)  # seconds, /translate requests only

    def uptime(self) -> float:
        return time.monotonic() - self.started

    def record_response(self, status: int, seconds: float | None, error: str | None = None) -> None:
        self.requests += 1
        self.status[status] += 1
        if error:
            self.errors[error] += 1
        if seconds is not None:
            self.latencies.append(seconds)

    def record_search(self, sentences: int) -> None:
        self.searches += 1
        self.sentences += sentences

    def snapshot(self, queued: int) -> dict:
        lat = np.asarray(self.latencies, dtype=float) * 1000.0
        pct = {f"p{q}": (round(float(np.percentile(lat, q)), 2) if lat.size else None) for q in (50, 95, 99)}
        return {
            "uptime_s": round(self.uptime(), 1),
            "requests": self.requests,
            "responses_by_status": {str(k): v for k, v in sorted(self.status.items())},
            "errors": sum(self.errors.values()),
            "errors_by_kind": dict(self.errors),
            "sentences": self.sentences,
            "searches": self.searches,
            "mean_batch_size": round(self.sentences / self.searches, 2) if self.searches else None,
            "queued_sentences": queued,
            "latency_ms": {**pct, "mean": round(float(lat.mean()), 2) if lat.size else None,
                           "window": int(lat.size)},
        }
