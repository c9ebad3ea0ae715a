"""`POST /translate` gives each translation its confidence (text/confidence.py); ``text_handling.
min_confidence`` flags those below it; a blank text has none."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from rnnsearch import Translator
from rnnsearch.serve import ServeSettings, create_app

LINES = ["The tired table calls the pretty letter.", "", "A old blue hat takes a hat. The dog sees a cat."]


@pytest.fixture(scope="module")
def tiny(tiny_run):
    return Translator.from_checkpoint(str(tiny_run / "best.pt"))


def test_api_gives_each_translation_its_confidence(tiny):
    app = create_app(tiny, ServeSettings(max_batch=8, window_ms=20))
    with TestClient(app, raise_server_exceptions=False) as client:
        plain = client.post("/translate", json={"texts": LINES, "beam": 2})
        flagged = client.post("/translate", json={"texts": LINES, "beam": 2, "text_handling": {"min_confidence": 0}})
        bad = client.post("/translate", json={"texts": LINES, "text_handling": {"min_confidence": 1}})
    assert plain.status_code == flagged.status_code == 200, plain.text
    first, blank, _ = plain.json()["translations"]
    assert first["confidence"]["logprob"] < 0 and not first["confidence"]["low"] and blank["confidence"] is None
    assert [t["confidence"] and t["confidence"]["low"] for t in flagged.json()["translations"]] == [True, None, True]
    assert bad.status_code == 422 and "min_confidence" in bad.text


def test_api_names_what_it_read_through_and_what_it_doubts(tiny):
    """Markup not well-formed is translated with its faults in ``warnings`` (as the CLI warns of them);
    a confidence below min_confidence is one too."""
    app = create_app(tiny, ServeSettings(max_batch=8, window_ms=20))
    with TestClient(app, raise_server_exceptions=False) as client:
        got = client.post("/translate", json={"texts": ["The <b>dog</i> sees a cat.", "A <i>hat</i>."],
                                              "markup": "html", "beam": 2, "text_handling": {"min_confidence": 0}})
    assert got.status_code == 200, got.text
    loose, fine = got.json()["translations"]
    assert any("</i> at character 10 closes no open element" in w for w in loose["warnings"]), loose
    assert [w for w in fine["warnings"] if "low confidence" in w] and not any("character" in w for w in fine["warnings"])
