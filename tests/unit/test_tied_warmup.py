"""Two of #87's candidates: ``model.tied_output`` (W_o is the target embedding matrix E) and
``train.warmup`` (the rate n / N lr over the first N updates, then sqrt(N / n) lr)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import demo_config, small_model
from rnnsearch.config import ConfigError, from_dict
from rnnsearch.data.batching import source_batch
from rnnsearch.model.seq2seq import load_model
from rnnsearch.training.optim import warmup_factor
from rnnsearch.training.trainer import Trainer

TIED = {"emb": 7, "maxout": 7}


def _batch():
    src, mask = source_batch([[5, 6, 7, 8, 9], [10, 11]])
    tgt_in = torch.tensor([[2, 5, 6, 7], [2, 8, 9, 0]])
    tgt_out = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]])
    return src, mask, tgt_in, tgt_out


def test_a_tied_output_is_one_matrix_whose_gradient_is_both_uses_summed():
    tied = small_model("rnnsearch", tied_output=True, **TIED).double().train()
    d = tied.decoder
    assert d.W_o.weight is d.embed.weight
    untied = small_model("rnnsearch", **TIED).double().train()
    assert sum(p.numel() for p in tied.parameters()) == sum(p.numel() for p in untied.parameters()) - d.W_o.weight.numel()
    untied.load_state_dict(tied.state_dict())  # the same values in two matrices
    assert torch.equal(untied.decoder.W_o.weight, untied.decoder.embed.weight)
    for model in (tied, untied):
        nll, _ = model.loss(*_batch())
        nll.backward()
    u = untied.decoder
    assert u.W_o.weight.grad.abs().sum() > 0 and u.embed.weight.grad.abs().sum() > 0
    torch.testing.assert_close(d.embed.weight.grad, u.embed.weight.grad + u.W_o.weight.grad)


def test_a_tied_model_loads_tied_and_gives_the_same_output():
    model = small_model("rnnsearch", tied_output=True, **TIED)
    cfg = from_dict({"model": {"arch": "rnnsearch", "emb": 7, "enc_hidden": 10, "dec_hidden": 12, "att": 9,
                               "maxout": 7, "encoder_cell": "paper", "tied_output": True}})
    loaded = load_model(cfg.model, 23, 27, model.state_dict()).eval()
    assert loaded.decoder.W_o.weight is loaded.decoder.embed.weight
    src, mask, tgt_in, _ = _batch()
    with torch.no_grad():
        torch.testing.assert_close(loaded(src, mask, tgt_in)[0], model(src, mask, tgt_in)[0])


def test_a_tied_output_of_another_size_than_the_embedding_is_refused():
    with pytest.raises(ValueError, match=r"model.tied_output: .*maxout 5.*emb 7.*set model.maxout to model.emb"):
        small_model("rnnsearch", tied_output=True, emb=7, maxout=5)


@pytest.mark.parametrize("warmup", [1, 7, 400])
def test_the_warmup_rises_to_the_full_rate_at_n_then_falls_as_its_inverse_square_root(warmup):
    factors = [warmup_factor(n, warmup) for n in range(1, 4 * warmup + 1)]
    assert max(factors) == factors[warmup - 1] == 1.0
    assert factors[:warmup] == sorted(factors[:warmup]) and factors[warmup - 1:] == sorted(factors[warmup - 1:])[::-1]
    assert factors[0] == pytest.approx(1 / warmup) and factors[-1] == pytest.approx(0.5)
    assert warmup_factor(123, 0) == 1.0


def test_warmup_beside_the_plateau_decay_is_refused():
    with pytest.raises(ConfigError, match="train.warmup: .*train.lr_decay must stay 1"):
        from_dict({"train": {"warmup": 100, "lr_decay": 0.5}})


def test_each_update_runs_at_the_warmup_rate_of_its_count(synth_dir, tmp_path):
    """The rate follows the update count alone (so a resumed run goes on where it was)."""
    cfg = demo_config(synth_dir, warmup=4)
    trainer = Trainer(from_dict(cfg), tmp_path / "run", log=lambda *_: None)
    idx = np.arange(6)
    for done in (0, 1, 3, 4, 8, 15, 2):
        trainer.state.step = done
        assert trainer.train_step(idx).ok
        rate = trainer.optimizer.param_groups[0]["lr"]
        assert rate == pytest.approx(0.005 * warmup_factor(done + 1, 4))
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.005 * 3 / 4)
