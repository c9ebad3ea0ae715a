"""``rnnsearch data check`` and the training loader on each kind of bad corpus file."""
from __future__ import annotations

import gzip
import json

import pytest

from conftest import demo_config
from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.data.corpus import load_corpora

GOOD_EN = ["The dog sees a cat .", "A girl runs .", "Two men talk ."]
GOOD_FR = ["Le chien voit un chat .", "Une fille court .", "Deux hommes parlent ."]


def _write(path, lines_or_bytes):
    data = lines_or_bytes if isinstance(lines_or_bytes, bytes) else "".join(line + "\n" for line in lines_or_bytes).encode()
    path.write_bytes(data)
    return str(path)


def _check(capsys, src, tgt, *extra) -> tuple[int, str, str]:
    code = main(["data", "check", "--src", src, "--tgt", tgt, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_clean_corpus(tmp_path, capsys):
    code, out, _ = _check(capsys, _write(tmp_path / "a.en", GOOD_EN), _write(tmp_path / "a.fr", GOOD_FR))
    assert code == 0 and "pairs read: 3" in out and "pairs kept: 3" in out and out.rstrip().endswith("usable")


def test_repairs_are_counted(tmp_path, capsys):
    src = _write(tmp_path / "b.en", b"\xef\xbb\xbfThe dog .\r\nA cat\x00runs .\r\nTwo men .\r\n")
    tgt = _write(tmp_path / "b.fr", GOOD_FR)
    code, out, _ = _check(capsys, src, tgt)
    assert code == 0 and "pairs kept: 3" in out
    assert "1 byte-order mark removed (first lines: 1)" in out
    assert "3 CRLF line ends (first lines: 1, 2, 3)" in out
    assert "1 lines with NUL bytes (made spaces) (first lines: 2)" in out


def test_whitespace_only_and_over_long_lines_are_dropped_with_line_numbers(tmp_path, capsys):
    long = "word " * 20000  # a 100,000-character line
    src = _write(tmp_path / "c.en", ["The dog .", "   \t ", long.strip(), "A cat ."])
    tgt = _write(tmp_path / "c.fr", ["Le chien .", "Le vide .", "mot", "  "])
    code, out, _ = _check(capsys, src, tgt, "--json")
    result = json.loads(out)
    assert code == 0 and result["read"] == 4 and result["kept"] == 1
    assert result["dropped"]["pairs with an empty or whitespace-only side"] == {"count": 2, "first_lines": [2, 4]}
    assert result["dropped"]["pairs longer than 50 tokens"] == {"count": 1, "first_lines": [3]}


@pytest.mark.parametrize("case, expected", [
    ("mismatch", "d.en has 4 lines but"),
    ("utf8", "d.en:2: invalid UTF-8 at byte 4 of the line"),
    ("empty", "no lines: the corpus is empty"),
    ("missing", "missing.en: file not found"),
    ("directory", "is a directory, expected a text file"),
    ("unusable", "none of the 1 pairs is usable"),
])
def test_unusable_corpora_exit_2_with_one_line(tmp_path, capsys, case, expected):
    src, tgt = tmp_path / "d.en", tmp_path / "d.fr"
    _write(tgt, GOOD_FR)
    if case == "mismatch":
        _write(src, GOOD_EN + ["extra ."])
    elif case == "utf8":
        _write(src, b"ok .\nbad \xff line\nok .\n")
    elif case == "empty":
        _write(src, b"")
        _write(tgt, b"")
    elif case == "missing":
        src = tmp_path / "missing.en"
    elif case == "directory":
        src = tmp_path
    elif case == "unusable":
        _write(src, [" "])
        _write(tgt, ["x"])
    code, out, err = _check(capsys, str(src), str(tgt))
    assert code == 2 and err.startswith("rnnsearch data: error: ") and expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_training_loader_reports_the_same(tmp_path, synth_dir):
    data = tmp_path / "data"
    data.mkdir()
    en = (synth_dir / "train.en").read_text().splitlines()[:200]
    fr = (synth_dir / "train.fr").read_text().splitlines()[:200]
    en[4], fr[9] = " ", "\t"
    en[7] = "x " * 60
    raw_en = ("\ufeff" + "\r\n".join(en) + "\r\n").encode()
    (data / "train.en.gz").write_bytes(gzip.compress(raw_en))
    _write(data / "train.fr", fr)
    for name in ("dev.en", "dev.fr"):
        _write(data / name, (synth_dir / name).read_text().splitlines()[:20])
    messages = []
    cfg = demo_config(data)
    load_corpora(from_dict(cfg), messages.append)
    text = "\n".join(messages)
    assert "train: read 200 pairs, kept 197" in text
    assert "dropped 2 pairs with an empty or whitespace-only side (first lines: 5, 10)" in text
    assert "dropped 1 pairs longer than 40 tokens (first lines: 8)" in text
    assert "train.en.gz: repaired 1 byte-order mark removed (first lines: 1); 200 CRLF line ends" in text
