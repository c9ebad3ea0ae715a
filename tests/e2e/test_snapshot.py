"""Snapshots (`rnnsearch snapshot` / `restore`): a run's state small enough to commit, restored
into a run directory on another machine that `train --resume` continues on the same data order,
rate and counters; bad snapshots are refused with the file's name."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import REPO, demo_config
from rnnsearch import checkpoint
from rnnsearch.config import from_dict
from rnnsearch.errors import UserError
from rnnsearch.training.snapshot import restore_snapshot, write_snapshot
from rnnsearch.training.trainer import train

pytestmark = pytest.mark.slow
QUIET = {"log": lambda *_: None}


def _cfg(synth_dir, max_steps: int):
    cfg = demo_config(synth_dir, max_steps=max_steps, valid_every=20, save_every=10, keep_last=10, log_every=5,
                      valid_max_sentences=20, patience=0, lr_decay=0.5, lr_decay_patience=0, threads=1)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    return from_dict(cfg)


def _entries(run) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def run40(synth_dir, tmp_path_factory):
    """A run at update 40 whose best.pt is update 20's (a save kept by train.keep_last)."""
    run = tmp_path_factory.mktemp("run40")
    train(_cfg(synth_dir, 40), run, **QUIET)
    shutil.copy(run / "step-00000020.pt", run / "best.pt")
    return run


def test_snapshot_restore_then_resume(synth_dir, run40, tmp_path):
    snap, again = tmp_path / "snap", tmp_path / "again"
    manifest = write_snapshot(run40, snap, **QUIET)
    assert sorted(p.name for p in snap.iterdir()) == ["best.pt", "last.pt", "log.jsonl", "snapshot.json"]
    assert manifest["step"] == 40 and manifest["best"] == "best.pt" and manifest["best_update"] == 20
    stored = torch.load(snap / "last.pt", weights_only=True)  # bf16 weights as byte planes, no moments
    assert stored["optimizer"]["state"] == {}
    weights = sum(w.numel() for w in checkpoint.load(run40 / "last.pt")["model"].values() if w.is_floating_point())
    assert not any(w.is_floating_point() for w in stored["model"].values())
    assert stored[checkpoint.BF16]["low"].numel() == weights and stored[checkpoint.BF16]["high"].numel() < weights
    restore_snapshot(snap, again, **QUIET)

    original, restored = checkpoint.load(run40 / "last.pt"), checkpoint.load(again / "last.pt")
    for name, w in original["model"].items():  # float32 again, with bf16's rounding
        assert restored["model"][name].dtype == w.dtype
        assert torch.equal(restored["model"][name], w.to(torch.bfloat16).to(w.dtype)), name
    assert restored["optimizer"]["state"] == {}
    assert restored["optimizer"]["param_groups"] == original["optimizer"]["param_groups"]
    for key in ("train_state", "scheduler", "config", "src_codec", "tgt_codec"):
        assert restored[key] == original[key], key
    assert torch.equal(restored["rng"]["torch"], original["rng"]["torch"])
    best20 = checkpoint.load(run40 / "step-00000020.pt")["model"]
    for name, w in checkpoint.load(again / "best.pt")["model"].items():  # int8: half a step of its row's scale
        step = best20[name].abs().amax(-1, keepdim=True) / 127 if best20[name].dim() == 2 else 1e-2 * best20[name].abs()
        assert ((w - best20[name]).abs() <= step / 2 + 1e-6).all(), name
    assert checkpoint.load(again / "best.pt")["train_state"]["step"] == 20
    entries = _entries(again)
    assert entries[:-1] == _entries(run40) and entries[-1]["event"] == "restored" and entries[-1]["step"] == 40

    lines: list[str] = []
    train(_cfg(synth_dir, 60), again, resume=True, log=lines.append)
    assert any("the optimiser's moments start from zero" in line for line in lines), lines
    train(_cfg(synth_dir, 60), run40, resume=True, **QUIET)
    tokens = lambda run: {e["step"]: e["tgt_tokens"] for e in _entries(run) if "loss" in e}  # noqa: E731
    assert tokens(again) == tokens(run40) and max(tokens(again)) == 60  # the same batches, in the same order


def test_a_snapshot_of_the_same_update_is_left_as_it_is_and_best_may_be_last(run40, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(run40, run)
    shutil.copy(run / "last.pt", run / "best.pt")
    snap = tmp_path / "snap"
    assert write_snapshot(run, snap, **QUIET)["best"] == "last"
    assert not (snap / "best.pt").exists()
    before = (snap / "snapshot.json").read_text()
    said: list[str] = []
    write_snapshot(run, snap, log=said.append)
    assert "left as it is" in said[0] and (snap / "snapshot.json").read_text() == before
    restore_snapshot(snap, tmp_path / "again", **QUIET)
    a, b = (checkpoint.load(tmp_path / "again" / n)["model"] for n in ("best.pt", "last.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    old = sum(f["bytes"] for f in json.loads(before)["files"].values()) / 2**20
    new = sum(f["bytes"] for f in write_snapshot(run40, snap, log=said.append)["files"].values()) / 2**20
    assert old > 0.01 and new > 0.01  # another run's snapshot replaces it: its bytes and the old ones count
    assert f"it replaces a snapshot of {old:.2f} MiB, so a commit of it adds {old + new:.2f} MiB" in said[-1]


def test_bad_snapshots_and_runs_are_refused_with_the_file(run40, tmp_path):
    snap = tmp_path / "snap"
    write_snapshot(run40, snap, **QUIET)
    with pytest.raises(UserError, match="already holds a run"):
        restore_snapshot(snap, run40, **QUIET)
    with pytest.raises(UserError, match="not a snapshot"):
        restore_snapshot(tmp_path, tmp_path / "x", **QUIET)
    damaged = tmp_path / "damaged"
    shutil.copytree(snap, damaged)
    data = bytearray((damaged / "last.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (damaged / "last.pt").write_bytes(bytes(data))
    with pytest.raises(UserError, match=r"last\.pt: its SHA-256 differs"):
        restore_snapshot(damaged, tmp_path / "y", **QUIET)
    assert not (tmp_path / "y" / "last.pt").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match=r"last\.pt"):
        write_snapshot(empty, tmp_path / "z", **QUIET)
    slim = tmp_path / "slim"
    slim.mkdir()
    payload = checkpoint.load(run40 / "last.pt")
    checkpoint.save(slim / "last.pt", {k: v for k, v in payload.items() if k != "optimizer"})
    with pytest.raises(UserError, match="no optimiser state"):
        write_snapshot(slim, tmp_path / "z", **QUIET)
    assert not (tmp_path / "z").exists()


def test_the_cli_says_what_is_wrong_without_a_traceback(tmp_path):
    cmd = [sys.executable, "-m", "rnnsearch", "restore", str(tmp_path), "--out", str(tmp_path / "run")]
    done = subprocess.run(cmd, capture_output=True, text=True, env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    assert done.returncode != 0 and "not a snapshot" in done.stderr and "Traceback" not in done.stderr, done.stderr
