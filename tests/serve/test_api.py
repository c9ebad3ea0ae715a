"""`rnnsearch serve` API through FastAPI's test client: every endpoint, every limit, malformed input,
and results equal to the Python API's, batched or not."""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.decoding.translator import Translator
from rnnsearch.decoding.settings import SearchSettings

def as_served(translator, texts, search):
    """What the server answers for ``texts``: each through the text stage (text/pipeline.py) with its defaults."""
    from rnnsearch.text.pipeline import translate_lines
    return [t for part in translate_lines(translator, texts, search) for t in part]


SENTENCES = ["The big dog sees a cat .", "A small white cat sleeps in the old house .", "The dog eats ."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_checkpoint(tiny_run / "best.pt")


def client_for(translator, **settings) -> TestClient:
    return TestClient(create_app(translator, ServeSettings(**settings), checkpoint="best.pt"),
                      raise_server_exceptions=False)


def test_translate_one_and_many_equal_the_python_api(translator):
    with client_for(translator) as client:
        one = client.post("/translate", json={"text": SENTENCES[0], "beam": 3, "n_best": 2,
                                              "return_attention": True})
        many = client.post("/translate", json={"texts": SENTENCES, "beam": 3})
    assert one.status_code == 200 and many.status_code == 200
    expected = as_served(translator, SENTENCES, SearchSettings(beam=3, n_best=2))
    body = one.json()
    assert body["beam"] == 3 and body["model"] == "tiny"
    t = body["translations"][0]
    assert t["text"] == expected[0].text and t["tokens"] == expected[0].tokens
    assert t["source_tokens"] == expected[0].source_tokens and t["source_tokens"][-1] == "</s>"
    assert [h["text"] for h in t["nbest"]] == [h.text for h in expected[0].nbest]
    assert t["score"] == pytest.approx(expected[0].score, abs=1e-5)
    att = t["attention"]
    assert len(att) == len(t["tokens"]) + 1 and all(len(row) == len(t["source_tokens"]) for row in att)
    assert all(abs(sum(row) - 1) < 1e-2 for row in att)
    texts = [x["text"] for x in many.json()["translations"]]
    assert texts == [e.text for e in expected]
    assert all(x["attention"] is None for x in many.json()["translations"])  # not asked for


def test_concurrent_requests_are_batched_and_unchanged(translator):
    """Thirty concurrent one-sentence requests share searches (mean batch > 1), and every
    answer equals the sentence translated alone: batching and padding change nothing."""
    sentences = [SENTENCES[i % 3] if i % 2 else " ".join(SENTENCES[i % 3].split()[: 2 + i % 5]) + " ."
                 for i in range(30)]
    alone = {s: as_served(translator, [s], SearchSettings(beam=2))[0] for s in set(sentences)}
    with client_for(translator, max_batch=16, window_ms=50) as client:
        with ThreadPoolExecutor(10) as pool:
            answers = list(pool.map(lambda s: client.post("/translate", json={"text": s, "beam": 2}), sentences))
        metrics = client.get("/metrics.json").json()
    for s, r in zip(sentences, answers):
        assert r.status_code == 200
        t = r.json()["translations"][0]
        assert t["text"] == alone[s].text and t["score"] == pytest.approx(alone[s].score, abs=1e-4)
    assert metrics["sentences"] == sum(len(alone[s].segments) for s in sentences)  # each text's sentences
    assert metrics["searches"] < 30 and metrics["mean_batch_size"] > 1
    assert metrics["responses_by_status"] == {"200": 30} and metrics["errors"] == 0


def test_batching_off_searches_each_request_alone(translator):
    with client_for(translator, batching=False) as client:
        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda s: client.post("/translate", json={"text": s}), SENTENCES * 4))
        metrics = client.get("/metrics.json").json()
    assert all(r.status_code == 200 for r in answers)
    assert metrics["searches"] == 12 and metrics["mean_batch_size"] == 1


