"""LibreTranslate's routes over the tiny model (serve/libretranslate.py): its parameters as JSON, form or
query, its answers and its errors; rnnsearch's own /translate beside it; keys and limits (serve/access.py)."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from rnnsearch import Translator
from rnnsearch.errors import UsageError
from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.serve.access import Access, read_api_keys


def test_libretranslate_requests_in_every_encoding(client):
    body = {"q": "The dog sees a cat.", "source": "en", "target": "fr"}
    as_json, as_form = client.post("/translate", json=body), client.post("/translate", data=body)
    as_query = client.post("/translate", params=body)
    assert as_json.status_code == as_form.status_code == as_query.status_code == 200, as_form.text
    assert as_json.json() == as_form.json() == as_query.json() and as_json.json()["translatedText"]
    many = client.post("/translate", json={**body, "q": ["A dog.", ""], "alternatives": 2}).json()
    assert len(many["translatedText"]) == 2 and many["translatedText"][1] == "" and len(many["alternatives"]) == 2
    html = client.post("/translate", json={**body, "q": "<p>The <b>dog</b> sees a cat.</p>", "format": "html"}).json()
    assert html["translatedText"].startswith("<p>") and html["translatedText"].count("<b>") == 1
    ours = client.post("/translate", json={"text": "The dog sees a cat.", "beam": 2})
    assert ours.status_code == 200 and "translations" in ours.json()


@pytest.mark.parametrize("body, message", [
    ({"source": "en", "target": "fr"}, "Invalid request: missing q parameter"),
    ({"q": "x", "target": "fr"}, "Invalid request: missing source parameter"),
    ({"q": "x", "source": "en", "target": "de"}, "German (de) is not available as a target language from English (en)"),
    ({"q": "x", "source": "xx", "target": "fr"}, "xx is not supported"),
    ({"q": "x", "source": "en", "target": "fr", "format": "pdf"}, "pdf format is not supported"),
    ({"q": "x", "source": "en", "target": "fr", "alternatives": "two"},
     "Invalid request: alternatives parameter is not a number"),
])
def test_libretranslate_errors(client, body, message):
    got = client.post("/translate", data=body)
    assert got.status_code == 400 and got.json() == {"error": message}
    as_json = client.post("/translate", json=body)  # a JSON body without q was rnnsearch's, refused as extra fields
    assert as_json.status_code == 400 and as_json.json() == {"error": message}


def test_libretranslate_limits_multipart_and_repeated_q(client):
    body = {"q": "The dog sees a cat.", "source": "en", "target": "fr"}
    parts = client.post("/translate", files={k: (None, v) for k, v in body.items()})  # multipart/form-data
    assert parts.status_code == 200 and parts.json() == client.post("/translate", data=body).json()
    both = client.post("/translate", content="q=A+dog.&q=A+cat.&source=en&target=fr",
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert both.status_code == 200 and len(both.json()["translatedText"]) == 2  # none dropped
    long = client.post("/translate", json={**body, "q": "a " * 600})
    assert long.status_code == 400 and long.json() == {"error": "Invalid request: request (1200) exceeds text limit (1000)"}
    many = client.post("/translate", json={**body, "alternatives": 100})
    assert many.status_code == 400 and many.json() == {"error": "Invalid request: alternatives parameter must be <= 19"}


def test_a_form_that_is_not_utf8_is_refused_and_detection_keeps_to_the_servers_languages(client):
    """``q=The%FF%FEHouse`` came back 200 ``Le � �`` ("House" lost); a server of en->fr alone detected ``Hello``
    among all of py3langid's languages and answered "br is not supported"."""
    for content in ("q=The%FF%FEHouse&source=en&target=fr", b"q=The\xff\xfeHouse&source=en&target=fr"):
        got = client.post("/translate", content=content, headers={"content-type": "application/x-www-form-urlencoded"})
        assert got.status_code == 400 and "the form is not valid UTF-8" in got.json()["error"]
    latin = client.post("/translate", content="q=The caf\xe9.&source=en&target=fr".encode("latin-1"),
                        headers={"content-type": "application/x-www-form-urlencoded; charset=iso-8859-1"})
    assert latin.status_code == 200, latin.text  # a form in the charset it declares
    ranked = client.post("/detect", data={"q": "Hello"}).json()
    assert {r["language"] for r in ranked} == {"en", "fr"}
    french = client.post("/translate", json={"q": "Le chien voit la maison et le chat.", "source": "auto", "target": "fr"})
    assert french.status_code == 400 and french.json() == {"error": "fr is not supported"}  # not read as English


def test_auto_detection_reads_each_text_and_passes_text_of_no_letters_through(client):
    """With source=auto one language was detected for the whole batch, and a number or a URL was refused ("English
    is not available as a target language from English")."""
    got = client.post("/translate", json={"q": ["12345", "The dog sees a cat.", "https://x.org/a"], "source": "auto",
                                          "target": "fr"})
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["translatedText"][0] == "12345" and body["translatedText"][2] == "https://x.org/a"
    assert body["translatedText"][1] != "The dog sees a cat." and len(body["detectedLanguage"]) == 3
    assert body["detectedLanguage"][1]["language"] == "en"

