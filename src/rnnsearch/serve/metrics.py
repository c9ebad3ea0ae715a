"""The server's metrics: Prometheus counters, gauges and histograms (prometheus_client, one registry
per app) served at ``GET /metrics`` in the text exposition format, and the same numbers with
latency percentiles as JSON at ``GET /metrics.json``."""
from __future__ import annotations

import time
from collections import Counter as Tally, deque

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)  # seconds
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # sentences per search


class Metrics:
    def __init__(self, window: int = 10000):
        self.started = time.monotonic()
        self.registry = r = CollectorRegistry()
        self.responses = Counter("rnnsearch_http_responses", "HTTP responses, by status code", ["status"], registry=r)
        self.errors = Counter("rnnsearch_errors", "error responses, by kind (the body's 'kind')", ["kind"],
                              registry=r)
        self.latency = Histogram("rnnsearch_translate_latency_seconds", "POST /translate, arrival to answer",
                                 buckets=LATENCY_BUCKETS, registry=r)
        self.batch = Histogram("rnnsearch_search_batch_sentences", "sentences per batched search",
                               buckets=BATCH_BUCKETS, registry=r)
        self.sentences_total = Counter("rnnsearch_sentences_translated", "sentences translated", registry=r)
        self.pairs_total = Counter("rnnsearch_pairs_scored", "sentence pairs scored (POST /score)", registry=r)
        self.queue = Gauge("rnnsearch_queue_sentences", "sentences waiting for the model", registry=r)
        self.in_flight = Gauge("rnnsearch_translate_requests_in_flight", "accepted /translate and /score "
                               "requests not yet answered", registry=r)
        Gauge("rnnsearch_start_time_seconds", "when the server started (Unix time)", registry=r).set(time.time())
        # for the JSON view: exact counts and a window of latencies
        self.requests, self.status, self.kinds = 0, Tally(), Tally()
        self.sentences, self.searches, self.active, self.pairs = 0, 0, 0, 0
        self.latencies = deque(maxlen=window)

    def uptime(self) -> float:
        return time.monotonic() - self.started

    def record_response(self, status: int, seconds: float | None, error: str | None = None) -> None:
        self.requests += 1
        self.status[status] += 1
        self.responses.labels(str(status)).inc()
        if error:
            self.kinds[error] += 1
            self.errors.labels(error).inc()
        if seconds is not None:
            self.latencies.append(seconds)
            self.latency.observe(seconds)

    def begin(self) -> None:
        """An accepted /translate or /score request starts."""
        self.active += 1
        self.in_flight.set(self.active)

    def end(self) -> None:
        self.active -= 1
        self.in_flight.set(self.active)

    def record_search(self, sentences: int) -> None:
        self.searches += 1
        self.sentences += sentences
        self.sentences_total.inc(sentences)
        self.batch.observe(sentences)

    def record_scoring(self, pairs: int) -> None:
        self.pairs += pairs
        self.pairs_total.inc(pairs)

    def exposition(self, queued: int) -> bytes:
        """The Prometheus text format."""
        self.queue.set(queued)
        return generate_latest(self.registry)

    def snapshot(self, queued: int) -> dict:
        """The JSON view."""
        lat = np.asarray(self.latencies, dtype=float) * 1000.0
        pct = {f"p{q}": (round(float(np.percentile(lat, q)), 2) if lat.size else None) for q in (50, 95, 99)}
        return {
            "uptime_s": round(self.uptime(), 1),
            "requests": self.requests,
            "responses_by_status": {str(k): v for k, v in sorted(self.status.items())},
            "errors": sum(self.kinds.values()),
            "errors_by_kind": dict(self.kinds),
            "sentences": self.sentences,
            "searches": self.searches,
            "mean_batch_size": round(self.sentences / self.searches, 2) if self.searches else None,
            "pairs_scored": self.pairs,
            "queued_sentences": queued,
            "in_flight": self.active,
            "latency_ms": {**pct, "mean": round(float(lat.mean()), 2) if lat.size else None,
                           "window": int(lat.size)},
        }