def test_health_metrics_page_docs(translator):
    with client_for(translator) as client:
        client.post("/translate", json={"text": SENTENCES[0]})
        health = client.get("/health").json()
        metrics = client.get("/metrics.json").json()
        page = client.get("/")
        docs = client.get("/docs")
        schema = client.get("/openapi.json").json()
        script = client.get("/static/page.js")
    assert health["status"] == "ok" and health["model"] == "tiny" and health["checkpoint"] == "best.pt"
    assert health["config"]["arch"] == "rnnsearch" and health["parameters"] > 0 and health["uptime_s"] >= 0
    assert health["settings"]["max_batch"] == 32 and health["attention"] is True
    assert health["pairs"] == [{"source": "en", "target": "fr", "model": "tiny"}]  # each direction served
    assert metrics["requests"] >= 1 and metrics["sentences"] == 1 and metrics["latency_ms"]["p50"] > 0
    assert set(metrics["latency_ms"]) >= {"p50", "p95", "p99"}
    assert page.status_code == 200 and 'id="heatmap"' in page.text and "/static/page.js" in page.text
    assert script.status_code == 200 and "drawHeatmap" in script.text
    import re
    missing = set(re.findall(r'\$\("([\w-]+)"\)', script.text)) - set(re.findall(r'id="([\w-]+)"', page.text))
    assert not missing, missing  # every element the script reads is on the page (the API key's field too)
    assert docs.status_code == 200 and "http" not in docs.text.split("<script>")[0].replace("http-equiv", "")
    assert "/translate" in schema["paths"] and "TranslateRequest" in str(schema["components"])
    for name in ("/health", "/metrics", "/metrics.json"):
        assert name in schema["paths"]


@pytest.mark.parametrize("body, status, kind, field", [
    ({"text": 3}, 422, "invalid_request", "text"),
    ({"texts": ["a", 5]}, 422, "invalid_request", "texts[1]"),
    ({"text": "a", "unknown": 1}, 422, "invalid_request", "unknown"),
    ({"text": "a", "texts": ["b"]}, 422, "invalid_request", "body"),
    ({}, 422, "invalid_request", "body"),
    ([1, 2], 422, "invalid_request", "body"),
    ({"texts": []}, 422, "invalid_request", "texts"),
    ({"text": "a", "text_handling": {"split": "maybe"}}, 422, "invalid_request", "text_handling.split"),
    ({"text": "a", "beam": 0}, 422, "invalid_request", "beam"),
    ({"text": "a", "beam": 2.5}, 422, "invalid_request", "beam"),
    ({"text": "a", "beam": 2, "n_best": 3}, 422, "invalid_request", "n_best"),
    ({"text": "a", "return_attention": "yes"}, 422, "invalid_request", "return_attention"),
])
def test_malformed_requests_get_clear_4xx(translator, body, status, kind, field):
    with client_for(translator) as client:
        r = client.post("/translate", json=body)
        assert client.get("/health").status_code == 200  # the server is still there
    assert r.status_code == status, r.text
    assert r.json()["kind"] == kind and r.json()["field"] == field and r.json()["error"]


def test_malformed_json_and_content_type(translator):
    with client_for(translator) as client:
        bad = client.post("/translate", content=b'{"text": "a",', headers={"content-type": "application/json"})
        binary = client.post("/translate", content=b"\xff\xfe\x00", headers={"content-type": "application/json"})
        form = client.post("/translate", content=b'{"text": "a"}', headers={"content-type": "text/plain"})
        wrong_method = client.get("/translate")
    assert bad.status_code == 400 and bad.json()["kind"] == "malformed_json" and "character" in bad.json()["error"]
    assert binary.status_code == 400 and binary.json()["kind"] == "malformed_json"
    assert form.status_code == 415 and "application/json" in form.json()["error"]
    assert wrong_method.status_code == 405


@pytest.mark.parametrize("settings, body, status, limit", [
    ({"max_chars": 20}, {"text": "a" * 21}, 413, "max_chars"),
    ({"max_chars": 20}, {"texts": ["fine", "b" * 25]}, 413, "max_chars"),
    ({"max_texts": 2}, {"texts": ["a", "b", "c"]}, 413, "max_texts"),
    ({"max_beam": 4}, {"text": "a", "beam": 5}, 422, "max_beam"),
    ({"max_body_bytes": 100}, {"text": "a " * 100}, 413, "max_body_bytes"),
])
def test_limits_say_which_and_its_value(translator, settings, body, status, limit):
    with client_for(translator, **settings) as client:
        r = client.post("/translate", json=body)
        ok = client.post("/translate", json={"text": "The dog ."})
    assert r.status_code == status and r.json()["limit"] == limit
    assert r.json()["value"] == settings[limit] and str(settings[limit]) in r.json()["error"]
    assert ok.status_code == 200


