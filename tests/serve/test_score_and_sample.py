"""`POST /score` (log p(target | source) of given pairs) and sampled translations through
`POST /translate`: equal to the Python API, batched or not, with clear errors for bad requests."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

from rnnsearch.config import replace
from rnnsearch.decoding.sampling import Sampling
from rnnsearch.decoding.translator import Translator
from rnnsearch.model import build_model
from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.decoding.settings import SearchSettings

SOURCES = ["The big dog sees a cat .", "A small white cat sleeps in the old house .", "The dog eats ."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_checkpoint(tiny_run / "best.pt")


def client_for(translator, **settings) -> TestClient:
    return TestClient(create_app(translator, ServeSettings(**settings)), raise_server_exceptions=False)


def test_scores_equal_the_python_api_and_the_search_scores(translator):
    """A pair's score is Translator.score's; the score of the server's own best translation is the
    score the search reported for it; one pair and several agree; metrics count the pairs."""
    found = translator.translate(SOURCES, SearchSettings(beam=3))
    targets = [t.text for t in found[:2]] + ["Le chat mange un oiseau inconnu ."]
    with client_for(translator, max_batch=4, window_ms=50) as client:
        many = client.post("/score", json={"pairs": [{"source": s, "target": t} for s, t in zip(SOURCES, targets)]})
        with ThreadPoolExecutor(3) as pool:  # concurrent requests are scored in shared batches
            ones = list(pool.map(lambda st: client.post("/score", json={"source": st[0], "target": st[1]}),
                                 zip(SOURCES, targets)))
        metrics = client.get("/metrics.json").json()
        health = client.get("/health").json()
    assert many.status_code == 200, many.text
    expected = translator.score(SOURCES, targets)
    scores = many.json()["scores"]
    assert many.json()["model"] == "tiny" and len(scores) == 3
    for got, want in zip(scores, expected, strict=True):
        assert got["logprob"] == pytest.approx(want.logprob, abs=1e-4) and got["units"] == want.units
        assert got["unknown"] == want.unknown and got["per_unit"] == pytest.approx(want.per_unit, abs=1e-4)
    for t, got in zip(found[:2], scores):
        assert got["logprob"] == pytest.approx(t.score, abs=1e-3)
    assert [r.json()["scores"][0]["logprob"] for r in ones] == pytest.approx([s.logprob for s in expected], abs=1e-4)
    assert metrics["pairs_scored"] == 6 and metrics["sentences"] == 0 and metrics["in_flight"] == 0
    assert health["score"] is True


def test_units_and_attention_of_a_given_translation(translator):
    """return_units / return_attention: each unit's log-probability (adding up to the score) and the
    attention of the steps that emitted the target; for the server's own translation, the attention
    /translate returned with it. Without them the fields are null; an RNNencdec has no attention."""
    found = translator.translate(SOURCES[:2], SearchSettings(beam=3))
    pairs = [{"source": SOURCES[0], "target": found[0].text}, {"source": SOURCES[1], "target": "Un chat ."}]
    with client_for(translator, max_batch=4, window_ms=50) as client:
        with ThreadPoolExecutor(2) as pool:  # a plain and a detailed request at once: not mixed up
            plain, full = pool.map(lambda body: client.post("/score", json=body), [
                {"pairs": pairs}, {"pairs": pairs, "return_units": True, "return_attention": True}])
        searched = client.post("/translate", json={"text": SOURCES[0], "beam": 3, "return_attention": True})
        only_attention = client.post("/score", json={**pairs[0], "return_attention": True})
    assert plain.status_code == full.status_code == only_attention.status_code == 200, full.text
    assert all(v is None for sc in plain.json()["scores"]
               for k, v in sc.items() if k in ("tokens", "source_tokens", "unit_logprobs", "attention"))
    expected = translator.score([p["source"] for p in pairs], [p["target"] for p in pairs], details=True)
    for got, want in zip(full.json()["scores"], expected, strict=True):
        assert got["tokens"] == list(want.tokens) and got["source_tokens"] == list(want.source_tokens)
        assert len(got["unit_logprobs"]) == got["units"] == len(got["tokens"]) + 1
        assert sum(got["unit_logprobs"]) == pytest.approx(got["logprob"], abs=1e-4)
        assert len(got["attention"]) == got["units"] and all(len(r) == len(got["source_tokens"]) for r in got["attention"])
        assert [sum(r) for r in got["attention"]] == pytest.approx([1.0] * got["units"], abs=1e-3)
    t = searched.json()["translations"][0]
    assert np.allclose(full.json()["scores"][0]["attention"], t["attention"], atol=2e-4)
    one = only_attention.json()["scores"][0]
    assert one["tokens"] is None and one["unit_logprobs"] is None and one["source_tokens"] == t["source_tokens"]

    model_cfg = replace(translator.config.model, arch="rnnencdec")
    encdec = Translator(build_model(model_cfg, len(translator.src_codec.vocab), len(translator.tgt_codec.vocab), seed=0),
                        translator.src_codec, translator.tgt_codec, replace(translator.config, model=model_cfg))
    with client_for(encdec) as client:
        r = client.post("/score", json={**pairs[1], "return_units": True, "return_attention": True})
    assert r.status_code == 200 and r.json()["scores"][0]["attention"] is None
    assert len(r.json()["scores"][0]["unit_logprobs"]) == r.json()["scores"][0]["units"]


def test_a_blank_target_scores_the_end_of_sentence(translator):
    with client_for(translator) as client:
        r = client.post("/score", json={"source": SOURCES[0], "target": " "})
    assert r.status_code == 200 and r.json()["scores"][0]["units"] == 1
    assert r.json()["scores"][0]["logprob"] == pytest.approx(translator.score([SOURCES[0]], [""])[0].logprob, abs=1e-4)


@pytest.mark.parametrize("body, status, kind, field", [
    ({"source": "a"}, 422, "invalid_request", "body"),
    ({"source": "a", "target": "b", "pairs": []}, 422, "invalid_request", "body"),
    ({"pairs": []}, 422, "invalid_request", "pairs"),
    ({"pairs": [{"source": "a"}]}, 422, "invalid_request", "pairs[0].target"),
    ({"pairs": [{"source": "a", "target": "b", "x": 1}]}, 422, "invalid_request", "pairs[0].x"),
    ({"source": " ", "target": "b"}, 422, "empty_text", "source"),
    ({"pairs": [{"source": "a", "target": "b"}, {"source": "", "target": "b"}]}, 422, "empty_text",
     "pairs[1].source"),
    ({"pairs": [{"source": "a", "target": "b"}, {"source": "a", "target": "x" * 11}]}, 413, "max_chars",
     "pairs[1].target"),
    ({"source": "a", "target": "\ud800"}, 422, "invalid_text", "target"),
    ({"pairs": [{"source": "a", "target": "b"}] * 3}, 413, "max_texts", "pairs"),
])
def test_bad_score_requests_get_clear_4xx(translator, body, status, kind, field):
    with client_for(translator, max_chars=10, max_texts=2) as client:
        r = client.post("/score", content=json.dumps(body, ensure_ascii=True),  # lone surrogates escaped
                        headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["kind"] == kind and r.json()["field"] == field and r.json()["error"]


def test_scoring_needs_the_torch_backend(tiny_run):
    onnx = Translator.from_checkpoint(tiny_run / "best.pt", backend="onnx")
    with client_for(onnx) as client:
        r = client.post("/score", json={"source": "a", "target": "b"})
        health = client.get("/health").json()
    assert r.status_code == 501 and r.json()["kind"] == "not_supported" and "PyTorch" in r.json()["error"]
    assert health["score"] is False


def test_seeded_samples_equal_the_python_api_whatever_shares_the_batch(translator):
    """A request with a seed is drawn alone, so its draws are the Python API's for that request,
    even when other requests arrive with it; n_best is the number of draws per sentence."""
    sample = {"temperature": 1.5, "topk": 5, "seed": 7}
    alone = translator.translate(SOURCES, SearchSettings(n_best=3, sampling=Sampling(topk=5, temperature=1.5, seed=7)))
    body = {"texts": SOURCES, "n_best": 3, "sample": sample}
    with client_for(translator, max_batch=16, window_ms=100) as client:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda b: client.post("/translate", json=b),
                                    [body, {"text": SOURCES[0]}, body, {"texts": SOURCES[1:], "beam": 2}]))
    assert all(r.status_code == 200 for r in answers), [r.text for r in answers]
    for r in (answers[0], answers[2]):
        got = r.json()
        assert got["beam"] == 1 and got["sample"] == sample
        for t, want in zip(got["translations"], alone, strict=True):
            assert [h["text"] for h in t["nbest"]] == [h.text for h in want.nbest] and len(t["nbest"]) == 3
            assert [h["score"] for h in t["nbest"]] == pytest.approx([h.score for h in want.nbest], abs=1e-4)
    assert answers[1].json()["sample"] is None


@pytest.mark.parametrize("body, field", [
    ({"text": "a", "sample": {}, "beam": 3}, "beam"),
    ({"text": "a", "sample": {"temperature": 0}}, "sample.temperature"),
    ({"text": "a", "sample": {"topk": -1}}, "sample.topk"),
    ({"text": "a", "sample": {"top_k": 2}}, "sample.top_k"),
    ({"text": "a", "sample": {}, "n_best": 21}, "n_best"),
])
def test_bad_sampling_requests_name_the_field(translator, body, field):
    with client_for(translator) as client:
        r = client.post("/translate", json=body)
    assert r.status_code == 422 and r.json()["field"] == field, r.text


def test_a_draining_server_refuses_new_scores_too(translator):
    with client_for(translator) as client:
        client.app.state.draining = True
        r = client.post("/score", json={"source": "a", "target": "b"})
        health = client.get("/health")
    assert r.status_code == 503 and r.json()["kind"] == "draining" and r.headers["retry-after"] == "1"
    assert health.status_code == 503 and health.json()["status"] == "draining"


def test_a_source_over_the_models_length_limit_is_named(translator):
    limit = translator.decode_cfg.max_src_len
    pairs = [{"source": "a b", "target": "c"}, {"source": "dog " * (limit + 1), "target": "chien"}]
    with client_for(translator, max_chars=100000, max_body_bytes=10**6) as client:
        r = client.post("/score", json={"pairs": pairs})
    assert r.status_code == 413 and r.json()["limit"] == "decode.max_src_len", r.text
    assert r.json()["field"] == "pairs[1].source"
