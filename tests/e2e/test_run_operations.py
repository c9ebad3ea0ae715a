"""Operating training runs: one process per run directory (a lock, tested with real processes),
TensorBoard scalars read back, and plain progress lines when standard output is not a terminal."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import REPO, demo_config

pytestmark = pytest.mark.slow


def _config(synth_dir, tmp_path, **train) -> str:
    cfg = demo_config(synth_dir, **{"max_steps": 400, "log_every": 1, "save_every": 3, "valid_every": 50,
                                    "valid_max_sentences": 10, "patience": 0, "threads": 1, **train})
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _train(cfg: str, out, *extra: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen([sys.executable, "-m", "rnnsearch", "train", cfg, "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **popen)


def _wait_for_step(out, step: int, proc, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            steps = [json.loads(line)["step"] for line in (out / "log.jsonl").read_text().splitlines() if line]
        except (FileNotFoundError, json.JSONDecodeError):
            steps = []
        if steps and max(steps) >= step and (out / "last.pt").exists():
            return
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_one_process_per_run_directory(synth_dir, tmp_path):
    cfg, out = _config(synth_dir, tmp_path), tmp_path / "run"
    first = _train(cfg, out)
    try:
        _wait_for_step(out, 6, first)
        for extra in ((), ("--resume",)):  # a second trainer, new or resuming: refused at once
            second = _train(cfg, out, *extra)
            _, err = second.communicate(timeout=120)
            assert second.returncode == 2, err
            assert len(err.strip().splitlines()) == 1 and f"(pid {first.pid} on " in err and "in use" in err, err
        first.send_signal(signal.SIGKILL)  # dies holding the lock: only the file stays
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    third = _train(cfg, out, "--resume", "--set", "train.max_steps=12")
    output, err = third.communicate(timeout=300)
    assert third.returncode == 0, err
    assert f"took over the lock of pid {first.pid} on " in output + err and "no longer running" in output + err
    assert (out / ".lock").read_text() == ""  # released at the end: no holder


def test_tensorboard_scalars_and_plain_progress_lines(synth_dir, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    cfg, out = _config(synth_dir, tmp_path, max_steps=60, log_every=10, valid_every=30, tensorboard=True,
                       progress=True), tmp_path / "tb"
    proc = _train(cfg, out)
    output, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/tok_per_s", "train/lr", "dev/bleu", "dev/loss"} <= tags
    assert [e.step for e in events.Scalars("train/loss")] == [10, 20, 30, 40, 50, 60]
    assert [e.step for e in events.Scalars("dev/bleu")] == [30, 60]
    logged = {e["step"]: e["loss"] for e in map(json.loads, (out / "log.jsonl").read_text().splitlines()) if "loss" in e}
    assert events.Scalars("train/loss")[0].value == pytest.approx(logged[10], rel=1e-5)
    # not a terminal: one plain line per log_every, no bar repainted with carriage returns
    assert "\r" not in output and "\r" not in err
    lines = [line for line in output.splitlines() if re.match(r"step \d+ epoch \d+: loss ", line)]
    assert [int(line.split()[1]) for line in lines] == [10, 20, 30, 40, 50, 60]
