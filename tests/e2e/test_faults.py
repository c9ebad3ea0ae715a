"""Non-finite updates, a full disk, an unwritable run directory."""
from __future__ import annotations

import errno
import json
import math

import pytest
import torch

from conftest import demo_config
from rnnsearch import checkpoint
from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.training.trainer import TrainError, Trainer

pytestmark = pytest.mark.slow
QUIET = lambda *_: None  # noqa: E731


def _cfg(synth_dir, **train):
    train = {"max_steps": 12, "valid_every": 1000, "log_every": 1, "patience": 0, "valid_max_sentences": 10,
             **train}
    cfg = demo_config(synth_dir, **train)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    return from_dict(cfg)


def _poison(trainer: Trainer, bad_calls: set[int] | None = None, from_call: int | None = None) -> None:
    """Make the loss NaN on the given (1-based) training calls of model.loss."""
    real, calls = trainer.model.loss, [0]

    def loss(*args):
        nll, n = real(*args)
        if trainer.model.training:
            calls[0] += 1
            if (bad_calls and calls[0] in bad_calls) or (from_call and calls[0] >= from_call):
                nll = nll * float("nan")
        return nll, n
    trainer.model.loss = loss


def test_non_finite_updates_are_skipped_and_counted(synth_dir, tmp_path):
    trainer = Trainer(_cfg(synth_dir), tmp_path, log=QUIET)
    _poison(trainer, bad_calls={3, 5})
    before = {}

    real_step = trainer.train_step

    def step(idx):
        if trainer.state.step + 1 in (3, 5):
            before[trainer.state.step + 1] = [p.detach().clone() for p in trainer.model.parameters()]
        out = real_step(idx)
        if trainer.state.step + 1 in before:
            after = list(trainer.model.parameters())
            assert all(torch.equal(a, b) for a, b in zip(before[trainer.state.step + 1], after))
        return out
    trainer.train_step = step
    result = trainer.run()
    assert result["step"] == 12 and result["nonfinite_total"] == 2 and result["nonfinite_run"] == 0
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    skipped = [e for e in events if e.get("event") == "nonfinite_skipped"]
    assert [e["step"] for e in skipped] == [3, 5] and skipped[-1]["skipped_total"] == 2
    assert all(math.isfinite(p.sum().item()) for p in trainer.model.parameters())
    assert checkpoint.load(tmp_path / "last.pt")["train_state"]["nonfinite_total"] == 2


def test_too_many_non_finite_updates_stop_with_the_last_good_checkpoint(synth_dir, tmp_path):
    trainer = Trainer(_cfg(synth_dir, save_every=2, max_nonfinite=3), tmp_path, log=QUIET)
    _poison(trainer, from_call=6)
    with pytest.raises(TrainError, match=r"3 updates in a row \(steps 6-8; train.max_nonfinite=3\).*last.pt \(step 6\)"):
        trainer.run()
    kept = checkpoint.load(tmp_path / "last.pt")
    assert kept["train_state"]["step"] == 6  # written during the streak: weights of step 5, all finite
    assert all(torch.isfinite(t).all() for t in kept["model"].values())


def test_a_full_disk_leaves_the_previous_checkpoint_intact(synth_dir, tmp_path, monkeypatch):
    trainer = Trainer(_cfg(synth_dir, save_every=2), tmp_path, log=QUIET)
    real_save, saves = torch.save, [0]

    def full_disk(obj, fh, *args, **kwargs):
        saves[0] += 1
        if saves[0] >= 3:  # the third save finds the disk full half way
            fh.write(b"\0" * 1000)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(obj, fh, *args, **kwargs)
    monkeypatch.setattr(checkpoint.torch, "save", full_disk)
    with pytest.raises(TrainError, match=r"last.pt: cannot write checkpoint: .*No space left on device.*intact"):
        trainer.run()
    monkeypatch.setattr(checkpoint.torch, "save", real_save)
    assert checkpoint.load(tmp_path / "last.pt")["train_state"]["step"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "config.yaml", "last.pt", "log.jsonl"]


def test_an_unwritable_run_directory_fails_before_any_work(synth_dir, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cfg = tmp_path / "cfg.yaml"
    import yaml
    cfg.write_text(yaml.safe_dump(demo_config(synth_dir)))
    assert main(["train", str(cfg), "--out", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rnnsearch train: error: ") and "a-file/run: the run directory cannot be written" in err
    assert "Traceback" not in err


def test_bf16_autocast_trains_on_cpu(synth_dir, tmp_path):
    result = Trainer(_cfg(synth_dir, max_steps=3, bf16=True), tmp_path, log=QUIET).run()
    losses = [json.loads(line).get("loss") for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert result["nonfinite_total"] == 0 and all(math.isfinite(v) for v in losses if v is not None)
