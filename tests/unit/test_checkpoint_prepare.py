import gzip
import io
import pickle
import tarfile

import pytest
import torch

from rnnsearch import checkpoint
from rnnsearch.checkpoint import CheckpointError
from rnnsearch.data.download import parse_sgm, prepare
from rnnsearch.data.synthetic import generate


def _payload():
    return {"config": {}, "src_codec": {}, "tgt_codec": {}, "model": {"w": torch.ones(3)}}


def test_checkpoint_round_trip_and_no_leftovers(tmp_path):
    path = tmp_path / "run" / "last.pt"
    checkpoint.save(path, _payload())
    checkpoint.save(path, _payload())
    assert torch.equal(checkpoint.load(path)["model"]["w"], torch.ones(3))
    assert sorted(p.name for p in path.parent.iterdir()) == ["last.pt"]


def test_checkpoint_errors_say_why(tmp_path):
    with pytest.raises(CheckpointError, match="not found"):
        checkpoint.load(tmp_path / "missing.pt")
    with pytest.raises(CheckpointError, match="is a directory"):
        checkpoint.load(tmp_path)
    good = tmp_path / "good.pt"
    checkpoint.save(good, _payload())
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="truncated or corrupt"):
        checkpoint.load(truncated)
    other = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, other)
    with pytest.raises(CheckpointError, match="not an rnnsearch checkpoint"):
        checkpoint.load(other)
    future = tmp_path / "future.pt"
    torch.save({"format": checkpoint.FORMAT, "version": 99}, future)
    with pytest.raises(CheckpointError, match="version 99"):
        checkpoint.load(future)


def test_failed_write_keeps_the_old_checkpoint(tmp_path):
    path = tmp_path / "last.pt"
    checkpoint.save(path, _payload())
    before = path.read_bytes()
    with pytest.raises((AttributeError, TypeError, pickle.PicklingError)):
        checkpoint.save(path, {**_payload(), "bad": lambda: None})  # cannot be pickled
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]


def test_parse_sgm():
    text = '<srcset>\n<doc docid="x">\n<seg id="1"> A &amp; B </seg>\n<seg id="2">l&apos;homme</seg>\n</doc>'
    assert parse_sgm(text) == ["A & B", "l'homme"]


def _tgz(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _sgm(lines):
    return "<doc>\n" + "".join(f'<seg id="{i}">{t}</seg>\n' for i, t in enumerate(lines, 1)) + "</doc>\n"


def test_prepare_from_local_archives(tmp_path):
    served = {}
    for name in ("train", "val", "test_2016_flickr"):
        for lang in ("en", "fr", "de"):
            served[f"{name}.{lang}.gz"] = gzip.compress(f"{name} {lang} 1\n{name} {lang} 2\n".encode())
    served["dev.tgz"] = _tgz({f"dev/{s}-{k}.{lang}.sgm": _sgm([f"{s} {lang} a", f"{s} {lang} b"])
                              for s in ("newstest2012", "newstest2013")
                              for k, lang in (("src", "en"), ("ref", "fr"))})
    served["test-full.tgz"] = _tgz({"test-full/newstest2014-fren-src.en.sgm": _sgm(["x &amp; y", "z"]),
                                    "test-full/newstest2014-fren-ref.fr.sgm": _sgm(["x &amp; y fr", "z fr"])})
    asked = []

    def fetch(url, dest):
        asked.append(url)
        dest.write_bytes(served[url.rsplit("/", 1)[-1]])

    prepare("multi30k", tmp_path / "m", fetch)
    assert (tmp_path / "m" / "val.fr").read_text() == "val fr 1\nval fr 2\n"
    prepare("wmt14", tmp_path / "w", fetch)
    assert (tmp_path / "w" / "newstest2014.en").read_text() == "x & y\nz\n"
    assert (tmp_path / "w" / "newstest2013.fr").read_text() == "newstest2013 fr a\nnewstest2013 fr b\n"
    assert all(u.startswith("https://") for u in asked)


def test_synthetic_corpus_is_deterministic_and_disjoint(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    generate(a, n_train=500, n_dev=50, n_test=50, seed=4)
    generate(b, n_train=500, n_dev=50, n_test=50, seed=4)
    assert (a / "train.fr").read_text() == (b / "train.fr").read_text()
    train = set((a / "train.en").read_text().splitlines())
    test = (a / "test.en").read_text().splitlines()
    assert len(test) == 50 and not train & set(test)
    en, fr = (a / "train.en").read_text().splitlines(), (a / "train.fr").read_text().splitlines()
    assert len(en) == len(fr) == 500 and all(e.endswith(".") and f.endswith(".") for e, f in zip(en, fr))
