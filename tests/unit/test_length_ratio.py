"""A translation far shorter than its source (text/coverage.py: length_ratio): a phrase dropped whole leaves no
word with little attention (`« Le Canada est de retour », a déclaré la ministre.` -> `"We are back".`), so the
output's words over the source's, below --min-length-ratio, are named in a warning and in the confidence."""
from __future__ import annotations

import json

from fastapi.testclient import TestClient

from rnnsearch import Translator
from rnnsearch.cli import main
from rnnsearch.data.slotting import marker
from rnnsearch.decoding.source import Translation
from rnnsearch.serve import ServeSettings, create_app
from rnnsearch.text.confidence import doubts
from rnnsearch.text.coverage import MIN_WORDS, length_ratio, words
from rnnsearch.text.settings import TextSettings

DROPPED = "« Le Canada est de retour » , a déclaré la ministre de les Affaires étrangères .".split()


def _translation(source: list[str], tokens: list[str]) -> Translation:
    return Translation(" ".join(tokens), tokens, source + ["</s>"], -1.0, None)


def test_words_count_units_with_a_letter_digit_or_slot_and_join_pieces():
    assert words(DROPPED + ["</s>"]) == 13  # « » , . and </s> are not words
    assert words(["Call", marker(0), "at", "5", ":", "30"]) == 5
    assert words(["\u2581Jo", "hn", "\u2581ran", "\u2581.", "</s>"]) == 2


def test_a_line_of_few_words_has_no_ratio_and_a_dropped_phrase_a_low_one():
    assert length_ratio(_translation("Oui , merci .".split(), "Yes , thank you .".split())) is None
    assert length_ratio(_translation(DROPPED, [])) is None  # nothing translated
    dropped = _translation(DROPPED, '" We are back " .'.split())
    assert length_ratio(dropped) == 3 / 13
    whole = _translation(DROPPED, '" We are back " , said the Minister of Foreign Affairs .'.split())
    assert length_ratio(whole) == 9 / 13 and MIN_WORDS == 8


def test_an_output_without_a_word_for_a_short_line_of_words_has_ratio_zero():
    """``Click here & save.`` came out ``& !``: too few words for a ratio, but none at all is one."""
    assert length_ratio(_translation("click here & save .".split(), ["&", "!"])) == 0.0
    assert length_ratio(_translation(["Merci", "."], ["."])) is None  # a single word: not measured
    assert length_ratio(_translation("click here .".split(), ["Cliquez", "ici", "."])) is None


def test_doubts_warn_of_a_short_translation_under_the_callers_name_for_the_threshold():
    dropped = _translation(DROPPED, '" We are back " .'.split())
    c, warnings = doubts(dropped, None, TextSettings(min_coverage=0, min_length_ratio=0.5))
    assert c.short and c.as_dict()["length_ratio"] == round(3 / 13, 4)
    assert warnings == ["the translation has 3 words for the source's 13 (below --min-length-ratio 0.5): it may "
                        "leave part of the line out"]
    _, api = doubts(dropped, None, TextSettings(min_coverage=0, min_length_ratio=0.5), str)
    assert "below min_length_ratio 0.5" in api[0]
    c, warnings = doubts(dropped, None, TextSettings(min_coverage=0, min_length_ratio=0))
    assert not c.short and warnings == []  # 0: off
    c, warnings = doubts(dropped, None, TextSettings(min_coverage=0, min_length_ratio=0.2))
    assert not c.short and warnings == []


LINES = ["The tired table calls the pretty letter.", "A old blue hat takes a hat. The dog sees a cat."]


def test_translate_and_the_api_flag_a_line_below_the_ratio(tiny_run, tmp_path, capsys):
    """A ratio no translation reaches flags every line of MIN_WORDS words or more, and no shorter one."""
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    args = ["translate", str(tiny_run / "best.pt"), "--input", str(path), "--beam", "2", "--json-output",
            "--min-coverage", "0"]
    assert main(args + ["--min-length-ratio", "50"]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line)["confidence"] for line in captured.out.splitlines()]
    assert rows[0]["length_ratio"] is None and not rows[0]["short"]  # 7 words
    assert rows[1]["length_ratio"] > 0 and rows[1]["short"]
    warned = [x for x in captured.err.splitlines() if "may leave part of the line out" in x]
    assert len(warned) == 1 and "line 2:" in warned[0] and "--min-length-ratio 50" in warned[0]
    assert main(args + ["--min-length-ratio", "0"]) == 0
    assert "part of the line" not in capsys.readouterr().err
    app = create_app(Translator.from_checkpoint(str(tiny_run / "best.pt")), ServeSettings(max_batch=8, window_ms=20))
    with TestClient(app, raise_server_exceptions=False) as client:
        flagged = client.post("/translate", json={"texts": LINES, "beam": 2,
                                                  "text_handling": {"min_coverage": 0, "min_length_ratio": 50}})
        bad = client.post("/translate", json={"texts": LINES, "text_handling": {"min_length_ratio": -1}})
    assert flagged.status_code == 200, flagged.text
    second = flagged.json()["translations"][1]
    assert second["confidence"]["short"] and any("min_length_ratio 50" in w for w in second["warnings"])
    assert bad.status_code == 422 and "min_length_ratio" in bad.text
