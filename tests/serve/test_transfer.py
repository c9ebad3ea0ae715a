"""``POST /transfer_tags`` (serve/transfer.py) over the tiny model: each pair's translation comes back with
the source's tags and its text as given; a source it cannot read has its error; a pair no model serves,
a reading it cannot give and an empty text are refused with their field named."""
from __future__ import annotations

import re

import pytest



def test_tags_come_back_around_the_given_text(client):
    pairs = [{"source": "The <b>dog</b> sees a <i>cat</i>.", "target": "Le chien voit un chat."},
             {"source": "The <b>dog.", "target": "Le chien."}]
    found = client.post("/transfer_tags", json={"pairs": pairs})
    assert found.status_code == 200, found.text
    body = found.json()
    first, second = body["translations"]
    assert re.sub(r"<[^<>]+>", "", first["text"]) == "Le chien voit un chat." and first["error"] is None
    assert sorted(re.findall(r"<[^<>]+>", first["text"])) == ["</b>", "</i>", "<b>", "<i>"]
    assert second["error"] and second["text"] == "Le chien."
    assert body["reading"] in ("head", "attention")


@pytest.mark.parametrize("body, status, field", [
    ({"pairs": [{"source": "The <b>dog</b>.", "target": "Le chien."}], "source": "en", "target": "de"}, 400, None),
    ({"pairs": [{"source": "The <b>dog</b>.", "target": "Le chien."}], "reading": "symmetrised"}, 422, "reading"),
    ({"pairs": [{"source": "The <b>dog</b>.", "target": " "}]}, 422, "pairs[0].target"),
    ({"pairs": []}, 422, "pairs"),
])
def test_refused(client, body, status, field):
    found = client.post("/transfer_tags", json=body)
    assert found.status_code == status, found.text
    if field:
        assert found.json()["field"] == field
