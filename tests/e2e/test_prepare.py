"""``rnnsearch prepare`` and ``data.prepared``: the same pairs, vocabularies, reports and epoch plans
as the text path on a corpus with every nasty case, the same errors, and whole-or-absent output.
Training on a prepared dataset (killed and resumed, and on two ranks) is in test_kill_resume.py and
test_ddp.py."""
from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from conftest import REPO, demo_config
from rnnsearch.config import ConfigError, from_dict
from rnnsearch.data import prepare as prep
from rnnsearch.data import prepared
from rnnsearch.data.batching import epoch_plan
from rnnsearch.data.corpus import load_corpora
from rnnsearch.data.io import DataError

pytestmark = pytest.mark.slow  # end to end: datasets prepared by worker processes

NASTY = ["plain words here", "  \t ", "", "a line with\r", "\ufeffnot a BOM here", "nul\x00inside",
         "unicode\u2028line separator", "form\x0cfeed and \x1c file separator", "<s> </s> <pad> <unk> written out",
         "très élevé — « guillemets »", "日本語のテキスト", "x " * 60, "tab\tseparated\twords", "trailing spaces   ",
         "émoji 🙂 inside", "l'apostrophe et l’autre", "http://example.com/a?b=c&d", "1,000.50 $ 3.2%"]


def nasty_corpus(folder, n: int = 300, seed: int = 5) -> None:
    """``n`` pairs mixing ordinary sentences with every case the reader repairs or the filter drops;
    the source has a BOM and is gzipped, the target has CRLF ends and no final newline."""
    rng = np.random.default_rng(seed)
    words = "the a cat dog sees big small house red runs le la chat chien voit grand petit maison".split()
    src, tgt = [], []
    for i in range(n):
        if rng.random() < 0.3:
            src.append(NASTY[rng.integers(len(NASTY))])
            tgt.append(NASTY[rng.integers(len(NASTY))])
        else:
            src.append(" ".join(rng.choice(words, rng.integers(1, 12))) + f" s{i % 37}")
            tgt.append(" ".join(rng.choice(words, rng.integers(1, 12))) + f" t{i % 41}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.en.gz").write_bytes(gzip.compress(("\ufeff" + "\n".join(src) + "\n").encode()))
    (folder / "train.fr").write_bytes("\r\n".join(tgt).encode())
    for split in ("dev", "test"):
        (folder / f"{split}.en").write_text("the cat sees\na big dog\n")
        (folder / f"{split}.fr").write_text("le chat voit\nun grand chien\n")


def _cfg(data_dir, prepared="", **data):
    cfg = demo_config(data_dir, max_steps=30, valid_every=10, log_every=1, patience=0, valid_max_sentences=2,
                      threads=1, batch_size=16, sort_pool=3)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    cfg["data"].update({"max_len": 12, "prepared": str(prepared), **data})
    cfg["vocab"]["size"] = 40
    return cfg


def _load(cfg: dict):
    lines = []
    src, tgt, train, dev = load_corpora(from_dict(cfg), lines.append)
    return src, tgt, train, dev, lines


@pytest.fixture()
def small_chunks(monkeypatch):
    monkeypatch.setattr(prep, "CHUNK", 37)  # many chunks, boundaries everywhere
    monkeypatch.setattr(prepared.Side, "RELEASE_EVERY", 5)  # pages handed back between reads, often