def test_languages_detect_settings_and_files(client):
    assert client.get("/languages").json() == [{"code": "en", "name": "English", "targets": ["fr"]}]
    assert client.post("/detect", data={"q": "The dog sees a cat."}).json()[0]["language"] == "en"
    assert client.get("/frontend/settings").json()["apiKeys"] is False
    files = client.post("/translate_file")
    assert files.status_code == 403 and files.json() == {"error": "Files translation are disabled on this server."}


def test_access_keys_and_limits(tmp_path):
    now = [0.0]
    access = Access({"a": None, "b": 1}, req_limit=2, clock=lambda: now[0])
    assert access.check("zzz", "1.2.3.4") == (403, "Invalid API key")
    assert [access.check(None, "1.2.3.4") for _ in range(3)] == [None, None, (429, "Slowdown: 2 per 1 minute")]
    assert access.check("b", "5.6.7.8") is None and access.check("b", "5.6.7.8") == (429, "Slowdown: 1 per 1 minute")
    now[0] = 61.0
    assert access.check("b", "5.6.7.8") is None and Access().check("any", "x") is None
    path = tmp_path / "keys.txt"
    path.write_text("# keys\nk1\nk2\t30\n", encoding="utf-8")
    assert read_api_keys(path) == {"k1": None, "k2": 30}
    path.write_text("k1\nk2\tmany\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"keys.txt line 2: expected 'KEY' or 'KEY<TAB>REQUESTS PER MINUTE'"):
        read_api_keys(path)


def test_keys_and_limits_hold_on_rnnsearchs_own_routes_too(tiny_run):
    from rnnsearch.serve.access import Access
    app = create_app(Translator.from_checkpoint(str(tiny_run / "best.pt")), ServeSettings(window_ms=1),
                     access=Access({"k": 1}, req_limit=0))
    with TestClient(app, raise_server_exceptions=False) as c:
        wrong = c.post("/translate", json={"text": "A dog.", "api_key": "nope"})
        first = c.post("/translate", json={"text": "A dog.", "api_key": "k", "beam": 2})
        second = c.post("/score", json={"source": "A dog.", "target": "Un chien.", "api_key": "k"})
        free = c.post("/translate", json={"text": "A dog.", "beam": 2})  # no key: the default limit, none here
    assert wrong.status_code == 403 and wrong.json()["kind"] == "api_key"
    assert first.status_code == 200 and second.status_code == 429 and second.json()["kind"] == "req_limit"
    assert second.headers["retry-after"] == "60"
    assert free.status_code == 200


def test_a_client_over_its_limit_is_told_when_to_come_back(tiny_run):
    app = create_app(Translator.from_checkpoint(str(tiny_run / "best.pt")), ServeSettings(window_ms=1),
                     access=Access({}, req_limit=1))
    body = {"q": "A dog.", "source": "en", "target": "fr"}
    with TestClient(app, raise_server_exceptions=False) as c:
        first, second = c.post("/translate", data=body), c.post("/translate", data=body)
    assert first.status_code == 200 and second.status_code == 429 and second.headers["retry-after"] == "60"


def test_suggest_negative_alternatives_and_head_requests(client):
    """/suggest was a 404 (LibreTranslate: 403), ``alternatives: -1`` was taken, ``HEAD /health`` was a 405
    (an uptime checker reads the server as down)."""
    assert client.post("/suggest", data={"q": "a", "s": "b", "source": "en", "target": "fr"}).json() == {
        "error": "Suggestions are disabled on this server."}
    negative = client.post("/translate", json={"q": "A dog.", "source": "en", "target": "fr", "alternatives": -1})
    assert negative.status_code == 400 and "must be 0 or more" in negative.json()["error"]
    assert client.head("/health").status_code == 200 and client.head("/metrics").status_code == 200


def test_tagged_text_sent_as_plain_text_says_so(client):
    """``Hello <b>world</b>`` with LibreTranslate's default format=text came back as ``<`` with no signal."""
    body = {"q": "The <b>dog</b> sees a cat.", "source": "en", "target": "fr"}
    plain = client.post("/translate", json=body)
    assert plain.status_code == 200 and "<b>" in plain.headers["x-rnnsearch-warning"]
    assert "x-rnnsearch-warning" not in client.post("/translate", json={**body, "format": "html"}).headers
    ours = client.post("/translate", json={"text": "The <b>dog</b> sees a cat."}).json()["translations"][0]
    assert any("holds markup (<b>)" in w for w in ours["warnings"]), ours


def test_a_web_page_may_call_it_cors(tiny_run):
    """A browser's preflight OPTIONS /translate got 405 and no response said Access-Control-Allow-Origin."""
    translator = Translator.from_checkpoint(str(tiny_run / "best.pt"))
    with TestClient(create_app(translator)) as client:
        pre = client.options("/translate", headers={"Origin": "https://app.example", "Access-Control-Request-Headers":
                                                    "content-type", "Access-Control-Request-Method": "POST"})
        got = client.post("/translate", json={"q": "The dog.", "source": "en", "target": "fr"},
                          headers={"Origin": "https://app.example"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] in ("*", "https://app.example")
    assert got.status_code == 200 and got.headers["access-control-allow-origin"] == "*"
    with TestClient(create_app(translator, ServeSettings(cors_origins=""))) as client:
        closed = client.post("/translate", json={"q": "The dog.", "source": "en", "target": "fr"},
                             headers={"Origin": "https://app.example"})
    assert "access-control-allow-origin" not in closed.headers