def test_source_length_limit_of_the_model(translator):
    """A text longer than the model reads is translated in pieces; asked not to cut it, 413 naming it."""
    limit = translator.decode_cfg.max_src_len
    texts = ["a b", "dog " * (limit + 1)]
    with client_for(translator, max_chars=100000, max_body_bytes=10**6) as client:
        whole = client.post("/translate", json={"texts": texts, "text_handling": {"max_units": 10 * limit}})
        pieces = client.post("/translate", json={"texts": texts, "beam": 1})
    assert whole.status_code == 413 and whole.json()["limit"] == "decode.max_src_len"
    assert whole.json()["field"] == "texts[1]"
    assert pieces.status_code == 200 and all(t["text"] for t in pieces.json()["translations"])


def test_a_blank_text_gets_an_empty_translation_and_the_others_theirs(translator):
    with client_for(translator) as client:
        r = client.post("/translate", json={"texts": ["The dog eats .", "   ", ""], "beam": 2})
    assert r.status_code == 200, r.text
    first, blank, empty = r.json()["translations"]
    assert first["text"] and blank["text"] == empty["text"] == "" and blank["error"] is None


def test_chunked_body_over_the_limit(translator):
    def chunks():
        for _ in range(50):
            yield b" " * 100
    with client_for(translator, max_body_bytes=1000) as client:
        r = client.post("/translate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["limit"] == "max_body_bytes"


class GatedTranslator:
    """The real translator, but each search waits until the test opens the gate."""

    def __init__(self, inner):
        self.inner, self.gate, self.entered = inner, threading.Event(), threading.Event()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def translate_units(self, *args, **kwargs):
        self.entered.set()
        assert self.gate.wait(10)
        return self.inner.translate_units(*args, **kwargs)


def test_timeout_and_full_queue_give_503_and_the_server_recovers(translator):
    gated = GatedTranslator(translator)
    with client_for(gated, max_queue=2, timeout_s=1.0) as client, ThreadPoolExecutor(4) as pool:
        first = pool.submit(client.post, "/translate", json={"text": "The dog ."})
        assert gated.entered.wait(10)  # the first search is running (and blocked)
        queued = pool.submit(client.post, "/translate", json={"texts": ["a cat .", "a dog ."]})
        app = client.app
        deadline = time.time() + 10
        while app.state.batcher.queued < 2 and time.time() < deadline:
            time.sleep(0.01)
        full = client.post("/translate", json={"text": "one more ."})
        assert full.status_code == 503 and full.json()["limit"] == "max_queue" and full.json()["value"] == 2
        assert full.headers["retry-after"] == "1"
        assert first.result().status_code == 503 and first.result().json()["limit"] == "timeout_s"
        assert queued.result().status_code == 503  # timed out while waiting behind the blocked search
        assert app.state.batcher.queued == 0  # a timed-out request gives its place in the queue back
        gated.gate.set()
        while app.state.metrics.searches < 1 and time.time() < deadline + 10:  # the blocked search ends
            time.sleep(0.01)
        # recovery, with a timeout a slow shared machine cannot miss
        app.state.batcher.settings = ServeSettings(max_queue=2, timeout_s=60.0)
        after = client.post("/translate", json={"text": "The dog ."})
        metrics = client.get("/metrics.json").json()
    assert after.status_code == 200 and after.json()["translations"][0]["text"]
    assert metrics["errors_by_kind"] == {"max_queue": 1, "timeout_s": 2}


def test_a_request_larger_than_the_queue_gets_413_not_a_retry_that_never_succeeds(translator):
    """Six texts of 200 sentences each got 503 "busy: 0 sentences are waiting" with Retry-After, every time."""
    with client_for(translator, max_queue=3) as client:
        big = client.post("/translate", json={"texts": ["The dog . A cat .", "The hat . The dog ."]})
        small = client.post("/translate", json={"texts": ["The dog . A cat ."]})
    assert big.status_code == 413 and big.json()["limit"] == "max_queue" and "retry-after" not in big.headers
    assert "4 sentences" in big.json()["error"] and small.status_code == 200

async def _one_search_held(gated):
    """A Batcher (no batching) whose first job is in the model, held there by ``gated``: (the batcher, that
    job's task, one sentence's item, the search key)."""
    import asyncio
    from rnnsearch.serve.batcher import Batcher, translating
    from rnnsearch.serve.metrics import Metrics
    item, search = (gated.src_codec.units("The dog ."), [], ((), ())), translating(SearchSettings(beam=2))
    batcher = Batcher(gated, ServeSettings(timeout_s=30.0, batching=False), Metrics())
    batcher.start()
    running = asyncio.ensure_future(batcher.submit([item], search))
    while not gated.entered.is_set():
        await asyncio.sleep(0.01)
    return batcher, running, item, search


def test_a_request_whose_client_left_leaves_the_queue(translator):
    """Three clients that gave up after 0.5 s kept 120 sentences queued and translated; the next request
    waited 30 s and got a 503."""
    import asyncio
    from rnnsearch.serve.batcher import CLIENT_GONE, ClientGone
    gated = GatedTranslator(translator)

    async def scenario():
        batcher, running, item, search = await _one_search_held(gated)
        left = asyncio.Event()

        async def gone():
            return left.is_set()
        CLIENT_GONE.set(gone)
        waiting = asyncio.ensure_future(batcher.submit([item] * 40, search))
        await asyncio.sleep(0.1)
        queued_before = batcher.queued
        left.set()
        with pytest.raises(ClientGone):
            await waiting
        queued_after = batcher.queued
        gated.gate.set()
        await running
        await batcher.stop()
        return queued_before, queued_after
    assert asyncio.run(scenario()) == (40, 0)


def test_a_drain_out_of_time_answers_what_waits_and_runs_503(translator):
    """A request still running when --drain-timeout ran out got a plain-text 500 and a traceback in the log."""
    import asyncio
    from rnnsearch.serve.batcher import ShuttingDown
    gated = GatedTranslator(translator)

    async def scenario():
        batcher, running, item, search = await _one_search_held(gated)
        waiting = asyncio.ensure_future(batcher.submit([item] * 3, search))
        await asyncio.sleep(0.05)
        batcher.abort()
        outcomes = await asyncio.gather(running, waiting, return_exceptions=True)
        gated.gate.set()
        await batcher.stop()
        return [type(o) for o in outcomes], batcher.queued
    assert asyncio.run(scenario()) == ([ShuttingDown, ShuttingDown], 0)


def test_a_failing_model_gives_500_json_and_the_server_survives(translator, caplog):
    class Broken(GatedTranslator):
        calls = 0

        def translate_units(self, *args, **kwargs):
            Broken.calls += 1
            if Broken.calls == 1:
                raise RuntimeError("out of memory (simulated)")
            return self.inner.translate_units(*args, **kwargs)
    with client_for(Broken(translator)) as client, caplog.at_level(logging.ERROR, logger="rnnsearch.serve"):
        r = client.post("/translate", json={"text": "The dog ."})
        again = client.post("/translate", json={"text": "The dog ."})
    body = r.json()
    logged = caplog.text  # the details go to the server log, under the request id
    assert "out of memory (simulated)" in logged and f"request {body['request_id']}" in logged
    assert r.status_code == 500 and body["kind"] == "internal" and "simulated" not in r.text  # safe message
    assert body["request_id"] == r.headers["x-request-id"] and body["request_id"] in body["error"]
    assert again.status_code == 200


def test_a_release_is_served_under_its_release_name(tiny_run, tmp_path):
    from rnnsearch.analysis.release import make_release
    make_release(tiny_run / "best.pt", tmp_path / "tiny_release", log=lambda *_: None)
    released = Translator.from_pretrained(str(tmp_path / "tiny_release"))
    with client_for(released) as client:
        health, found = client.get("/health").json(), client.post("/translate", json={"text": SENTENCES[0]}).json()
    assert health["model"] == found["model"] == "tiny_release" and released.config.name == "tiny"
