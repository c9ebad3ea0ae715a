"""`rnnsearch train CONFIG --init MODEL` end to end: a released model continued on new data from
the command line, resumed, released with its parent named; a SentencePiece parent too."""
from __future__ import annotations

import json

import pytest
import torch
import yaml

from conftest import REPO, demo_config
from rnnsearch import checkpoint
from rnnsearch.analysis.release import make_release
from rnnsearch.cli import main
from rnnsearch.config import from_dict

pytestmark = pytest.mark.slow


def test_adapt_a_release_resume_and_release_it(tiny_run, synth_dir, tmp_path, capsys):
    parent = tmp_path / "models" / "tiny_parent"
    make_release(tiny_run / "best.pt", parent, log=lambda *_: None)
    run = tmp_path / "run"
    base = ["train", str(REPO / "configs" / "demo.yaml"), "--out", str(run), "--set", f"data.dir={synth_dir}",
            "--set", "train.threads=1", "--set", "train.max_minutes=0", "--set", "train.valid_every=10",
            "--set", "train.valid_max_sentences=20"]
    assert main(base + ["--init", str(parent), "--set", "train.max_steps=10"]) == 0
    out = capsys.readouterr().out
    assert "the architecture and vocabularies are its own" in out and "model.emb: 64 -> 48" in out
    last = checkpoint.load(run / "last.pt")
    assert last["meta"]["init"]["name"] == str(parent) and last["train_state"]["step"] == 10
    assert from_dict(last["config"]).model == from_dict(checkpoint.load(parent / "model.pt")["config"]).model
    assert main(base + ["--resume", "--set", "train.max_steps=20"]) == 0  # --resume alone continues it
    again = checkpoint.load(run / "last.pt")
    assert again["train_state"]["step"] == 20 and again["meta"]["init"] == last["meta"]["init"]
    assert main(base + ["--init", str(parent), "--set", "model.emb=32", "--out", str(tmp_path / "r2")]) == 2
    assert "--set model.emb: --init takes the architecture" in capsys.readouterr().err
    assert not (tmp_path / "r2" / "config.yaml").exists()  # refused before the run directory is made
    card = make_release(run / "last.pt", tmp_path / "models" / "tiny_adapted", log=lambda *_: None)
    text = (tmp_path / "models" / "tiny_adapted" / "README.md").read_text()
    assert card["name"] == "tiny_adapted" and f"started from `{parent}`" in text
    had = checkpoint.load(parent / "model.pt")["train_state"]  # the card counts both runs together
    assert f"with it, {had['step'] + 20:,} updates and " in text and " core-hours in all" in text


def test_a_sentencepiece_parent(synth_dir, tmp_path):
    from rnnsearch.training.trainer import train
    raw = demo_config(synth_dir, max_steps=2, valid_every=2, valid_max_sentences=5, threads=1)
    raw["vocab"] = {"mode": "sentencepiece", "size": 120, "joint": True}
    train(from_dict(raw), tmp_path / "parent", log=lambda *_: None)
    child = {**raw, "vocab": {"mode": "word", "size": 50}, "train": {**raw["train"], "max_steps": 2, "lr": 1e-4}}
    train(from_dict(child), tmp_path / "child", log=lambda *_: None, init=str(tmp_path / "parent" / "last.pt"))
    a, b = (checkpoint.load(tmp_path / name / "last.pt") for name in ("parent", "child"))
    assert b["src_codec"] == a["src_codec"] and b["config"]["vocab"] == a["config"]["vocab"]
    assert b["meta"]["init"]["updates"] == 2 and json.dumps(b["meta"]["init"])
    assert any(not torch.equal(a["model"][k], b["model"][k]) for k in a["model"])  # it trained on
    # the same run from a dataset prepared with the parent's SentencePiece models: the same updates
    text = tmp_path / "child.yaml"
    text.write_text(yaml.safe_dump(child))
    parent = str(tmp_path / "parent" / "last.pt")
    assert main(["prepare", str(text), "--init", parent, "--out", str(tmp_path / "prep"), "--workers", "1"]) == 0
    prepared = from_dict({**child, "data": {**child["data"], "prepared": str(tmp_path / "prep")}})
    train(prepared, tmp_path / "child2", log=lambda *_: None, init=parent)
    c = checkpoint.load(tmp_path / "child2" / "last.pt")
    assert c["tgt_codec"] == a["tgt_codec"]
    for k in b["model"]:
        assert torch.allclose(b["model"][k], c["model"][k], atol=1e-6), k