def test_prepared_pairs_reports_and_plans_equal_the_text_path(tmp_path, small_chunks):
    nasty_corpus(tmp_path / "c")
    text = _cfg(tmp_path / "c")
    logged = []
    manifest = prep.prepare(from_dict(text), tmp_path / "p", workers=2, log=logged.append)
    a_src, a_tgt, a, a_dev, a_log = _load(text)
    b_src, b_tgt, b, b_dev, b_log = _load(_cfg(tmp_path / "c", tmp_path / "p"))
    assert a_src.to_state() == b_src.to_state() and a_tgt.to_state() == b_tgt.to_state()
    assert len(a.src_ids) == len(b.src_ids) == manifest["pairs"] > 100
    for k in range(len(a.src_ids)):
        assert a.src_ids[k] == b.src_ids[k] and a.tgt_ids[k] == b.tgt_ids[k], k
    assert np.array_equal(a.src_lens, b.src_lens) and np.array_equal(a.tgt_lens, b.tgt_lens)
    summary = next(line for line in a_log if line.startswith("train: read"))
    assert summary in logged and summary == manifest["summary"]
    assert "dropped" in summary and "longer than 12" in summary and "empty or whitespace-only" in summary
    repairs = [line for line in a_log if "repaired" in line and "train" in line]
    assert repairs and set(repairs) == set(manifest["repaired_lines"]) <= set(logged)
    assert any("byte-order mark" in line for line in repairs) and any("CRLF" in line for line in repairs)
    assert a_dev == b_dev
    cfg = from_dict(text)
    for mode in ("sentences", "tokens"):
        t = cfg.train.model_copy(update={"batch_mode": mode, "batch_tokens": 60})
        for epoch in (0, 3):
            plan_a = epoch_plan(a.src_lens, a.tgt_lens, t, 11, epoch)
            plan_b = epoch_plan(b.src_lens, b.tgt_lens, t, 11, epoch)
            assert len(plan_a) == len(plan_b) and all(np.array_equal(x, y) for x, y in zip(plan_a, plan_b))
    for name, path in (("src", tmp_path / "c" / "train.en.gz"), ("tgt", tmp_path / "c" / "train.fr")):
        entry = manifest["files"][name]
        assert entry["bytes"] == path.stat().st_size and entry["lines"] == 300
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_max_train_pairs_and_sentencepiece_model_match_the_text_path(tmp_path, small_chunks):
    import sentencepiece as spm
    nasty_corpus(tmp_path / "c")
    spm.SentencePieceTrainer.train(input=str(tmp_path / "c" / "train.fr"), model_prefix=str(tmp_path / "sp"),
                                   vocab_size=150, hard_vocab_limit=False, pad_id=0, unk_id=1, bos_id=2, eos_id=3,
                                   pad_piece="<pad>", unk_piece="<unk>", bos_piece="<s>", eos_piece="</s>",
                                   minloglevel=2)
    cfg = _cfg(tmp_path / "c", max_train_pairs=150, max_len=60)
    cfg["vocab"] = {"mode": "sentencepiece", "size": 150, "sp_model": str(tmp_path / "sp.model")}
    prep.prepare(from_dict(cfg), tmp_path / "p", workers=1, log=lambda *_: None)
    a, b = _load(cfg)[2], _load({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "p")}})[2]
    assert len(a.src_ids) == len(b.src_ids) and 100 < len(a.src_ids) <= 150
    assert all(a.src_ids[k] == b.src_ids[k] and a.tgt_ids[k] == b.tgt_ids[k] for k in range(len(a.src_ids)))


@pytest.mark.parametrize("damage, expected", [
    ("bad_utf8", r"train\.fr:118: invalid UTF-8"),
    ("short", r"train\.en\.gz has 300 lines but .*train\.fr has 299"),
    ("truncated", r"train\.en\.gz: cannot read"),
])
def test_bad_input_is_the_text_paths_error_and_leaves_nothing(tmp_path, small_chunks, damage, expected):
    nasty_corpus(tmp_path / "c")
    fr, en = tmp_path / "c" / "train.fr", tmp_path / "c" / "train.en.gz"
    lines = fr.read_bytes().split(b"\r\n")
    if damage == "bad_utf8":
        lines[117] = b"caf\xe9 au lait"
    elif damage == "short":
        lines = lines[:-1]
    fr.write_bytes(b"\r\n".join(lines))
    if damage == "truncated":
        en.write_bytes(en.read_bytes()[:-40])
    cfg = _cfg(tmp_path / "c")
    with pytest.raises(DataError, match=expected) as text_error:
        _load(cfg)
    with pytest.raises(DataError, match=expected) as prep_error:
        prep.prepare(from_dict(cfg), tmp_path / "p", workers=2, log=lambda *_: None)
    if damage != "truncated":  # gzip's own message names where it stopped differently when streamed
        assert str(prep_error.value) == str(text_error.value)
    assert sorted(os.listdir(tmp_path)) == ["c"]  # no dataset, no partial folder


def test_a_dataset_prepared_with_other_settings_is_refused(tmp_path):
    nasty_corpus(tmp_path / "c")
    prep.prepare(from_dict(_cfg(tmp_path / "c")), tmp_path / "p", workers=1, log=lambda *_: None)
    with pytest.raises(ConfigError, match=r"prepared with data\.max_len=12, the config has 20"):
        _load(_cfg(tmp_path / "c", tmp_path / "p", max_len=20))
    with pytest.raises(ConfigError, match=r"holds no manifest\.json"):
        _load(_cfg(tmp_path / "c", tmp_path))
    with pytest.raises(Exception, match="exists"):
        prep.prepare(from_dict(_cfg(tmp_path / "c")), tmp_path / "p", workers=1, log=lambda *_: None)


def test_train_on_a_large_text_corpus_suggests_prepare_in_one_line(tmp_path, monkeypatch):
    from rnnsearch.data import corpus
    nasty_corpus(tmp_path / "c")
    assert not [line for line in _load(_cfg(tmp_path / "c"))[4] if "rnnsearch prepare" in line]
    monkeypatch.setattr(corpus, "LARGE_TEXT", 1000)  # bytes: the corpus above counts as large
    lines = [line for line in _load(_cfg(tmp_path / "c"))[4] if "rnnsearch prepare" in line]
    assert len(lines) == 1 and "data.prepared=DIR" in lines[0] and "train.en.gz" in lines[0]


