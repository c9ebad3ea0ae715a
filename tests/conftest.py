"""Shared fixtures: small random models for property tests, and one tiny trained run."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from rnnsearch.config import from_dict
from rnnsearch.model import build_model

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DEVICE = os.environ.get("RNNSEARCH_TEST_DEVICE", "")
if TEST_DEVICE:  # e.g. cuda: the tests' models and tensors are made there (the GPU runs of BENCHMARKS.md)
    torch.set_default_device(TEST_DEVICE)
DEVICE = str(torch.get_default_device())  # where tests that load a checkpoint put its model


def small_model(arch: str = "rnnsearch", vocab: int = 23, seed: int = 0, **overrides):
    """A small model with large random weights, so attention and outputs are far from uniform."""
    model_cfg = {"arch": arch, "emb": 8, "enc_hidden": 10, "dec_hidden": 12, "att": 9, "maxout": 7,
                 "encoder_cell": "paper", **overrides}
    cfg = from_dict({"model": model_cfg})
    model = build_model(cfg.model, vocab, vocab + 4, seed=seed)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.6)
    return model.eval()


def demo_config(data_dir: Path, **train) -> dict:
    """A tiny RNNsearch on the synthetic corpus, quick on 2 cores."""
    return {
        "name": "tiny",
        "data": {"dir": str(data_dir), "train": "train", "dev": "dev", "test": "test", "max_len": 40},
        "vocab": {"mode": "word", "size": 200},
        "model": {"arch": "rnnsearch", "emb": 48, "enc_hidden": 64, "dec_hidden": 64, "att": 64,
                  "maxout": 48, "encoder_cell": "fused", "init": "xavier"},
        "train": {"optimizer": "adam", "lr": 0.005, "batch_size": 50, "max_steps": 500, "log_every": 25,
                  "valid_every": 100, "valid_max_sentences": 100, "patience": 2, "progress": False,
                  **train},
        "decode": {"beam": 3},
    }


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory) -> Path:
    from rnnsearch.data.synthetic import generate
    path = tmp_path_factory.mktemp("synth")
    generate(path, n_train=2500, n_dev=150, n_test=150, seed=3)
    return path


TINY_RUN = REPO / "tests" / "fixtures" / "tiny_synth"


@pytest.fixture(scope="session")
def tiny_run() -> Path:
    """The fast tier's model: a tiny RNNsearch trained as ``trained_run`` trains one, committed
    (best.pt, last.pt without optimiser state, log.jsonl; tests/fixtures/tiny_synth/make.py), so
    that tests which read a trained model load it instead of training it. Read-only."""
    return TINY_RUN


@pytest.fixture(scope="session")
def trained_run(synth_dir, tmp_path_factory) -> Path:
    """One tiny model trained to convergence on the synthetic corpus, here and now (for the slow
    tests of training itself; the others read ``tiny_run``)."""
    from rnnsearch.training.trainer import train
    out = tmp_path_factory.mktemp("run")
    train(from_dict(demo_config(synth_dir)), out, log=lambda *_: None)
    return out


def resolved(**given):
    """Resolved SearchSettings for the search functions: ``given`` over DecodeConfig's defaults."""
    from rnnsearch.decoding.settings import SearchSettings
    return SearchSettings(**given).resolve()


@pytest.fixture(scope="module")
def client(tiny_run):
    """A test client over the tiny model's app (the serve tests of LibreTranslate's routes and /transfer_tags)."""
    from fastapi.testclient import TestClient

    from rnnsearch import Translator
    from rnnsearch.serve import ServeSettings, create_app
    app = create_app(Translator.from_checkpoint(str(tiny_run / "best.pt")), ServeSettings(window_ms=1))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
