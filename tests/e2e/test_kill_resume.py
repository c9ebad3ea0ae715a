"""Real training processes killed with SIGKILL and stopped with SIGTERM (CPU, same seed)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
import yaml

from conftest import REPO, demo_config
from rnnsearch import checkpoint

pytestmark = pytest.mark.slow
MAX_STEPS = 90


def _config(synth_dir, tmp_path, **train) -> str:
    train = {"max_steps": MAX_STEPS, "valid_every": 25, "log_every": 1, "save_every": 3, "patience": 0,
             "valid_max_sentences": 20, "threads": 1, **train}
    cfg = demo_config(synth_dir, **train)
    cfg["model"].update(dropout=0.3, emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _start(cfg: str, out, resume: bool = False) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "rnnsearch", "train", cfg, "--out", str(out)] + (["--resume"] if resume else [])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _logged_step(out) -> int:
    try:
        lines = (out / "log.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return -1
    steps = []
    for line in lines:
        try:
            steps.append(json.loads(line)["step"])
        except (json.JSONDecodeError, KeyError):
            pass
    return max(steps, default=-1)


def _wait_for_step(proc: subprocess.Popen, out, step: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while _logged_step(out) < step:
        if proc.poll() is not None:
            raise AssertionError(f"training ended before step {step}: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no step {step} after {timeout} s")
        time.sleep(0.005)


def _finish(proc: subprocess.Popen, timeout: float = 180) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, out, err


def _losses(out) -> dict[int, float]:
    entries = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    return {e["step"]: e["loss"] for e in entries if "loss" in e}


def test_sigkill_at_three_points_then_resume_is_bit_identical(synth_dir, tmp_path):
    cfg = _config(synth_dir, tmp_path)
    full, parts = tmp_path / "full", tmp_path / "parts"
    code, _, err = _finish(_start(cfg, full))
    assert code == 0, err
    killed_at = []
    # The kill lands just after the step's log line: at 10 between updates, at 50 (valid_every
    # 25) during validation and its checkpoint writes, at 66 (save_every 3) during a save.
    for i, target in enumerate((10, 50, 66)):
        proc = _start(cfg, parts, resume=i > 0)
        _wait_for_step(proc, parts, target)
        proc.send_signal(signal.SIGKILL)
        assert _finish(proc)[0] == -signal.SIGKILL
        killed_at.append(_logged_step(parts))
    assert killed_at == sorted(killed_at) and killed_at[-1] < MAX_STEPS, killed_at
    print("killed after logged steps", killed_at)
    code, stdout, err = _finish(_start(cfg, parts, resume=True))
    assert code == 0, err
    assert "resuming" in stdout
    a, b = checkpoint.load(full / "last.pt"), checkpoint.load(parts / "last.pt")
    assert a["train_state"]["step"] == b["train_state"]["step"] == MAX_STEPS
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name
    assert _losses(full) == _losses(parts)  # every logged loss, bit for bit, each step once
    best_a, best_b = checkpoint.load(full / "best.pt"), checkpoint.load(parts / "best.pt")
    assert best_a["train_state"]["best_step"] == best_b["train_state"]["best_step"]
    assert not list(parts.glob(".*.tmp"))


def test_sigterm_saves_and_exits_cleanly(synth_dir, tmp_path):
    cfg = _config(synth_dir, tmp_path, save_every=0, valid_every=1000)
    out = tmp_path / "run"
    proc = _start(cfg, out)
    _wait_for_step(proc, out, 5)
    proc.send_signal(signal.SIGTERM)
    code, stdout, err = _finish(proc)
    assert code == 0, err
    assert "stopped by SIGTERM" in stdout and f"rnnsearch train {out / 'config.yaml'} --resume --out {out}" in stdout
    from rnnsearch.config import load
    from rnnsearch.training.state import check_resumable
    payload = checkpoint.load(out / "last.pt")
    check_resumable(load(out / "config.yaml"), payload["config"], out / "last.pt")  # the command it names resumes
    step = payload["train_state"]["step"]
    assert 5 <= step < MAX_STEPS and step == _logged_step(out)


def test_a_prepared_dataset_killed_and_resumed_trains_as_the_text_does(synth_dir, tmp_path):
    """``rnnsearch prepare`` of the corpus, then a run on it SIGKILLed and resumed: every logged loss
    and the final weights equal those of the uninterrupted run that read the text."""
    steps = 40
    text = _config(synth_dir, tmp_path, max_steps=steps)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-m", "rnnsearch", "prepare", text, "--out", str(tmp_path / "prep"),
                           "--workers", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "--set data.prepared=" in done.stdout, done.stdout + done.stderr
    prepared = tmp_path / "prepared.yaml"
    cfg = yaml.safe_load(open(text))
    cfg["data"]["prepared"] = str(tmp_path / "prep")
    prepared.write_text(yaml.safe_dump(cfg))
    code, _, err = _finish(_start(text, tmp_path / "text"))
    assert code == 0, err
    proc = _start(str(prepared), tmp_path / "prep_run")
    _wait_for_step(proc, tmp_path / "prep_run", 20)
    proc.send_signal(signal.SIGKILL)
    assert _finish(proc)[0] == -signal.SIGKILL
    code, stdout, err = _finish(_start(str(prepared), tmp_path / "prep_run", resume=True))
    assert code == 0 and "resuming" in stdout and "training pairs from" in stdout, err
    a, b = checkpoint.load(tmp_path / "text" / "last.pt"), checkpoint.load(tmp_path / "prep_run" / "last.pt")
    assert a["train_state"]["step"] == b["train_state"]["step"] == steps
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name
    assert _losses(tmp_path / "text") == _losses(tmp_path / "prep_run")
