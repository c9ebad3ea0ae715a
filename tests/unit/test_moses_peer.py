"""recipes/moses_peer.py without Moses: GNU time's reports, MERT's curve, moses.ini without paths,
the scores of an output as Table 1 scores the RNN rows, and recipes/moses.sh's refusals and its test phase (with
stand-ins for Moses' tools)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "recipes"))
import moses_peer  # noqa: E402

TIME_REPORT = """\tCommand being timed: "bash -c set -euo pipefail; align"
\tUser time (seconds): 5400.25
\tSystem time (seconds): 1799.75
\tPercent of CPU this job got: 198%
\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:00:36.50
\tMaximum resident set size (kbytes): 3145728
\tExit status: 0
"""


def test_gnu_time_gives_core_hours_peak_memory_and_wall():
    c = moses_peer.gnu_time(TIME_REPORT)
    assert c["core_hours"] == pytest.approx(2.0) and c["peak_gib"] == pytest.approx(3.0)
    assert c["wall_s"] == pytest.approx(3636.5) and c["status"] == 0
    assert moses_peer.clock_seconds("2:03.45") == pytest.approx(123.45)
    with pytest.raises(ValueError, match="Maximum resident set size"):
        moses_peer.gnu_time(TIME_REPORT.replace("Maximum resident", "Max resident"))


def test_a_real_gnu_time_report_parses(tmp_path):
    if not os.access("/usr/bin/time", os.X_OK):
        pytest.skip("no GNU time at /usr/bin/time")
    subprocess.run(["/usr/bin/time", "-v", "-o", str(tmp_path / "x.time"), sys.executable, "-c", "pass"], check=True)
    c = moses_peer.gnu_time((tmp_path / "x.time").read_text())
    assert c["status"] == 0 and 0 < c["peak_gib"] < 1 and c["wall_s"] >= 0


def test_phase_compute_keeps_the_phases_order_then_the_decodes(tmp_path):
    for name in ("decode.test.1", "tune", "data", "rnnsearch.test.2", "build"):
        (tmp_path / f"{name}.time").write_text(TIME_REPORT)
    assert list(moses_peer.phase_compute(tmp_path)) == ["build", "data", "tune", "decode.test.1", "rnnsearch.test.2"]
    for name in ("train.10", "train.4", "train.6"):  # train's steps, each timed on its own
        (tmp_path / f"{name}.time").write_text(TIME_REPORT)
    assert list(moses_peer.phase_compute(tmp_path)) == ["build", "data", "train.4", "train.6", "train.10", "tune",
                                                        "decode.test.1", "rnnsearch.test.2"]
    (tmp_path / "tune+2.time").write_text(TIME_REPORT)  # MERT stopped with a session and gone on: both counted
    compute = moses_peer.phase_compute(tmp_path)
    one = moses_peer.gnu_time(TIME_REPORT)
    assert "tune+2" not in compute and compute["tune"]["invocations"] == 2
    assert compute["tune"]["core_hours"] == 2 * one["core_hours"] and compute["tune"]["wall_s"] == 2 * one["wall_s"]


def test_mert_curve_reads_each_iterations_last_best_point(tmp_path):
    (tmp_path / "run1.mert.log").write_text("Seed: 1\nBest point: 0.1 -0.2 0.3  => 0.201\n"
                                            "more\nBest point: 0.05 -0.25 1e-05  => 0.2345\n")
    (tmp_path / "run10.mert.log").write_text("Best point: 0.2 0.2 0.2  => 0.25\n")
    (tmp_path / "run2.mert.log").write_text("killed before its best point\n")
    (tmp_path / "mert.log").write_text("Best point: 9 9 9  => 0.9\n")  # the running copy, not an iteration
    (tmp_path / "run11.mert.log").write_text("Best point: 0.2 0.2 0.2  => 0.25\n")  # copied on, never decoded
    for n in (1, 2, 10):
        (tmp_path / f"run{n}.out").write_text("a translation\n")
    curve = moses_peer.mert_curve(tmp_path)
    assert [(r["run"], r["bleu"]) for r in curve] == [(1, 0.2345), (10, 0.25)]
    assert curve[0]["weights"] == [0.05, -0.25, 1e-05]


def test_moses_ini_loses_the_machines_paths_and_nothing_else():
    ini = ("# MERT optimized configuration\n# decoder /work/moses/bin/moses\n[feature]\n"
           "PhraseDictionaryMemory name=TranslationModel0 num-features=4 "
           "path=/root/runs/moses/tune/filtered/phrase-table.0-0.1.1.gz input-factor=0\n"
           "KENLM name=LM0 factor=0 path=/root/runs/moses/lm/train.fr.blm order=5\n[weight]\nLM0= 0.0516\n")
    out = moses_peer.without_paths(ini)
    assert "/root" not in out and "/work" not in out
    assert "path=phrase-table.0-0.1.1.gz input-factor=0" in out and "path=train.fr.blm order=5" in out
    assert "# decoder moses" in out and "LM0= 0.0516" in out
    assert moses_peer.without_paths("a 0.5/2 b") == "a 0.5/2 b"


def test_an_output_is_scored_as_table1_scores_the_models(tiny_run, synth_dir, tmp_path):
    """sacreBLEU on the file as given; No UNK over the sentences the release's vocabularies know,
    exactly as ``evaluate`` counts them for a model."""
    from sacrebleu.metrics import BLEU

    from rnnsearch.analysis.evaluate import evaluate
    from rnnsearch.decoding.settings import SearchSettings
    from rnnsearch.decoding.translator import Translator
    src, ref = synth_dir / "test.en", synth_dir / "test.fr"
    refs = ref.read_text().splitlines()
    hyp = tmp_path / "hyp.fr"
    hyp.write_text("".join(r.split(" ", 1)[-1] + "\n" for r in refs))
    r = moses_peer.score(hyp, src, ref, str(tiny_run / "best.pt"))
    assert r["bleu"] == BLEU().corpus_score(hyp.read_text().splitlines(), [refs]).score
    model = evaluate(Translator.from_pretrained(str(tiny_run / "best.pt")), src.read_text().splitlines(), refs,
                     SearchSettings(beam=1))
    assert (r["n"], r["n_no_unk"]) == (model["n"], model["n_no_unk"])


def test_speed_counts_the_raw_source_words_of_each_timed_decode(tmp_path):
    src = tmp_path / "test.en"
    src.write_text("one two three\nfour five\n")
    compute = {"decode.test.2": {"wall_s": 2.5, "peak_gib": 1.0}, "rnnsearch.test.1": {"wall_s": 10.0, "peak_gib": 0.5},
               "tune": {"wall_s": 60.0, "peak_gib": 2.0}, "decode.other.1": {"wall_s": 1.0, "peak_gib": 1.0}}
    rows = moses_peer.speed(compute, {"test": src}, timed="test")
    assert [(r["system"], r["threads"], r["words_per_s"]) for r in rows] == [("Moses", 2, 2.0), ("rnnsearch", 1, 0.5)]
    assert moses_peer.speed(compute, {"test": src}) == []  # only the speed phase times: the test may share the machine


def test_the_summary_holds_every_number_it_is_given():
    scores = {"test": {"bleu": 31.234, "bleu_no_unk": 33.1, "n_no_unk": 2247, "chrf": 55.5}}
    curve = [{"run": 1, "bleu": 0.2012, "weights": []}]
    compute = {"train": moses_peer.gnu_time(TIME_REPORT)}
    speeds = [{"system": "Moses", "set": "test", "threads": 1, "words_per_s": 123.4, "peak_gib": 1.5}]
    text = "\n".join(moses_peer.markdown(compute, curve, scores, speeds))
    for expected in ("| test | 31.23 | 33.10 (2247) | 55.50 |", "| 1 | 20.12 |", "| train | 2.000 | 60.6 min | 3.00 |",
                     "| Moses | test | 1 | 123.4 | 1.50 |"):
        assert expected in text


def test_the_recipe_refuses_without_moses_and_names_an_unknown_phase(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MOSES"}
    r = subprocess.run(["bash", str(REPO / "recipes" / "moses.sh"), "build"], env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "MOSES is not set" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run(["bash", str(REPO / "recipes" / "moses.sh"), "decode"], env={**env, "MOSES": str(tmp_path),
                       "OUT": str(tmp_path / "out")}, capture_output=True, text=True)
    assert r.returncode == 2 and "unknown phase 'decode'" in r.stderr


def _fake_moses(root):
    """A mosesdecoder tree whose tools are shell stand-ins: the text passes through, upper-cased by `moses`,
    which notes each set it decodes in calls.txt."""
    tools = {"scripts/tokenizer/tokenizer.perl": "cat", "scripts/recaser/truecase.perl": "cat",
             "scripts/recaser/detruecase.perl": "cat", "scripts/tokenizer/detokenizer.perl": "cat",
             "scripts/training/filter-model-given-input.pl": 'mkdir -p "$1" && touch "$1/moses.ini"',
             "bin/moses": f'echo "$2" >> {root}/calls.txt; tr a-z A-Z'}
    for path, body in tools.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"#!/bin/bash\n{body}\n")
        (root / path).chmod(0o755)


@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="the recipe times its phases with GNU time")
def test_a_test_phase_stopped_midway_goes_on_from_the_set_it_was_in(tmp_path):
    moses, out = tmp_path / "moses", tmp_path / "out"
    _fake_moses(moses)
    for name in ("test", "newstest2014", "tune"):
        (out / "data").mkdir(parents=True, exist_ok=True)
        (out / "data" / f"{name}.en").write_text(f"a {name} line\nanother one\n")
    (out / "tune").mkdir()
    (out / "tune" / "moses.ini").write_text("")
    (out / "tune" / "run1.out").write_text("x\ny\n")
    env = {**os.environ, "MOSES": str(moses), "OUT": str(out), "THREADS": "2"}
    r = subprocess.run(["bash", str(REPO / "recipes" / "moses.sh"), "test"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (out / "test" / "test.hyp.fr").read_text() == "A TEST LINE\nANOTHER ONE\n"
    assert (out / "test" / "newstest2014.hyp.fr").read_text() == "A NEWSTEST2014 LINE\nANOTHER ONE\n"
    assert len((moses / "calls.txt").read_text().split()) == 3 and (out / "done.test").exists()
    (out / "test" / "newstest2014.hyp.fr").write_text("A NEWSTEST2014 LINE\n")  # stopped midway: one line of two
    r = subprocess.run(["bash", str(REPO / "recipes" / "moses.sh"), "test"], env={**env, "FORCE": "1"},
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len((moses / "calls.txt").read_text().split()) == 4  # newstest2014 again, the finished sets not
    assert (out / "test" / "newstest2014.hyp.fr").read_text() == "A NEWSTEST2014 LINE\nANOTHER ONE\n"
