"""benchmarks/marian_report.py's time-to-quality tables (benchmarks/race_quality.py): the minutes a
dev-BLEU curve needs to reach a score, and the targets of #87 read off two curves."""
from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from marian_report import minutes_to_reach, quality_table  # noqa: E402


def test_minutes_to_reach_is_linear_between_the_marks_around_it():
    curve = {30: 10.0, 60: 16.0, 90: 18.0}
    assert minutes_to_reach(curve, 16.0) == 60
    assert minutes_to_reach(curve, 13.0) == 45
    assert minutes_to_reach(curve, 5.0) == 15  # from BLEU 0 at minute 0
    assert minutes_to_reach(curve, 18.5) is None
    assert minutes_to_reach({30: 12.0, 60: 11.0, 90: 14.0}, 12.0) == 30  # the first time it is reached


@given(st.dictionaries(st.integers(1, 300), st.floats(0, 40, allow_subnormal=False), min_size=1),
       st.floats(0, 40, allow_subnormal=False))  # (the package flushes subnormals: runtime.py)
def test_the_minutes_found_lie_between_marks_and_reach_the_score(curve, target):
    found = minutes_to_reach(curve, target)
    if found is None:
        assert max(curve.values()) < target
    else:
        first = min(m for m, b in curve.items() if b >= target)
        assert max([0] + [m for m in curve if m < first]) <= found <= first


def _marks(bleus, updates=1000):
    return {m: {"bleu": b, "updates": updates * m} for m, b in bleus.items()}


def test_the_tables_read_the_targets_off_the_curves():
    met = quality_table({"rnnsearch": _marks({30: 15.0, 72: 19.5, 180: 21.0}),
                         "marian": _marks({30: 10.0, 72: 16.0, 180: 19.0})}, 3.1)
    assert "| 72 | 72,000 | 19.50 | 72,000 | 16.00 |" in met
    assert "rnnsearch >= Marian + 1.0: met" in met and "rnnsearch <= 72 min: met" in met and ">= 2.5x: met" in met
    assert "| 67 min | not reached |" in met  # 30 + 42 * (19 - 15) / (19.5 - 15); Marian never reaches 21
    missed = quality_table({"rnnsearch": _marks({30: 12.0, 90: 19.2, 180: 19.6}),
                            "marian": _marks({30: 10.0, 90: 16.0, 180: 19.0})}, 2.4)
    assert "met" not in missed.replace("missed", "")
    assert "| 88 min | not reached |" in missed  # 30 + 60 * 7 / 7.2; Marian ends below 19.6


def test_a_race_goes_on_only_on_the_machine_it_began_on(tmp_path):
    import pytest
    from race_quality import same_machine
    state = {"rnnsearch": {}, "marian": {}}
    same_machine(state, "AMD EPYC, 2 cores; 2 threads", tmp_path)
    same_machine(state, "AMD EPYC, 2 cores; 2 threads", tmp_path)  # the same machine: on it goes
    assert state["machine"] == "AMD EPYC, 2 cores; 2 threads"
    with pytest.raises(SystemExit, match="this race began on AMD EPYC.*this machine is Intel Xeon"):
        same_machine(state, "Intel Xeon, 2 cores; 2 threads", tmp_path)
