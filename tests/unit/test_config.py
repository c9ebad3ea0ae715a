from pathlib import Path

import pytest

from rnnsearch.config import ConfigError, apply_overrides, from_dict, load, parse_override

REPO = Path(__file__).resolve().parents[2]


def test_defaults_are_the_paper_sizes():
    cfg = from_dict({})
    m = cfg.model
    assert (m.emb, m.enc_hidden, m.dec_hidden, m.att, m.maxout) == (620, 1000, 1000, 1000, 500)
    assert cfg.train.optimizer == "adadelta" and cfg.train.rho == 0.95 and cfg.train.eps == 1e-6
    assert cfg.train.batch_size == 80 and cfg.train.sort_pool == 20 and cfg.train.clip == 1.0


@pytest.mark.parametrize("raw, key", [
    ({"model": {"hiden": 3}}, "model.hiden"),
    ({"trian": {}}, "trian"),
    ({"model": {"emb": "big"}}, "model.emb"),
    ({"model": {"emb": -5}}, "model.emb"),
    ({"decode": {"beam": 0}}, "decode.beam"),
    ({"model": {"arch": "transformer"}}, "model.arch"),
    ({"train": {"lr": 0}}, "train.lr"),
    ({"model": {"dropout": 1.5}}, "model.dropout"),
    ({"train": {"progress": "yes"}}, "train.progress"),
    ({"train": {"max_nonfinite": 0}}, "train.max_nonfinite"),
    ({"train": {"lr_decay": 1.5}}, "train.lr_decay"),
    ({"train": {"device": "tpu"}}, "train.device"),
    ({"train": {"save_every": -1}}, "train.save_every"),
    ({"decode": {"max_src_len": 0}}, "decode.max_src_len"),
])
def test_bad_values_name_the_dotted_key(raw, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        from_dict(raw)


def test_overrides_parse_yaml_scalars():
    assert parse_override("train.lr=3e-4") == (["train", "lr"], 3e-4)
    assert parse_override("model.arch=rnnencdec") == (["model", "arch"], "rnnencdec")
    raw = apply_overrides({"train": {"lr": 1.0}}, ["train.lr=0.5", "model.emb=32"])
    cfg = from_dict(raw)
    assert cfg.train.lr == 0.5 and cfg.model.emb == 32
    with pytest.raises(ConfigError):
        parse_override("train.lr")


def test_every_shipped_config_loads():
    configs = sorted((REPO / "configs").glob("*.yaml"))
    assert len(configs) >= 9
    for path in configs:
        cfg = load(path)
        assert cfg.model.arch in ("rnnsearch", "rnnencdec"), path


def test_load_reports_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model:\n  embb: 3\n")
    with pytest.raises(ConfigError, match="bad.yaml: model.embb"):
        load(bad)
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "missing.yaml")


def test_a_broken_yaml_file_is_one_line_with_its_name_and_line_first(tmp_path):
    from rnnsearch.config import load
    bad = tmp_path / "bad.yaml"
    bad.write_text("train:\n  lr: [1, 2\nmodel: {\n")
    with pytest.raises(ConfigError) as caught:
        load(bad)
    message = str(caught.value)
    assert message.startswith(f"{bad}: not valid YAML: line 3, column 6: ") and "\n" not in message


def test_a_bad_override_is_named_and_the_file_is_not_blamed(tmp_path):
    from rnnsearch.config import load
    good = tmp_path / "good.yaml"
    good.write_text("train:\n  lr: 0.5\n")
    with pytest.raises(ConfigError, match=r"^--set model.hiden=100: model.hiden: unknown key \(known: arch, "):
        load(good, ["train.lr=0.1", "model.hiden=100"])
    good.write_text("train:\n  lr: -1\n")
    with pytest.raises(ConfigError, match=rf"^{good}: train.lr: must be > 0"):  # the file's own error is the file's
        load(good, ["model.emb=8"])


def test_every_bad_override_is_named_at_once(tmp_path):
    from rnnsearch.config import load
    good = tmp_path / "good.yaml"
    good.write_text("train:\n  lr: 0.5\n")
    with pytest.raises(ConfigError) as caught:
        load(good, ["model.emb=-3", "train.lr=0.1", "train.lr=abc", "nokey"])
    problems = str(caught.value).split("; ")
    assert [p.split(":")[0] for p in problems] == ["--set model.emb=-3", "--set train.lr=abc", "--set nokey"]
    assert load(good, ["model.emb=8", "train.lr=0.1"]).train.lr == 0.1


def test_an_empty_config_file_is_refused(tmp_path):
    """An empty file trained a 31.7M-parameter paper-size model without a word."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="holds no settings; start from one of configs"):
        load(empty)
