import gzip
import io
import pickle
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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


@given(st.lists(st.text(st.characters(blacklist_characters="\n"), min_size=1), max_size=50, unique=True))
def test_vocabularies_come_back_as_they_went_in(units):
    itos = ["<pad>", "<unk>", "<s>", "</s>"] + units
    payload = {**_payload(), "src_codec": {"lang": "en", "itos": itos}, "tgt_codec": {"itos": itos[::-1]}}
    for old in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "x.pt"
            if old:  # as older rnnsearch wrote them: the vocabulary a list
                torch.save({"format": checkpoint.FORMAT, "version": checkpoint.VERSION, **payload}, target)
            else:
                checkpoint.save(target, payload)
                assert "itos" not in torch.load(target, weights_only=True)["src_codec"]  # one string on disk
            loaded = checkpoint.load(target)
            assert loaded["src_codec"] == {"lang": "en", "itos": itos} and loaded["tgt_codec"]["itos"] == itos[::-1]


def test_a_vocabulary_unit_with_a_line_break_is_refused_and_nothing_written(tmp_path):
    payload = {**_payload(), "src_codec": {"itos": ["<pad>", "<unk>", "<s>", "</s>", "a\nb"]}}
    with pytest.raises(CheckpointError, match="line break"):
        checkpoint.save(tmp_path / "x.pt", payload)
    assert list(tmp_path.iterdir()) == []


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
    packed = tmp_path / "packed.pt"
    checkpoint.save(packed, {**_payload(), checkpoint.INT8: {"W": {"q": torch.ones(2, 2), "scale": torch.ones(2)}}})
    with pytest.raises(CheckpointError, match="int8 weight 'W' is not an int8 matrix with one scale per row"):
        checkpoint.load(packed)


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


@given(st.integers(1, 5), st.integers(1, 7), st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1))
def test_int8_packing_is_within_half_a_step_of_each_row(rows, cols, magnitude, seed):
    """pack_int8 / unpack_int8: every matrix back within half of its row's int8 step, a row of
    zeros exactly, other tensors untouched."""
    from rnnsearch.checkpoint import pack_int8, unpack_int8
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=g) * magnitude
    w[0] = 0.0
    state = {"w": w, "b": torch.randn(cols, generator=g), "steps": torch.tensor(3)}
    kept, packed = pack_int8(state)
    assert set(kept) == {"b", "steps"} and set(packed) == {"w"} and packed["w"]["q"].dtype == torch.int8
    back = unpack_int8(packed)["w"]
    step = w.abs().amax(1, keepdim=True) / 127
    assert bool(((back - w).abs() <= step / 2 + 1e-6 * magnitude).all())
    assert bool((back[0] == 0).all())
    assert torch.equal(kept["b"], state["b"])


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 6)), min_size=0, max_size=4),
       st.floats(1e-30, 1e30), st.integers(0, 2**32 - 1))
def test_bf16_planes_give_back_every_bf16_weight_exactly(shapes, magnitude, seed):
    """pack_bf16 / unpack_bf16: every floating tensor back as its bfloat16 rounding, bit for bit
    (signs, zeros, infinities, NaN and subnormals too), in its shape; other tensors kept as they are."""
    from rnnsearch.checkpoint import pack_bf16, unpack_bf16
    g = torch.Generator().manual_seed(seed)
    state = {f"w{i}": torch.randn(*shape, generator=g, dtype=torch.float64) * magnitude for i, shape in enumerate(shapes)}
    state["specials"] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, -3.0])
    state["steps"] = torch.tensor([3, 4])
    kept, packed = pack_bf16(state)
    assert set(kept) == {"steps"} and packed["low"].numel() == sum(w.numel() for k, w in state.items() if k != "steps")
    back = unpack_bf16(packed)
    assert set(back) == set(state) - {"steps"}
    for name, w in back.items():
        want = state[name].to(torch.bfloat16)
        assert w.dtype == torch.bfloat16 and w.shape == want.shape, name
        assert torch.equal(w.view(torch.int16), want.view(torch.int16)), name


def test_a_checkpoint_of_bf16_planes_loads_as_bf16_weights_and_damage_is_named(tmp_path):
    from rnnsearch.checkpoint import BF16, pack_bf16
    w = torch.randn(50, 40)
    kept, packed = pack_bf16({"w": w, "steps": torch.tensor(2)})
    path = tmp_path / "planes.pt"
    checkpoint.save(path, {**_payload(), "model": kept, BF16: packed})
    model = checkpoint.load(path)["model"]
    assert torch.equal(model["w"], w.to(torch.bfloat16)) and torch.equal(model["steps"], torch.tensor(2))
    cut = tmp_path / "cut.pt"
    checkpoint.save(cut, {**_payload(), "model": kept, BF16: {**packed, "low": packed["low"][:-1]}})
    with pytest.raises(CheckpointError, match=r"cut.pt: bf16 planes of 2,000 and 1,999 bytes for 2,000 weights"):
        checkpoint.load(cut)
    garbled = tmp_path / "garbled.pt"
    checkpoint.save(garbled, {**_payload(), "model": kept, BF16: {**packed, "high": torch.zeros(9, dtype=torch.uint8)}})
    with pytest.raises(CheckpointError, match="garbled.pt: the bf16 weights' high bytes do not inflate"):
        checkpoint.load(garbled)
    wrong = tmp_path / "wrong.pt"
    checkpoint.save(wrong, {**_payload(), "model": kept, BF16: {"names": ["w"]}})
    with pytest.raises(CheckpointError, match="'model_bf16' is not two byte planes"):
        checkpoint.load(wrong)


def test_load_model_takes_the_weights_in_the_models_dtypes_and_names_a_missing_one():
    from rnnsearch.config import from_dict
    from rnnsearch.model import build_model, load_model
    cfg = from_dict({"model": {"emb": 8, "enc_hidden": 8, "dec_hidden": 8, "att": 8, "maxout": 4}}).model
    built = build_model(cfg, 15, 17, seed=3)
    state = {k: v.to(torch.bfloat16) if v.dim() == 2 else v for k, v in built.state_dict().items()}  # as a release
    loaded = load_model(cfg, 15, 17, state)
    for name, p in loaded.state_dict().items():
        assert p.dtype == built.state_dict()[name].dtype and not p.is_meta, name
        assert torch.equal(p, state[name].to(p.dtype)), name
    with pytest.raises(RuntimeError, match="Missing key"):
        load_model(cfg, 15, 17, {k: v for k, v in state.items() if k != "decoder.embed.weight"})
