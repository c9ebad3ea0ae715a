"""The released RNNsearch-50 on HTML fragments of our own writing with ``--markup html``
(experiments/data/html_en.jsonl, dev and held-out; the issue's cases among them): every tag with its
attributes, every comment and entity comes through, no element is emptied or merged with another, no
tag stands inside a word, and every line is translated."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnnsearch.analysis.markup_check import damage
from rnnsearch.cli import main

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
ROWS = [json.loads(line) for line in (REPO / "experiments/data/html_en.jsonl").read_text().splitlines()]
CHECKED = [r["html"] for r in ROWS if r["split"] in ("dev", "held-out")]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "in.html"
    path.write_text("".join(line + "\n" for line in CHECKED), encoding="utf-8")
    out = path.with_suffix(".out")
    status = main(["translate", "hansards_enfr_rnnsearch50", "--markup", "html", "--input", str(path),
                   "--output", str(out), "--beam", "5"])
    return status, out.read_text(encoding="utf-8").splitlines()


def test_every_line_is_translated(outputs):
    status, lines = outputs
    assert status == 0 and len(lines) == len(CHECKED) and all(line.strip() for line in lines)


@pytest.mark.parametrize("n", range(len(CHECKED)), ids=[s[:40] for s in CHECKED])
def test_the_markup_comes_through(outputs, n):
    _, lines = outputs
    assert not damage(CHECKED[n], lines[n]), (CHECKED[n], lines[n])
