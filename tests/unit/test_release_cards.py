"""Each committed release's model card is the one `rnnsearch release` writes today from its release.json
and its weights (analysis/model_card.py): a card that says what the code no longer does (or a card edited
by hand) fails here. To bring one up to date without measuring again, any `--record` writes it anew."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnsearch import checkpoint
from rnnsearch.analysis.model_card import model_card
from rnnsearch.decoding import pretrained

RELEASES = sorted(p for p in (Path(__file__).resolve().parents[2] / "models").iterdir() if pretrained.is_release(p))


def test_there_are_releases():
    assert len(RELEASES) >= 6


@pytest.mark.parametrize("folder", RELEASES, ids=lambda p: p.name)
def test_card_is_what_the_code_writes(folder):
    manifest = pretrained.read_manifest(folder)
    written = model_card(manifest, checkpoint.load(folder / manifest["weights"]))
    committed = (folder / "README.md").read_text(encoding="utf-8")
    assert committed == written, f"{folder.name}/README.md differs from model_card(): write it again (--record)"


def test_a_release_outside_models_says_to_use_its_path(tiny_run, tmp_path):
    """A release written to another folder told its user ``rnnsearch translate models/NAME`` and
    ``from_pretrained('NAME')``, which do not find it."""
    from rnnsearch.cli import main
    from rnnsearch import Translator
    assert main(["release", str(tiny_run / "best.pt"), "--out", str(tmp_path / "mine" / "tiny_rel")]) == 0
    card = (tmp_path / "mine" / "tiny_rel" / "README.md").read_text(encoding="utf-8")
    path = str((tmp_path / "mine" / "tiny_rel").resolve())
    assert f"rnnsearch translate {path} --input" in card and f"from_pretrained({path!r})" in card
    assert "models/tiny_rel" not in card and "torch.hub" not in card
    assert Translator.from_pretrained(path).translate(["The dog sees a cat."])[0].text


def test_release_and_average_take_a_release_folder_as_their_help_says(tiny_run, tmp_path):
    """``release NAME`` said "checkpoint not found" and ``release models/NAME`` "is a directory"; so did average."""
    from rnnsearch.cli import main
    assert main(["release", str(tiny_run / "best.pt"), "--out", str(tmp_path / "one")]) == 0
    assert main(["release", str(tmp_path / "one"), "--out", str(tmp_path / "two")]) == 0
    assert main(["average", str(tmp_path / "one"), str(tmp_path / "two"), "--out", str(tmp_path / "avg.pt")]) == 0
    assert pretrained.is_release(tmp_path / "two") and (tmp_path / "avg.pt").is_file()
