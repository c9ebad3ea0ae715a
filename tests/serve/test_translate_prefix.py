"""`POST /translate` with `prefix` / `prefixes` (interactive translation): the translations begin
with them, equal to the Python API's, batched with requests that have none; bad ones get 422."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from rnnsearch.decoding.translator import Translator
from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source

SOURCES = ["The big dog sees a cat .", "A small white cat sleeps in the old house ."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_checkpoint(tiny_run / "best.pt")


def test_translations_begin_with_their_prefixes(translator):
    prefixes = ["Le chat", ""]
    expected = translator.translate([Source(s, p) for s, p in zip(SOURCES, prefixes)], SearchSettings(beam=3))
    free = translator.translate(SOURCES, SearchSettings(beam=3))
    app = create_app(translator, ServeSettings(max_batch=8, window_ms=50))
    with TestClient(app, raise_server_exceptions=False) as client:
        with ThreadPoolExecutor(3) as pool:  # with and without prefixes in one window: not mixed up
            many, one, plain = pool.map(lambda body: client.post("/translate", json=body), [
                {"texts": SOURCES, "prefixes": prefixes, "beam": 3},
                {"text": SOURCES[1], "prefix": "Un chien", "beam": 3, "return_attention": True},
                {"texts": SOURCES, "beam": 3}])
    assert many.status_code == one.status_code == plain.status_code == 200, many.text
    assert [t["text"] for t in many.json()["translations"]] == [t.text for t in expected]
    assert [t["score"] for t in many.json()["translations"]] == pytest.approx([t.score for t in expected], abs=1e-4)
    assert expected[0].text.startswith("Le chat") and expected[1].text == free[1].text
    t = one.json()["translations"][0]
    assert t["tokens"][:2] == ["Un", "chien"] and len(t["attention"]) == len(t["tokens"]) + 1
    assert [t["text"] for t in plain.json()["translations"]] == [t.text for t in free]


@pytest.mark.parametrize("body, field", [
    ({"text": "a", "prefixes": ["b"]}, "body"),
    ({"texts": ["a"], "prefix": "b"}, "body"),
    ({"texts": ["a", "b"], "prefixes": ["c"]}, "prefixes"),
    ({"text": "a", "prefix": 3}, "prefix"),
    ({"texts": ["a", "b"], "prefixes": ["c", "x" * 11]}, "prefixes[1]"),
])
def test_bad_prefixes_are_refused(translator, body, field):
    with TestClient(create_app(translator, ServeSettings(max_chars=10))) as client:
        r = client.post("/translate", json=body)
    assert r.status_code in (413, 422) and r.json()["field"] == field, r.text