def test_guided_alignment_links_follow_the_prepared_pairs(tmp_path):
    nasty_corpus(tmp_path / "c")
    (tmp_path / "links").write_text("".join(f"0-0 0-{i % 2}\n" for i in range(300)))
    prep.prepare(from_dict(_cfg(tmp_path / "c")), tmp_path / "p", workers=1, log=lambda *_: None)
    loaded = []
    for prepared_dir in ("", tmp_path / "p"):
        cfg = _cfg(tmp_path / "c", prepared_dir)
        cfg["train"]["guided_alignment"] = str(tmp_path / "links")
        loaded.append(_load(cfg)[2].links)
    assert np.array_equal(loaded[0].pairs, loaded[1].pairs) and np.array_equal(loaded[0].offsets, loaded[1].offsets)


def test_the_cli_refuses_files_of_different_lengths_in_one_line(tmp_path):
    nasty_corpus(tmp_path / "c")
    fr = tmp_path / "c" / "train.fr"
    fr.write_bytes(b"\r\n".join(fr.read_bytes().split(b"\r\n")[:-2]))
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(_cfg(tmp_path / "c")))
    done = subprocess.run([sys.executable, "-m", "rnnsearch", "prepare", str(tmp_path / "cfg.yaml"), "--out",
                           str(tmp_path / "p"), "--workers", "1"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"rnnsearch prepare: error: {tmp_path / 'c' / 'train.en.gz'} has 300 lines but {fr} has 298: "
        "a parallel corpus needs one target line per source line"]
    assert sorted(os.listdir(tmp_path)) == ["c", "cfg.yaml"]


@pytest.mark.parametrize("lines", [b"", b"  \n\t\n"])
def test_a_corpus_without_a_usable_pair_is_an_error_both_ways(tmp_path, lines):
    nasty_corpus(tmp_path / "c")
    (tmp_path / "c" / "train.en.gz").unlink()
    for lang in ("en", "fr"):
        (tmp_path / "c" / f"train.{lang}").write_bytes(lines)
    said = "no lines: the corpus is empty" if not lines else "no usable training pair"  # an empty file: said first
    with pytest.raises(DataError, match=said):
        _load(_cfg(tmp_path / "c"))
    with pytest.raises(DataError, match="none of the .* pairs is usable"):
        prep.prepare(from_dict(_cfg(tmp_path / "c")), tmp_path / "p", workers=1, log=lambda *_: None)
    assert not (tmp_path / "p").exists()


def test_slots_in_training_pairs_are_the_same_prepared_and_read_as_text(tmp_path, small_chunks):
    """data.slot_rate: the chosen pairs' shared items are <unk> on both sides, the same pairs and ids
    whether prepared or read as text; the vocabulary is the plain text's; another rate is refused."""
    from rnnsearch.data.slotting import chosen
    from rnnsearch.data.vocab import UNK
    folder = tmp_path / "c"
    folder.mkdir()
    words = "the a cat dog sees big small house red runs".split()
    rng = np.random.default_rng(3)
    src = [" ".join(rng.choice(words, 5)) + f" in {1900 + i} at www.s{i}.org" for i in range(200)]
    tgt = [" ".join(rng.choice(words, 5)) + f" en {1900 + i} , www.s{i}.org" for i in range(200)]
    for split, n in (("train", 200), ("dev", 2), ("test", 2)):
        (folder / f"{split}.en").write_text("\n".join(src[:n]) + "\n")
        (folder / f"{split}.fr").write_text("\n".join(tgt[:n]) + "\n")
    cfg = _cfg(folder, max_len=60, slot_rate=0.5)
    cfg["vocab"] = {"mode": "sentencepiece", "size": 120, "joint": True}
    logged = []
    manifest = prep.prepare(from_dict(cfg), tmp_path / "p", workers=2, log=logged.append)
    a_src, _, a, _, text_log = _load(cfg)
    line = f"slots: {manifest['slotted_pairs']} of 200 training pairs have their shared items as slots (data.slot_rate 0.5)"
    assert manifest["slotted_pairs"] == sum(chosen(n, 0.5) for n in range(1, 201)) and line in logged and line in text_log
    b = _load({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "p")}})[2]
    assert len(a.src_ids) == len(b.src_ids) == 200
    assert all(a.src_ids[k] == b.src_ids[k] and a.tgt_ids[k] == b.tgt_ids[k] for k in range(200))
    for k in range(200):  # two slots a side in the chosen pairs, none elsewhere
        assert a.src_ids[k].count(UNK) == a.tgt_ids[k].count(UNK) == (2 if chosen(k + 1, 0.5) else 0), k
    assert "\U000f0000" not in a_src.vocab.itos
    with pytest.raises(ConfigError, match=r"prepared with data\.slot_rate=0\.5, the config has 0\.0"):
        _load({**cfg, "data": {**cfg["data"], "prepared": str(tmp_path / "p"), "slot_rate": 0.0}})
    (folder / "train.fr").write_text("".join(f"la maison voit le chat {k}\n" for k in range(200)))  # none shared
    assert any(x.startswith("warning: data.slot_rate 0.5, but none of the 200 training pairs") for x in _load(cfg)[4])
