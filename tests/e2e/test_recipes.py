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


@pytest.mark.parametrize("limit_mib, ok", [(1, True), (0, False)])
def test_diff_size_counts_a_replaced_file_twice(tmp_path, limit_mib, ok):
    """recipes/diff_size.sh: a file replaced in a commit counts its old and its new bytes, changes
    not yet committed and untracked files count too, and past LIMIT_MIB it exits 1."""
    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                              capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    (tmp_path / "w.bin").write_bytes(os.urandom(3000))
    git("add", "w.bin")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD")
    (tmp_path / "w.bin").write_bytes(os.urandom(5000))
    git("commit", "-qam", "replaced")
    (tmp_path / "new.bin").write_bytes(os.urandom(700))
    proc = subprocess.run(["bash", str(REPO / "recipes" / "diff_size.sh"), base], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "LIMIT_MIB": str(limit_mib)})
    replaced = int(subprocess.run("git show --text --format= HEAD | wc -c", shell=True, cwd=tmp_path,
                                  capture_output=True, text=True).stdout)
    assert 8000 < replaced < 8000 * 1.1  # the old 3,000 bytes and the new 5,000, as text with diff marks
    assert proc.returncode == (0 if ok else 1), proc.stderr
    assert f"in all 0.0 MiB ({replaced + 700} bytes) of {limit_mib} MiB" in proc.stdout
    assert ("over the limit" in proc.stderr) is not ok
