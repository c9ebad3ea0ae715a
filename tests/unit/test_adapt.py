"""train --init (training/adapt.py): the new run takes the parent's architecture, vocabularies and
weights; the config's data and training choices stay; contradictions on the command line and other
languages are refused in one line. Building the trainer trains nothing."""
from __future__ import annotations

import pytest
import torch

from conftest import demo_config
from rnnsearch import checkpoint
from rnnsearch.cli import main
from rnnsearch.config import ConfigError, from_dict
from rnnsearch.training.adapt import adapt_config


def test_the_parents_architecture_and_vocabulary_replace_the_configs(tiny_run):
    parent = checkpoint.load(tiny_run / "best.pt")["config"]
    ours = from_dict({**demo_config("elsewhere"), "model": {"arch": "rnnencdec", "emb": 32, "dropout": 0.2},
                      "vocab": {"mode": "sentencepiece", "size": 90}})
    cfg, replaced = adapt_config(ours, parent)
    assert cfg.model.model_dump(exclude={"dropout"}) == from_dict(parent).model.model_dump(exclude={"dropout"})
    assert cfg.vocab == from_dict(parent).vocab and cfg.model.dropout == 0.2  # dropout is the run's choice
    assert cfg.data.dir == "elsewhere" and cfg.train == ours.train  # the config's data and training stay
    assert "model.arch: 'rnnencdec' -> 'rnnsearch'" in replaced and "vocab.mode: 'sentencepiece' -> 'word'" in replaced
    assert adapt_config(cfg, parent) == (cfg, [])


def test_a_set_that_contradicts_the_parent_is_refused_naming_the_key(tiny_run):
    parent = checkpoint.load(tiny_run / "best.pt")["config"]
    ours = from_dict({**demo_config("d"), "model": {"emb": 32}})
    with pytest.raises(ConfigError, match=r"--set model.emb: --init takes the architecture and vocabulary"):
        adapt_config(ours, parent, explicit={"model.emb"})
    adapt_config(ours, parent, explicit={"model.dropout", "train.lr"})  # the run's own keys are fine


def test_other_languages_are_refused(tiny_run):
    parent = checkpoint.load(tiny_run / "best.pt")["config"]
    ours = from_dict({**demo_config("d"), "data": {"src_lang": "fr", "tgt_lang": "en"}})
    with pytest.raises(ConfigError, match="data.src_lang: 'fr', but the parent translates en -> fr"):
        adapt_config(ours, parent)


def test_the_new_run_starts_from_the_parents_weights(tiny_run, synth_dir, tmp_path):
    from rnnsearch.training.trainer import Trainer
    parent = checkpoint.load(tiny_run / "best.pt")
    raw = demo_config(synth_dir, lr=1e-4, max_steps=3)
    raw["model"] = {**raw["model"], "emb": 16}  # replaced by the parent's
    messages: list[str] = []
    trainer = Trainer(from_dict(raw), tmp_path / "run", init=str(tiny_run / "best.pt"), log=messages.append)
    try:
        state = trainer.model.state_dict()
        assert state.keys() == parent["model"].keys()
        assert all(torch.equal(state[k], parent["model"][k]) for k in state)
        assert trainer.src_codec.vocab.itos == parent["src_codec"]["itos"]
        assert trainer.state.step == 0 and trainer.cfg.train.lr == 1e-4
        assert any("model.emb: 16 -> 48" in m for m in messages)
        assert any(m.startswith(f"starting from {tiny_run / 'best.pt'}") for m in messages)
    finally:
        trainer.close()


def test_init_and_resume_together_are_one_line_of_error(tiny_run, tmp_path, capsys):
    from conftest import REPO
    code = main(["train", str(REPO / "configs" / "demo.yaml"), "--out", str(tmp_path / "r"), "--resume",
                 "--init", str(tiny_run / "best.pt")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--init starts a new run" in err and "\n" not in err


def test_an_adapted_run_keeps_the_parents_head_and_unk_replacement(tiny_run, synth_dir, tmp_path):
    """What the release's translations had comes along: its alignment head (marked as trained for the
    parent's weights, said in one line) and its <unk> replacement, the default of the run's checkpoints."""
    from rnnsearch.analysis.release import make_release
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.model.align_head import AlignmentHead, head_state, query_size
    from rnnsearch.training.trainer import Trainer
    payload = checkpoint.load(tiny_run / "best.pt")
    model = Translator.from_checkpoint(tiny_run / "best.pt").model
    head = AlignmentHead(query_size(model), model.decoder.C_o.in_features, 8)
    checkpoint.save(tmp_path / "with_head.pt", {**payload, "align_head": head_state(head, {"pairs": 10})})
    parent = tmp_path / "models" / "tiny_parent"
    make_release(tmp_path / "with_head.pt", parent, log=lambda *_: None)
    messages: list[str] = []
    trainer = Trainer(from_dict(demo_config(synth_dir, max_steps=1)), tmp_path / "run", init=str(parent),
                      log=messages.append)
    try:
        trainer.save("last.pt")
    finally:
        trainer.close()
    saved = checkpoint.load(tmp_path / "run" / "last.pt")
    assert saved["align_head"]["record"] == {"pairs": 10, "for_parent": str(parent)}
    assert saved["meta"]["init"]["replace_unk"] == "copy"
    assert any("its alignment head comes along" in m and "train-align-head" in m for m in messages)
    adapted = Translator.from_checkpoint(tmp_path / "run" / "last.pt")
    assert adapted.replace_unk == "copy" and adapted.align_head is not None
    assert Translator.from_checkpoint(tiny_run / "best.pt").replace_unk is None  # a run of its own: as written
