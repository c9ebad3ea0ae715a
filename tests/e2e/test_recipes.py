"""The Hansards recipe runs end to end (a smoke size: 3,000 pairs, seconds of training)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SHARED_DATA

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not (SHARED_DATA / "hansards").exists(), reason="../shared/data/hansards is not here")
def test_hansards_recipe_smoke(tmp_path):
    out = tmp_path / "hansards"
    env = {**os.environ, "OUT": str(out), "PAIRS": "3000", "MINUTES": "0.1", "TEST_LINES": "20", "BEAM": "2",
           "PROFILE": "cpu", "BIN": str(Path(sys.executable).parent), "DATA": str(SHARED_DATA),
           "SETS": "--set train.valid_max_sentences=20 --set train.valid_every=100000",
           "RELEASES": str(tmp_path / "models"),  # never the clone's models/ and snapshots/ (the campaign's)
           "SNAPSHOTS": str(tmp_path / "snapshots")}
    proc = subprocess.run([str(REPO / "recipes" / "hansards.sh")], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    for test_set in ("hansards", "newstest2014"):
        md = (out / f"report_{test_set}" / "report.md").read_text()
        for name in ("RNNencdec-30", "RNNsearch-30", "RNNencdec-50", "RNNsearch-50"):
            assert any(line.startswith(f"| {name} |") for line in md.splitlines()), (test_set, name)
        assert (out / f"report_{test_set}" / "recipe.txt").read_text().startswith("profile: cpu")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [
        f"hansards_enfr_{name}" for name in ("rnnencdec30", "rnnencdec50", "rnnsearch30", "rnnsearch50")]
