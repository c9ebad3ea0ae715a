"""BENCHMARKS.md keeps one section per benchmark: a bench's --record replaces its own section (the
latest run) and leaves every other section as it was, or adds the section at the end."""
from __future__ import annotations

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from common import record  # noqa: E402


def test_record_replaces_its_own_section_only(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\n## Current figures\n\n| a |\n\n## Serving\n\nold run\n\n### old date\n\nmore\n\n"
                    "## Decoding\n\nkept\n")
    record("Serving", "new run", path)
    expected = "# Benchmarks\n\n## Current figures\n\n| a |\n\n## Serving\n\nnew run\n\n## Decoding\n\nkept\n"
    assert path.read_text() == expected
    record("Decoding", "newer", path)
    record("Data path", "first run", path)
    text = path.read_text()
    assert text.endswith("## Decoding\n\nnewer\n\n## Data path\n\nfirst run\n") and "kept" not in text
    assert text.count("## Serving") == 1 and "new run" in text
