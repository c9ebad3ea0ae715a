"""`POST /translate` with `constraints` / `avoid` (terminology): per text, as the Python API gives
them, batched with texts that have none; what cannot be honoured is that text's `error`."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from rnnsearch.decoding.source import Source
from rnnsearch.decoding.translator import Translator
from rnnsearch.serve import ServeSettings, create_app

SOURCES = ["The tired table calls the pretty letter without a white chair.",
           "A old blue hat takes a hat on some old chairs."]


@pytest.fixture(scope="module")
def translator(tiny_run):
    return Translator.from_checkpoint(tiny_run / "best.pt")


def test_constraints_per_text_as_the_python_api(translator):
    settings = translator.search_settings(beam=4)
    expected = translator.translate([Source(SOURCES[0], constraints=("maison",)),
                                     Source(SOURCES[1], avoid=("chapeau",))], settings)
    app = create_app(translator, ServeSettings(max_batch=8, window_ms=20))
    with TestClient(app, raise_server_exceptions=False) as client:
        many = client.post("/translate", json={"beam": 4, "texts": [
            {"text": SOURCES[0], "constraints": ["maison"]}, {"text": SOURCES[1], "avoid": ["chapeau"]}]})
        one = client.post("/translate", json={"text": SOURCES[0], "constraints": ["maison"], "beam": 4})
        mixed = client.post("/translate", json={"texts": [SOURCES[1], {"text": "x", "constraints": ["zzqx"]}]})
    assert many.status_code == one.status_code == mixed.status_code == 200, many.text
    got = many.json()["translations"]
    assert [t["text"] for t in got] == [t.text for t in expected]
    assert "maison" in got[0]["text"] and "chapeau" not in got[1]["text"] and got[0]["constraints_met"]
    assert one.json()["translations"][0]["text"] == expected[0].text
    free, refused = mixed.json()["translations"]
    assert free["text"] and free["error"] is None
    assert refused["text"] == "" and "'zzqx' not in the model's target vocabulary" in refused["error"]


@pytest.mark.parametrize("body, field", [
    ({"texts": SOURCES, "constraints": ["maison"]}, "constraints"),
    ({"text": SOURCES[0], "constraints": ["maison"], "sample": {"seed": 1}}, "sample"),
    ({"texts": [{"text": SOURCES[0], "constrains": ["maison"]}]}, "constrains")])
def test_misplaced_constraints_get_422(translator, body, field):
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:
        response = client.post("/translate", json=body)
    assert response.status_code == 422 and field in response.text, response.text


def test_a_glossary_for_all_texts(translator):
    settings = translator.search_settings(beam=4)
    expected = translator.translate([Source(SOURCES[0], constraints=("maison",)),
                                     Source(SOURCES[1], constraints=("le chien",))], settings)
    glossary = [{"source": "CHAIR", "target": "maison"}, {"source": "old chairs", "target": "le chien"}]
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:
        response = client.post("/translate", json={"texts": SOURCES, "glossary": glossary, "beam": 4})
    assert response.status_code == 200, response.text
    assert [t["text"] for t in response.json()["translations"]] == [t.text for t in expected]
    conflicting = glossary + [{"source": "CHAIR", "target": "chaise"}]  # chair and CHAIR: two terms
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:
        refused = client.post("/translate", json={"texts": SOURCES, "glossary": conflicting})
    assert refused.status_code == 422 and refused.json()["field"] == "glossary[2]", refused.text
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:  # a blank term was taken
        blank = client.post("/translate", json={"texts": SOURCES, "glossary": [{"source": " ", "target": "maison"}]})
        infinite = client.post("/translate", content='{"text": "a", "coverage_penalty": 1e999}',
                               headers={"content-type": "application/json"})
    assert blank.status_code == 422 and "glossary" in blank.json()["field"], blank.text
    assert infinite.status_code == 422 and "coverage_penalty" in infinite.text, infinite.text


def test_markup_per_request(translator):
    from rnnsearch.decoding.markup import parse
    texts = ["The <b>tired table</b> calls the pretty letter.", "A big <i>strong</i> table finds<br/> houses."]
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:
        ok = client.post("/translate", json={"texts": texts, "markup": "xml", "beam": 3})
        bad = client.post("/translate", json={"texts": [texts[0], "a <b>b</i>"], "markup": "xml"})
    assert ok.status_code == 200, ok.text
    for source, t in zip(texts, ok.json()["translations"]):
        plain, elements = parse(t["text"])
        assert [e.start_tag for e in elements] == [e.start_tag for e in parse(source)[1]]
        assert "<" not in " ".join(t["tokens"])
    assert bad.status_code == 200, bad.text  # the text whose markup is not well-formed gets its error, alone
    good, refused = bad.json()["translations"]
    assert good["text"] and good["error"] is None
    assert refused["text"] == "" and refused["error"].startswith("texts[1]: ") and "closes <b>" in refused["error"]


def test_html_markup_per_request_translates_each_block(translator):
    from rnnsearch.analysis.markup_check import damage
    texts = ["<ul><li>the table</li><li>a chair</li></ul><!-- menu -->", "<p>the big house &copy; finds</p>",
             '{"not": "html"}', ""]
    with TestClient(create_app(translator), raise_server_exceptions=False) as client:
        response = client.post("/translate", json={"texts": texts, "markup": "html", "beam": 3})
    assert response.status_code == 200, response.text
    out = response.json()["translations"]
    for source, t in zip(texts[:2], out):
        assert t["error"] is None and not damage(source, t["text"]), (source, t["text"])
    assert out[0]["text"].count("<li>") == 2 and out[3]["text"] == "" and out[3]["error"] is None
