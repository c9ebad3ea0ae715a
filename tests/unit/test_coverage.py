"""Source words a translation may have left out (text/coverage.py): the attention a word got over the
output, below --min-coverage, named in a warning and in the confidence (CLI and API)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from rnnsearch import Translator
from rnnsearch.cli import main
from rnnsearch.data.vocab import SPECIALS, Vocab
from rnnsearch.decoding.source import Translation
from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.text.coverage import common_units, uncovered, word_masses


class Codec:
    def __init__(self, common: list[str], rare: int = 200):
        self.vocab = Vocab(SPECIALS + common + [f"w{k}" for k in range(rare)])


def _translation(source: list[str], tokens: list[str], reads: list[int], **kw) -> Translation:
    """Output unit i reads source unit reads[i] alone; the </s> step reads every unit a little."""
    att = np.zeros((len(tokens) + 1, len(source) + 1), dtype=np.float32)  # (T + 1, S + 1)
    for i, j in enumerate(reads):
        att[i, j] = 1.0
    att[-1] = 1.0 / (len(source) + 1)
    return Translation(" ".join(tokens), tokens, source + ["</s>"], -1.0, att, **kw)


def test_the_words_no_output_unit_read_are_named_in_source_order():
    codec = Codec(["the", ":"])
    t = _translation(["The", "Name", ":", "John", "Smith"], ["Nom", ":"], [1, 2])
    assert uncovered(t, codec, 0.1) == ["John", "Smith"]  # "The": common, even capitalised
    assert uncovered(t, codec, 0) == []
    assert uncovered(Translation(t.text, t.tokens, t.source_tokens, -1.0, None), codec, 0.1) == []  # RNNencdec
    assert uncovered(_translation(["Name", "John"], [], []), codec, 0.1) == []  # nothing translated


def test_copied_carried_and_rare_enough_words_are_not_named():
    codec = Codec(["the"])
    t = _translation(["Smith", "called", "3.5", "!"], ["Smith", "a", "appelé"], [3, 1, 1], carried=[2])
    assert uncovered(t, codec, 0.5) == []  # Smith written as the source did, 3.5 a slot, ! no letter
    capital = _translation(["•", "téléphoner"], ["•", "Téléphoner"], [0, 0])
    assert uncovered(capital, codec, 0.5) == []  # written, in another case (a sentence's capital)
    half = _translation(["big", "dog"], ["gros", "chien"], [0, 1])
    half.attention[1] = [0.7, 0.3, 0.0]  # "dog" gets 0.3 of the output's attention
    assert uncovered(half, codec, 0.25) == [] and uncovered(half, codec, 0.35) == ["dog"]


def test_a_number_the_output_does_not_write_is_named_whatever_its_attention():
    """``See Figure 3 and page 12.`` came out ``Voir la page 3.`` with no warning: ``12`` had its attention."""
    from rnnsearch.text.coverage import left_out_warning
    codec = Codec(["the", "and"])
    t = _translation(["page", "12", "and", "1,500", "km", "70", "7"], ["page", "et", "1 500", "km"], [1, 2, 3, 6])
    assert uncovered(t, codec, 0.5) == ["12", "70"]  # read but not written; 1,500 written as 1 500; 7 maybe "sept"
    assert uncovered(_translation(["page", "12"], ["page"], [1], carried=[1]), codec, 0.5) == []  # a slot's
    per_cent = _translation(["15", "p.", "100", "en", "1998"], ["15%", "in", "1998"], [0, 2, 4])
    assert uncovered(per_cent, Codec(["p.", "en"]), 0.5) == []  # the Hansards' French per cent: "15%"
    assert left_out_warning(["12", "Elgin"], 0.15) == ("'12' is not in the translation; 'Elgin' got almost no "
                                                       "attention (below --min-coverage 0.15): the translation may "
                                                       "leave them out or change them")


def test_pieces_join_into_words_and_a_word_is_covered_by_its_best_piece():
    t = _translation(["\u2581Jo", "hn", "\u2581Sm", "ith", "\u2581ran"], ["\u2581a", "\u2581couru"], [4, 1])
    words = word_masses(t)
    assert [w for w, _, _ in words] == ["John", "Smith", "ran"] and [at for _, _, at in words] == [[0, 1], [2, 3], [4]]
    assert uncovered(t, Codec([]), 0.5) == ["Smith"]


def test_a_small_vocabulary_leaves_a_tenth_as_common():
    assert len(common_units(Codec(["a", "b"], rare=18))) == 2 and len(common_units(Codec([], rare=3000))) == 100


@pytest.fixture(scope="module")
def tiny(tiny_run):
    return Translator.from_checkpoint(str(tiny_run / "best.pt"))


LINES = ["The tired table calls the pretty letter.", "", "A old blue hat takes a hat. The dog sees a cat."]


def test_translate_names_the_words_in_a_warning_and_in_json(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    args = ["translate", str(tiny_run / "best.pt"), "--input", str(path), "--beam", "2", "--json-output"]
    assert main(args + ["--min-coverage", "50"]) == 0  # every word below: each not written as-is is named
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert rows[0]["confidence"]["uncovered"] and rows[2]["confidence"]["uncovered"] and rows[1]["confidence"] is None
    warned = [x for x in captured.err.splitlines() if "got almost no attention" in x]
    assert len(warned) == 2 and "line 1:" in warned[0] and f"'{rows[0]['confidence']['uncovered'][0]}'" in warned[0]
    assert main(args + ["--min-coverage", "0"]) == 0
    captured = capsys.readouterr()
    assert "attention" not in captured.err and all(not json.loads(r)["confidence"]["uncovered"]
                                                    for r in captured.out.splitlines() if json.loads(r)["confidence"])


def test_api_names_the_words_among_the_warnings(tiny):
    app = create_app(tiny, ServeSettings(max_batch=8, window_ms=20))
    with TestClient(app, raise_server_exceptions=False) as client:
        named = client.post("/translate", json={"texts": LINES, "beam": 2, "text_handling": {"min_coverage": 50}})
        off = client.post("/translate", json={"texts": LINES, "beam": 2, "text_handling": {"min_coverage": 0}})
        bad = client.post("/translate", json={"texts": LINES, "text_handling": {"min_coverage": -1}})
    assert named.status_code == off.status_code == 200, named.text
    first = named.json()["translations"][0]
    assert first["confidence"]["uncovered"] and any("got almost no attention" in w for w in first["warnings"])
    assert not any("attention" in w for t in off.json()["translations"] for w in t["warnings"])
    assert bad.status_code == 422 and "min_coverage" in bad.text


def test_translate_file_names_the_words_of_each_unit(tiny_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text(f"{LINES[0]}\n\n{LINES[2]}\n", encoding="utf-8")
    run = ["translate-file", str(tiny_run / "best.pt"), str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--beam", "2"]
    assert main(run + ["--min-coverage", "50"]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if "got almost no attention" in x]
    assert len(warned) == 2 and all("in.txt" in x for x in warned)
    assert main(run + ["--min-coverage", "0"]) == 0 and "attention" not in capsys.readouterr().err
    assert len((tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()) == 3


def test_the_coverage_penalty_is_gnmts_and_zero_where_every_word_was_read():
    from rnnsearch.decoding.search import coverage_penalty
    read = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.0, 0.2, 0.8]])  # (T + 1, S + 1): both words read
    skipped = np.array([[1.0, 0.0, 0.0], [0.9, 0.05, 0.05], [0.5, 0.0, 0.5]])  # the second word: 0.05
    assert coverage_penalty(read, 0.5) == 0.0 and coverage_penalty(skipped, 0.0) == 0.0
    assert coverage_penalty(skipped, 0.4) == pytest.approx(0.4 * np.log(0.05))
    assert coverage_penalty(skipped, 1.0) < coverage_penalty(skipped, 0.2) < 0 and coverage_penalty(None, 1.0) == 0.0


def test_the_search_ranks_its_finished_hypotheses_with_the_penalty(tiny):
    from rnnsearch import SearchSettings
    from rnnsearch.decoding.search import coverage_penalty
    lines = ["the old dog sees a blue hat .", "a tired cat takes the pretty letter .", "the dog calls a hat ."]

    def ranked(beta):
        out = tiny.translate(lines, SearchSettings(beam=4, n_best=4, coverage_penalty=beta))
        return [[(h.text, h.score + coverage_penalty(h.attention, beta)) for h in t.nbest] for t in out]
    plain, penalised = ranked(0.0), ranked(50.0)
    for hyps in plain + penalised:  # each list best first by its own ranking (no length penalty here)
        assert [r for _, r in hyps] == sorted((r for _, r in hyps), reverse=True)
    assert [sorted(t for t, _ in h) for h in plain] == [sorted(t for t, _ in h) for h in penalised]  # the same beam
    assert [[t for t, _ in h] for h in plain] != [[t for t, _ in h] for h in penalised]  # in another order
    with pytest.raises(Exception, match="coverage"):
        tiny.translate(lines, SearchSettings(beam=2, coverage_penalty=-1.0))


def test_api_takes_a_coverage_penalty_per_request(tiny):
    app = create_app(tiny, ServeSettings(max_batch=8, window_ms=20))
    text = "the dog calls a hat ."  # its n best reorder under the penalty (the test above)
    with TestClient(app, raise_server_exceptions=False) as client:
        got = {b: client.post("/translate", json={"text": text, "beam": 4, "n_best": 4, "coverage_penalty": b})
               for b in (0.0, 50.0)}
        bad = client.post("/translate", json={"text": text, "coverage_penalty": -1})
    assert all(r.status_code == 200 for r in got.values()), got[0.0].text
    orders = {b: [h["text"] for h in r.json()["translations"][0]["nbest"]] for b, r in got.items()}
    assert sorted(orders[0.0]) == sorted(orders[50.0]) and orders[0.0] != orders[50.0]
    assert bad.status_code == 422 and "coverage_penalty" in bad.text


def test_a_per_cent_the_output_does_not_write_is_named():
    """``Revenue grew by 12% to $4.5 million.`` came out ``de 12 à 4,5 millions``: the number written, its
    per cent sign not, and with it what the number means."""
    from rnnsearch.text.coverage import left_out_warning
    codec = Codec(["by", "to", "%"])
    dropped = _translation(["grew", "by", "12", "%"], ["augmenté", "de", "12"], [0, 1, 2])
    assert uncovered(dropped, codec, 0.1) == ["12%"]
    for written in (["augmenté", "12", "p.", "100"], ["augmenté", "12", "%"], ["augmenté", "12", "pour", "cent"]):
        assert uncovered(_translation(["grew", "by", "12", "%"], written, [0, 2, 3, 3]), codec, 0.1) == []
    french = _translation(["hausse", "de", "15", "p.", "100"], ["up", "15", "points"], [0, 2, 4])  # into English
    assert uncovered(french, Codec(["de", "p."]), 0.1) == ["15%"]
    assert uncovered(dropped, codec, 0) == []  # off
    assert left_out_warning(["12%"], 0.15).startswith("'12%' is not in the translation")


def test_the_per_cent_named_is_the_one_no_output_per_cent_reads():
    """``fell to 2.9% in January, down from 3.4%`` came out ``2,9 En janvier, 3,4 p. 100``: the first one lost."""
    source = ["fell", "2.9", "%", "January", "from", "3.4", "%"]
    t = _translation(source, ["2,9", "janvier", "de", "3,4", "p.", "100"], [1, 3, 4, 5, 6, 6])
    assert uncovered(t, Codec(["from"]), 0.1) == ["fell", "2.9%"]
