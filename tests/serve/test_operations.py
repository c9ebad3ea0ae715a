"""Operating the server: Prometheus metrics, request ids, a fuzz of /translate, and the drain on
SIGTERM under load (a real server process)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from conftest import REPO
from rnnsearch.decoding.translator import Translator
from rnnsearch.serve import ServeSettings, create_app


@pytest.fixture(scope="module")
def app(tiny_run):
    return create_app(Translator.from_checkpoint(tiny_run / "best.pt"), ServeSettings(max_texts=8, max_chars=300),
                      checkpoint="best.pt")


def test_metrics_in_the_prometheus_format(app):
    with TestClient(app, raise_server_exceptions=False) as client:
        for text in ("The dog sees a cat .", "A cat ."):
            assert client.post("/translate", json={"text": text}).status_code == 200
        assert client.post("/translate", json={"texts": []}).status_code == 422
        r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    assert samples[("rnnsearch_http_responses_total", (("status", "200"),))] >= 2
    assert samples[("rnnsearch_errors_total", (("kind", "invalid_request"),))] >= 1
    assert samples[("rnnsearch_sentences_translated_total", ())] >= 2
    assert samples[("rnnsearch_translate_latency_seconds_count", ())] >= 3
    assert samples[("rnnsearch_search_batch_sentences_count", ())] >= 2
    assert families["rnnsearch_translate_latency_seconds"].type == "histogram"
    assert ("rnnsearch_queue_sentences", ()) in samples and ("rnnsearch_translate_requests_in_flight", ()) in samples


def test_every_response_carries_a_request_id(app):
    with TestClient(app, raise_server_exceptions=False) as client:
        mine = client.post("/translate", json={"text": "A cat ."}, headers={"X-Request-ID": "abc-123"})
        odd = client.post("/translate", json={"text": 5}, headers={"X-Request-ID": "bad id\\n"})
        health = client.get("/health")
    assert mine.headers["x-request-id"] == "abc-123"
    assert odd.status_code == 422 and odd.json()["request_id"] == odd.headers["x-request-id"] != "bad id\\n"
    assert len(health.headers["x-request-id"]) == 16


# no subnormal floats: tests that call the CLI in this process set flush-to-zero (runtime.tune_process)
SCALARS = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_subnormal=False)
           | st.text(max_size=50))
JSON = st.recursive(SCALARS,
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                    max_leaves=10)
ODD_TEXT = st.sampled_from(["", " ", "\u202eevil", "😀" * 40, "e\u0301" * 20, "\u0000nul", "\ufeffbom", "a\u2028b",
                            "ن" * 30, "x" * 301, "The dog .", "\ud800", "a\udc00b"])
FIELDS = st.fixed_dictionaries({}, optional={
    "text": ODD_TEXT | JSON, "texts": st.lists(ODD_TEXT, max_size=10) | JSON,
    "beam": st.integers(-3, 25) | JSON, "n_best": st.integers(-3, 25) | JSON, "return_attention": JSON,
    "prefix": ODD_TEXT | JSON, "prefixes": st.lists(ODD_TEXT, max_size=10) | JSON, "extra": JSON})


def _body(value) -> bytes:
    """JSON with every non-ASCII character escaped (lone surrogates too), as a client may send it."""
    return json.dumps(value, ensure_ascii=True).encode()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=FIELDS | JSON, raw=st.sampled_from([None, b"", b"{", b"\xff\xfe", b"[" * 5000, b"1e999999",
                                                 b'{"text": "\\ud83d"}', b'{"beam": 1e400}']))
def test_fuzz_translate_answers_200_or_4xx_json(app, body, raw):
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/translate", content=raw if raw is not None else _body(body),
                        headers={"content-type": "application/json"})
        assert r.status_code == 200 or 400 <= r.status_code < 500, (r.status_code, r.text[:300])
        assert isinstance(r.json(), dict)
        if r.status_code >= 400:
            assert r.json()["kind"] and r.json()["request_id"] == r.headers["x-request-id"]
        assert client.get("/health").status_code == 200


PAIR = st.fixed_dictionaries({}, optional={"source": ODD_TEXT | JSON, "target": ODD_TEXT | JSON, "extra": JSON})
SCORE_FIELDS = st.fixed_dictionaries({}, optional={
    "source": ODD_TEXT | JSON, "target": ODD_TEXT | JSON, "pairs": st.lists(PAIR, max_size=5) | JSON,
    "return_units": st.booleans() | JSON, "return_attention": st.booleans() | JSON, "extra": JSON})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=SCORE_FIELDS | JSON)
def test_fuzz_score_answers_200_or_4xx_json(app, body):
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/score", content=_body(body), headers={"content-type": "application/json"})
        assert r.status_code == 200 or 400 <= r.status_code < 500, (r.status_code, r.text[:300])
        assert isinstance(r.json(), dict)
        if r.status_code >= 400:
            assert r.json()["kind"] and r.json()["request_id"] == r.headers["x-request-id"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_under_load_drains_then_exits_0(tiny_run):
    """16 clients keep the server busy; SIGTERM: every request the server accepted is answered 200,
    the ones after it get 503 with Retry-After, none is cut, and the process exits 0."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    server = subprocess.Popen([sys.executable, "-m", "rnnsearch", "serve", str(tiny_run / "best.pt"), "--port",
                               str(port), "--log-level", "warning", "--drain-timeout", "60"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        outcomes, lock, stop = [], threading.Lock(), threading.Event()

        def client(k: int) -> None:
            with httpx.Client(base_url=url, timeout=60) as http:
                while not stop.is_set():
                    try:
                        r = http.post("/translate", json={"texts": ["The big dog sees a small cat ."] * (1 + k % 4),
                                                          "beam": 3})
                    except httpx.HTTPError as exc:
                        with lock:
                            outcomes.append(("cut", repr(exc)))
                        return
                    with lock:
                        outcomes.append((r.status_code, r.headers.get("retry-after")))
                    if r.status_code == 503:
                        return  # told to go elsewhere

        threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        while sum(1 for o in outcomes if o[0] == 200) < 40:
            time.sleep(0.01)
        server.send_signal(signal.SIGTERM)
        code = server.wait(120)
        stop.set()
        for t in threads:
            t.join(60)
    finally:
        if server.poll() is None:
            server.kill()
    log = server.stdout.read()
    assert code == 0, log[-2000:]
    statuses = [o[0] for o in outcomes]
    assert "cut" not in statuses, [o for o in outcomes if o[0] == "cut"][:3]
    assert set(statuses) <= {200, 503} and statuses.count(503) == 16  # each client's last answer
    assert all(retry == "1" for status, retry in outcomes if status == 503)
    assert "draining:" in log and "every accepted request answered" in log
