"""A translation's confidence (text/confidence.py): the model's log-probability per output unit and the
share of units it wrote as <unk>, in translate --json-output (the API: tests/serve/test_confidence.py);
--min-confidence warns."""
from __future__ import annotations

import json
import math

import pytest

from rnnsearch import SearchSettings, Translator
from rnnsearch.cli import main
from rnnsearch.decoding.source import Translation
from rnnsearch.text.confidence import confidence
from rnnsearch.text.pipeline import translate_lines

LINES = ["The tired table calls the pretty letter.", "", "A old blue hat takes a hat. The dog sees a cat."]


@pytest.fixture(scope="module")
def tiny(tiny_run):
    return Translator.from_checkpoint(str(tiny_run / "best.pt"))


def test_confidence_is_the_log_probability_per_unit_with_each_sentences_end(tiny):
    lines = [t for part in translate_lines(tiny, LINES, SearchSettings(beam=3)) for t in part]
    one, blank, two = lines
    c = confidence(one)
    assert math.isclose(c.logprob, one.score / (len(one.tokens) + 1), rel_tol=1e-6) and c.logprob < 0
    assert len(two.segments) == 2 and math.isclose(confidence(two).logprob, two.score / (len(two.tokens) + 2))
    assert confidence(blank) is None
    assert confidence(one, threshold=c.logprob + 1e-3).low and not confidence(one, threshold=c.logprob - 1e-3).low


def test_unk_share_counts_the_units_written_as_unk():
    t = Translation("a b c d", ["a", "b", "<unk>", "d"], ["x", "</s>"], -4.0, None, replaced=[0])
    assert confidence(t).unk_share == 0.5
    assert confidence(Translation("", [], ["x", "</s>"], 0.0, None, error="refused")) is None


def test_json_output_and_min_confidence(tiny_run, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    code = main(["translate", str(tiny_run / "best.pt"), "--input", str(path), "--beam", "2", "--json-output",
                 "--min-confidence", "0"])  # every translation's log-probability is below 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 0 and len(rows) == 3 and rows[1]["text"] == "" and rows[1]["confidence"] is None
    assert all(r["confidence"]["low"] and r["confidence"]["logprob"] < 0 for r in (rows[0], rows[2]))
    warned = [x for x in captured.err.splitlines() if "low confidence" in x]
    assert len(warned) == 2 and "line 1:" in warned[0] and "line 3:" in warned[1]
    code = main(["translate", str(tiny_run / "best.pt"), "--input", str(path), "--beam", "2", "--n-best", "2",
                 "--json-output"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and len(rows[0]["nbest"]) == 2 and rows[0]["nbest"][0]["text"] == rows[0]["text"]
    assert not rows[0]["confidence"]["low"]


def test_a_card_says_what_the_model_is_for_and_records_other_text(tiny_run, synth_dir, tmp_path, capsys):
    """Every card has "Intended use and limitations"; ``evaluate --record SET`` adds a set's scores to
    it (and to release.json), the same set measured again replacing its row; not for a run's checkpoint."""
    from rnnsearch.analysis.release import make_release
    folder = tmp_path / "tiny_release"
    make_release(tiny_run / "best.pt", folder, log=lambda *_: None)
    card = (folder / "README.md").read_text()
    assert "## Intended use and limitations" in card and "Not measured on text unlike" in card
    args = ["evaluate", str(folder), "--src", str(synth_dir / "test.en"), "--ref", str(synth_dir / "test.fr"),
            "--beam", "2", "--record", "synthetic test"]
    assert main(args) == 0 and main(args) == 0
    capsys.readouterr()
    manifest = json.loads((folder / "release.json").read_text())
    (entry,) = manifest["out_of_domain"]
    assert entry["set"] == "synthetic test" and entry["sentences"] == 150 and set(entry["scores"]) == {"BLEU", "chrF"}
    card = (folder / "README.md").read_text()
    assert card.count("| synthetic test | BLEU ") == 1 and "--beam 2" in card
    assert main(["evaluate", str(tiny_run / "best.pt"), "--src", str(synth_dir / "test.en"), "--ref",
                 str(synth_dir / "test.fr"), "--beam", "2", "--record", "x"]) == 2
    assert "not a release folder" in capsys.readouterr().err


def test_assess_says_of_a_translate_text_result_what_the_cli_says(tiny):
    """A Python caller of translate_text had no warning where `rnnsearch translate` gave one."""
    from rnnsearch import TextSettings, assess, translate_text
    [line] = translate_text(tiny, ["the big dog sees a small cat ."])
    c, warnings = assess(tiny, line, TextSettings(min_confidence=0.0 - 1e-9, min_coverage=0))
    assert c is not None and c.low and warnings == [f"low confidence: {c.logprob:.3f} per unit, below min_confidence "
                                                    f"{-1e-9}: check this translation"]
    assert assess(tiny, line, TextSettings(min_coverage=0, min_length_ratio=0))[1] == []
    with pytest.raises(TypeError):
        assess(tiny, line, {"min_coverage": 0})
