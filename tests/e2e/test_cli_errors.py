"""Bad input gives a clear one-line error and exit status 2, never a traceback."""
from pathlib import Path

import pytest

from rnnsearch.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_missing_corpus_names_the_file(tmp_path, capsys):
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--set", f"data.dir={tmp_path}",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "train.en: file not found" in err and "Traceback" not in err
    assert "--set data.dir=DIR" in err and "rnnsearch data multi30k" in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()  # nothing left behind: not even config.yaml


def test_unknown_override_names_the_key(tmp_path, capsys):
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--set", "model.hidden=3", "--out", str(tmp_path)])
    assert code == 2 and "model.hidden: unknown key" in capsys.readouterr().err


def test_impossible_value_is_rejected_before_work(tmp_path, capsys):
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--set", "decode.beam=0", "--out", str(tmp_path)])
    assert code == 2 and "decode.beam: must be > 0" in capsys.readouterr().err


def test_bad_checkpoint(tmp_path, capsys):
    bad = tmp_path / "x.pt"
    bad.write_bytes(b"not a checkpoint")
    assert main(["translate", str(bad), "--input", str(bad)]) == 2
    assert "x.pt: not a readable checkpoint" in capsys.readouterr().err


def test_existing_run_needs_resume(synth_dir, tmp_path, capsys):
    (tmp_path / "last.pt").write_bytes(b"")
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--set", f"data.dir={synth_dir}",
                 "--out", str(tmp_path)])
    assert code == 2 and "--resume" in capsys.readouterr().err


def test_resume_without_a_run_leaves_nothing_behind(synth_dir, tmp_path, capsys):
    """``train --resume --out runs/fresh`` said "last.pt: checkpoint not found" and left runs/fresh/.lock."""
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--set", f"data.dir={synth_dir}", "--resume",
                 "--out", str(tmp_path / "fresh")])
    err = capsys.readouterr().err
    assert code == 2 and "no run to resume" in err and err.count("\n") == 1 and not (tmp_path / "fresh").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paper_rnnsearch50", "paper_rnnencdec50", "paper_rnnsearch30", "paper_rnnencdec30"])
def test_paper_configs_build_paper_sizes_and_train_a_step(name, capsys):
    import torch

    from rnnsearch.data.batching import make_batch
    from rnnsearch.config import load
    from rnnsearch.model import build_model
    from rnnsearch.training.trainer import count_parameters, make_optimizer
    cfg = load(REPO / "configs" / f"{name}.yaml")
    assert main(["describe", str(REPO / "configs" / f"{name}.yaml")]) == 0
    printed = capsys.readouterr().out
    model = build_model(cfg.model, cfg.vocab.size, cfg.vocab.size, seed=0)
    n = count_parameters(model)
    assert f"parameters: {n:,}" in printed or f"parameters: at most {n:,}" in printed  # a word vocabulary: at most
    assert model.decoder.W_o.out_features == 30000 and model.encoder.embed.embedding_dim == 620
    assert n > 60_000_000
    optimizer = make_optimizer(cfg.train, model)
    batch = make_batch([[5, 6, 7, 29999], [8, 9]], [[10, 11, 12], [13, 29998]])
    before = model.decoder.W_o.weight.detach().clone()
    nll, tokens = model.loss(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)
    (nll / tokens).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.train.clip)
    optimizer.step()
    assert torch.isfinite(nll) and not torch.equal(before, model.decoder.W_o.weight)
