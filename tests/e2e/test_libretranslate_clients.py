"""LibreTranslate's own clients from PyPI (libretranslatepy, deep-translator's LibreTranslator) against
one ``rnnsearch serve hansards_enfr_rnnsearch50 hansards_fren_rnnsearch50`` on 127.0.0.1: both
directions, /languages and /detect, and with keys on a wrong key refused (403) and a client over its
limit told to slow down (429), as LibreTranslate answers them."""
from __future__ import annotations

import pytest
import requests

from serve.test_page import free_port, start_server

pytestmark = pytest.mark.slow
libretranslatepy = pytest.importorskip("libretranslatepy")
deep_translator = pytest.importorskip("deep_translator")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    keys = tmp_path_factory.mktemp("keys") / "keys.txt"
    keys.write_text("good-key\nlimited-key\t2\n", encoding="utf-8")
    port = free_port()
    proc = start_server("hansards_enfr_rnnsearch50", port, "--api-keys", str(keys), more=("hansards_fren_rnnsearch50",))
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    proc.wait(timeout=60)


def test_libretranslatepy_both_directions(server):
    lt = libretranslatepy.LibreTranslateAPI(server)
    french = lt.translate("The minister spoke today. We agree with him.", "en", "fr")
    english = lt.translate("Le comité se réunira demain.", "fr", "en")
    assert "ministre" in french and "accord" in french and "committee" in english.lower()
    assert {(x["code"], tuple(x["targets"])) for x in lt.languages()} == {("en", ("fr",)), ("fr", ("en",))}
    assert lt.detect("Le ministre a parlé aujourd'hui à la Chambre.")[0]["language"] == "fr"


def test_deep_translator_both_directions(server):
    to_french = deep_translator.LibreTranslator(source="en", target="fr", api_key="good-key", custom_url=server)
    to_english = deep_translator.LibreTranslator(source="fr", target="en", api_key="good-key", custom_url=server)
    assert "comité" in to_french.translate("The committee will meet tomorrow.")
    assert "minister" in to_english.translate("Le ministre a parlé.").lower()
    assert len(to_french.translate_batch(["Thank you.", "The House is adjourned."])) == 2


def test_keys_and_limits_answer_as_libretranslate(server):
    bad = requests.post(server + "translate", data={"q": "Yes.", "source": "en", "target": "fr", "api_key": "nope"})
    assert bad.status_code == 403 and bad.json() == {"error": "Invalid API key"}
    with pytest.raises(deep_translator.exceptions.AuthorizationException):
        deep_translator.LibreTranslator(source="en", target="fr", api_key="nope", custom_url=server).translate("Yes.")
    codes = [requests.post(server + "translate", data={"q": "Yes.", "source": "en", "target": "fr",
                                                        "api_key": "limited-key"}).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    slow = requests.post(server + "translate", json={"q": "Yes.", "source": "en", "target": "fr", "api_key": "limited-key"})
    assert slow.status_code == 429 and slow.json()["error"] == "Slowdown: 2 per 1 minute"
    ours = requests.post(server + "translate", json={"text": "The minister spoke."})  # rnnsearch's own API beside it
    assert ours.status_code == 200 and ours.json()["translations"][0]["text"]
