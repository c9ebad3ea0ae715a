"""Two-process data parallelism on CPU (gloo) through torchrun, against one process."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
import yaml

from conftest import REPO, demo_config
from rnnsearch import checkpoint

pytestmark = pytest.mark.slow


def _run(cmd: list[str], timeout: float = 240) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _train(cfg, out, nproc: int, resume: bool = False) -> str:
    args = ["-m", "rnnsearch", "train", str(cfg), "--out", str(out)] + (["--resume"] if resume else [])
    if nproc == 1:
        return _run([sys.executable] + args)
    return _run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] + args)


def _log(out) -> list[dict]:
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


def _same_runs(one, two, keys=("loss", "dev_loss")) -> tuple[dict, dict]:
    """The two runs logged the same steps and values, and end with the same weights; their last.pt."""
    a, b = _log(one), _log(two)
    assert [e["step"] for e in a] == [e["step"] for e in b]  # one writer: every entry once
    for x, y in zip(a, b):
        for key in keys:
            if key in x:
                assert y[key] == pytest.approx(x[key], rel=1e-5, abs=1e-6), (x, y)
    p1, p2 = checkpoint.load(one / "last.pt"), checkpoint.load(two / "last.pt")
    for name, tensor in p1["model"].items():
        assert torch.allclose(tensor, p2["model"][name], atol=1e-5), name
    return p1, p2


def test_two_ranks_match_one_process_with_the_same_global_batch(synth_dir, tmp_path):
    cfg = demo_config(synth_dir, max_steps=8, valid_every=4, log_every=1, patience=0, valid_max_sentences=15,
                      batch_size=17, threads=1)  # 17: the ranks get 9 and 8 sentences
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    full, half = tmp_path / "cfg.yaml", tmp_path / "half.yaml"
    full.write_text(yaml.safe_dump(cfg))
    half.write_text(yaml.safe_dump({**cfg, "train": {**cfg["train"], "max_steps": 4}}))
    _train(full, tmp_path / "one", nproc=1)
    first = _train(half, tmp_path / "two", nproc=2)
    second = _train(full, tmp_path / "two", nproc=2, resume=True)  # distributed resume
    assert first.count("model rnnsearch:") == 1 and second.count("resuming") == 1  # rank 0 speaks alone
    p1, p2 = _same_runs(tmp_path / "one", tmp_path / "two", ("loss", "dev_loss", "dev_bleu"))
    assert p2["meta"]["world_size"] == 2 and len(p2["rng_ranks"]) == 2
    assert p1["train_state"]["step"] == p2["train_state"]["step"] == 8
    files = sorted(p.name for p in (tmp_path / "two").iterdir())
    assert files == [".lock", "best.pt", "config.yaml", "last.pt", "log.jsonl"]


def test_two_ranks_on_a_prepared_dataset_match_one_process_on_the_text(synth_dir, tmp_path):
    """Both ranks read their shard of every minibatch from the same memory-mapped dataset."""
    cfg = demo_config(synth_dir, max_steps=6, valid_every=3, log_every=1, patience=0, valid_max_sentences=15,
                      batch_size=17, threads=1)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    text = tmp_path / "text.yaml"
    text.write_text(yaml.safe_dump(cfg))
    _run([sys.executable, "-m", "rnnsearch", "prepare", str(text), "--out", str(tmp_path / "prep"), "--workers", "1"])
    prepared = tmp_path / "prepared.yaml"
    prepared.write_text(yaml.safe_dump({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "prep")}}))
    _train(text, tmp_path / "one", nproc=1)
    _train(prepared, tmp_path / "two", nproc=2)
    _same_runs(tmp_path / "one", tmp_path / "two")


def test_adapting_a_model_on_two_ranks_from_data_prepared_with_its_vocabularies(tiny_run, synth_dir, tmp_path):
    """`prepare --init MODEL` encodes with the parent's vocabularies; `train --init MODEL` on that
    dataset under torchrun matches one process on the text; a dataset of its own is refused first."""
    cfg = demo_config(synth_dir, max_steps=4, valid_every=2, log_every=1, patience=0, valid_max_sentences=15,
                      batch_size=17, threads=1, lr=1e-4)  # Adam at 1e-3 lifts AVX2 summation noise to 2e-5
    cfg["vocab"]["size"] = 120  # not the parent's: --init replaces it
    text = tmp_path / "text.yaml"
    text.write_text(yaml.safe_dump(cfg))
    parent = str(tiny_run / "best.pt")
    for name, init in (("own", []), ("theirs", ["--init", parent])):
        _run([sys.executable, "-m", "rnnsearch", "prepare", str(text), "--out", str(tmp_path / name), "--workers", "1"]
             + init)
    manifest = json.loads((tmp_path / "theirs" / "manifest.json").read_text())
    assert manifest["init"]["name"] == parent
    assert manifest["codecs"][1]["itos"] == checkpoint.load(tiny_run / "best.pt")["tgt_codec"]["itos"]
    own = tmp_path / "own.yaml"
    own.write_text(yaml.safe_dump({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "own")}}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    refused = subprocess.run([sys.executable, "-m", "rnnsearch", "train", str(own), "--out", str(tmp_path / "no"),
                              "--init", parent], capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode == 2 and "prepare CONFIG --init MODEL" in refused.stderr
    assert not (tmp_path / "no").exists()  # refused before the run directory is made
    prepared = tmp_path / "prepared.yaml"
    prepared.write_text(yaml.safe_dump({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "theirs")}}))
    one = _run([sys.executable, "-m", "rnnsearch", "train", str(text), "--out", str(tmp_path / "one"), "--init", parent])
    two = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m", "rnnsearch",
                "train", str(prepared), "--out", str(tmp_path / "two"), "--init", parent])
    assert "starting from" in one and two.count("starting from") == 1
    _, p2 = _same_runs(tmp_path / "one", tmp_path / "two")
    assert p2["meta"]["init"]["name"] == parent and p2["meta"]["world_size"] == 2
