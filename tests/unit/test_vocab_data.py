import gzip

import numpy as np
import pytest

from rnnsearch.data.batching import epoch_plan, make_batch
from rnnsearch.config import from_dict
from rnnsearch.data.io import DataError, corpus_file, filter_pairs, read_lines, read_parallel
from rnnsearch.data.vocab import BOS, EOS, PAD, UNK, Vocab


def test_vocab_shortlist_keeps_most_frequent():
    v = Vocab.build([["a", "b", "a"], ["c", "a", "b"]], size=6)
    assert v.itos == ["<pad>", "<unk>", "<s>", "</s>", "a", "b"]
    assert v.encode(["a", "c", "zzz"]) == [4, UNK, UNK]
    assert v.decode([4, 5, EOS, 4]) == ["a", "b"]
    assert v.has_unk(["c"]) and not v.has_unk(["a", "b"])


def test_control_tokens_written_in_text_are_unknown_words():
    """Whitespace tokenisation keeps "<pad>", "<s>", "</s>" whole: as text they are <unk>, never the
    ids that pad a batch, start or end a sentence (a "<pad>" would be masked out of its source)."""
    from rnnsearch.data.tokenize import pretokenize
    vocab = Vocab.build([["a", "b"], ["a"]], size=10)
    units = pretokenize("a <pad> b </s> <s> <unk> c", "space", "en")
    assert vocab.encode(units) == [vocab.stoi["a"], UNK, vocab.stoi["b"], UNK, UNK, UNK, UNK]
    assert vocab.has_unk(["a", "</s>"]) and not vocab.has_unk(["a", "b"])
    assert vocab.decode([vocab.stoi["a"], BOS, PAD, vocab.stoi["b"], EOS, vocab.stoi["a"]]) == ["a", "b"]


def test_read_lines_plain_gzip_bom_crlf(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes("\ufeffone\r\ntwo\u2028still two\n".encode("utf-8"))
    assert read_lines(plain) == ["one", "two\u2028still two"]
    gz = tmp_path / "b.txt.gz"
    gz.write_bytes(gzip.compress(b"x\ny\n"))
    assert read_lines(gz) == ["x", "y"]


def test_read_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.fr"
    bad.write_bytes(b"ok\nfine\n\xff\xfe broken\n")
    with pytest.raises(DataError, match=r"bad\.fr:3: invalid UTF-8"):
        read_lines(bad)
    with pytest.raises(DataError, match="file not found"):
        read_lines(tmp_path / "nope.en")
    with pytest.raises(DataError, match="is a directory"):
        read_lines(tmp_path)


def test_mismatched_line_counts(tmp_path):
    (tmp_path / "t.en").write_text("a\nb\nc\n")
    (tmp_path / "t.fr").write_text("a\nb\n")
    with pytest.raises(DataError, match="3 lines.*2"):
        read_parallel(tmp_path / "t.en", tmp_path / "t.fr")


def test_corpus_file_prefers_plain_then_gz(tmp_path):
    (tmp_path / "train.en.gz").write_bytes(gzip.compress(b"a\n"))
    assert corpus_file(tmp_path, "train", "en").name == "train.en.gz"
    (tmp_path / "train.en").write_text("a\n")
    assert corpus_file(tmp_path, "train", "en").name == "train.en"


def test_filter_counts_every_dropped_pair():
    src = [["a"], [], ["a"] * 9, ["b"], ["c"]]
    tgt = [["x"], ["y"], ["z"], [], ["w"] * 3]
    keep, report = filter_pairs("train", src, tgt, max_len=5)
    assert keep == [0, 4]
    assert report.read == 5 and report.kept == 2
    assert report.dropped == {"pairs with an empty or whitespace-only side": [2, 4], "pairs longer than 5 tokens": [3]}
    assert "dropped 2 pairs with an empty or whitespace-only side" in report.summary()


def test_make_batch_shapes_and_masks():
    b = make_batch([[5, 6, 7], [8]], [[9], [10, 11]])
    assert b.src.tolist() == [[5, 6, 7, EOS], [8, EOS, PAD, PAD]]
    assert b.src_mask.tolist() == [[True] * 4, [True, True, False, False]]
    assert b.tgt_in.tolist() == [[BOS, 9, PAD], [BOS, 10, 11]]
    assert b.tgt_out.tolist() == [[9, EOS, PAD], [10, 11, EOS]]
    assert b.n_tokens == 5


@pytest.mark.parametrize("mode", ["sentences", "tokens"])
def test_epoch_plan_is_a_deterministic_partition(mode):
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(1, 40, 1000), rng.integers(1, 40, 1000)
    cfg = from_dict({"train": {"batch_mode": mode, "batch_size": 16, "batch_tokens": 300, "sort_pool": 5}}).train
    plan = epoch_plan(src, tgt, cfg, seed=7, epoch=2)
    flat = np.concatenate(plan)
    assert sorted(flat.tolist()) == list(range(1000))
    again = epoch_plan(src, tgt, cfg, seed=7, epoch=2)
    assert all((a == b).all() for a, b in zip(plan, again))
    other = epoch_plan(src, tgt, cfg, seed=7, epoch=3)
    assert any(len(a) != len(b) or (a != b).any() for a, b in zip(plan, other))
    if mode == "sentences":
        assert max(len(b) for b in plan) == 16
    else:
        assert all(len(b) == 1 or (tgt[b].max() + 1) * len(b) <= 300 for b in plan)


def _corpus(tmp_path, train_en: str, train_fr: str):
    for split, en, fr in (("train", train_en, train_fr), ("val", "a dog .\n", "un chien .\n")):
        (tmp_path / f"{split}.en").write_text(en)
        (tmp_path / f"{split}.fr").write_text(fr)
    return ["train", "configs/multi30k_rnnsearch.yaml", "--out", str(tmp_path / "run"), "--set", f"data.dir={tmp_path}"]


@pytest.mark.parametrize("train_en, train_fr, flags, said", [
    ("", "", [], "train.en: no lines: the corpus is empty"),  # SentencePiece's [!sentences_.empty()] traceback
    ("\n\n", "\n\n", [], "no text to train the SentencePiece vocabulary on"),
    ("a big dog runs .\n" * 5, "un gros chien court .\n" * 5, ["--set", "vocab.size=5"],
     "vocab.size 5 is too small for a SentencePiece vocabulary")])  # "Vocabulary size is smaller than required_chars"
def test_a_corpus_or_vocabulary_sentencepiece_cannot_use_is_one_line_and_leaves_no_run(
        train_en, train_fr, flags, said, tmp_path, capsys):
    from rnnsearch.cli import main
    assert main(_corpus(tmp_path, train_en, train_fr) + flags) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "run").exists()  # no config.yaml of a run that never began
