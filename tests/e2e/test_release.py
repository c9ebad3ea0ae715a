"""A released model (``rnnsearch release``): one folder with bf16 weights, vocabularies, config,
log and model card, that translate, evaluate, report, serve, ``Translator.from_pretrained`` and
``torch.hub.load`` take, by path, by name or by URL; written whole or not at all."""
from __future__ import annotations

import functools
import hashlib
import http.server
import importlib.util
import inspect
import json
import shutil
import tarfile
import threading
from pathlib import Path

import pytest
import torch

from conftest import REPO
from rnnsearch import checkpoint
from rnnsearch.analysis import release as release_module
from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.analysis.release import make_release
from rnnsearch.cli import main
from rnnsearch.data.io import read_lines
from rnnsearch.decoding.pretrained import ReleaseError, available
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.decoding.settings import SearchSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def released(trained_run, synth_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("models") / "tiny_synth"
    make_release(trained_run / "best.pt", out, test=(synth_dir / "test.en", synth_dir / "test.fr"), beam=3,
                 description="A tiny RNNsearch of the synthetic demo corpus.", log=lambda *_: None)
    return out


def test_a_release_holds_bf16_weights_and_what_a_user_needs(released, trained_run):
    assert sorted(p.name for p in released.iterdir()) == ["README.md", "log.jsonl", "model.pt", "release.json",
                                                          "test.hyp.fr"]
    manifest = json.loads((released / "release.json").read_text())
    assert manifest["sha256"] == hashlib.sha256((released / "model.pt").read_bytes()).hexdigest()
    payload = checkpoint.load(released / "model.pt")
    assert "optimizer" not in payload and "rngs" not in payload
    floats = [v for v in payload["model"].values() if v.is_floating_point()]
    assert floats and all(v.dtype == torch.bfloat16 for v in floats)
    assert manifest["parameters"] == sum(v.numel() for v in floats)
    assert (released / "model.pt").stat().st_size < 0.6 * (trained_run / "best.pt").stat().st_size
    original = checkpoint.load(trained_run / "best.pt")["model"]  # bf16 planes: lossless against bf16
    assert all(torch.equal(payload["model"][k], w.to(torch.bfloat16) if w.is_floating_point() else w)
               for k, w in original.items())
    card = (released / "README.md").read_text()
    assert f"{manifest['test']['bleu']:.2f}" in card and manifest["test"]["signature"] in card
    assert (released / "log.jsonl").read_bytes() == (trained_run / "log.jsonl").read_bytes()


def test_the_card_s_bleu_is_what_the_released_file_scores(released, synth_dir):
    manifest = json.loads((released / "release.json").read_text())
    translator = Translator.from_pretrained(str(released))
    hyps = [t.text for t in translator.translate(read_lines(synth_dir / "test.en"), SearchSettings(beam=3))]
    assert corpus_bleu(hyps, read_lines(synth_dir / "test.fr"))[0] == manifest["test"]["bleu"]
    assert hyps == read_lines(released / "test.hyp.fr")


def test_by_name_through_the_cli_and_the_python_api(released, synth_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RNNSEARCH_MODELS", str(released.parent))
    source = read_lines(synth_dir / "test.en")[:5]
    expected = [t.text for t in Translator.from_checkpoint(released / "model.pt").translate(source, SearchSettings(beam=3))]
    assert [t.text for t in Translator.from_pretrained("tiny_synth").translate(source, SearchSettings(beam=3))] == expected
    (tmp_path / "in.en").write_text("".join(s + "\n" for s in source), encoding="utf-8")
    for spec in ("tiny_synth", str(released)):
        capsys.readouterr()
        assert main(["translate", spec, "--input", str(tmp_path / "in.en"), "--beam", "3"]) == 0
        assert capsys.readouterr().out.splitlines() == expected
    with pytest.raises(ReleaseError, match="no released model of that name.*found: tiny_synth"):
        Translator.from_pretrained("no_such_model")


def test_each_folder_is_searched_and_named_once(monkeypatch):
    monkeypatch.chdir(REPO)  # ./models is the clone's models/
    monkeypatch.setenv("RNNSEARCH_MODELS", str(REPO / "models"))
    with pytest.raises(ReleaseError) as error:
        Translator.from_pretrained("no_such_model")
    assert str(error.value).count(str(REPO / "models")) == 1


def test_torch_hub_loads_it_from_the_clone(released, synth_dir, tmp_path, monkeypatch):
    """hubconf.py has one entry per release in the clone's models/; each loads the release of its own
    name (a tiny model copied under each name into RNNSEARCH_MODELS, searched before the clone's
    models/), and `released` takes a path."""
    models = tmp_path / "models"
    spec = importlib.util.spec_from_file_location("hubconf", REPO / "hubconf.py")
    hubconf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hubconf)
    entries = [name for name, f in vars(hubconf).items()  # torch.hub.list takes no local clone
               if inspect.isfunction(f) and f.__module__ == "hubconf" and name != "released"]
    assert sorted(entries) == sorted(available([REPO / "models"]))  # one entry per release in models/
    for entry in entries:
        shutil.copytree(released, models / entry)
    monkeypatch.setenv("RNNSEARCH_MODELS", str(models))
    source = read_lines(synth_dir / "test.en")[:3]
    expected = [t.text for t in Translator.from_pretrained(str(released)).translate(source)]
    for entry, args in [(e, ()) for e in entries] + [("released", (str(released),))]:
        translator = torch.hub.load(str(REPO), entry, *args, source="local")
        assert [t.text for t in translator.translate(source)] == expected


def test_by_url_checked_against_its_sha256(released, synth_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("RNNSEARCH_CACHE", str(tmp_path / "cache"))
    served = tmp_path / "served"
    served.mkdir()
    with tarfile.open(served / "tiny_synth.tar.gz", "w:gz") as tar:
        tar.add(released, arcname="tiny_synth")
    digest = hashlib.sha256((served / "tiny_synth.tar.gz").read_bytes()).hexdigest()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *_: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/tiny_synth.tar.gz"
        source = read_lines(synth_dir / "test.en")[:3]
        expected = [t.text for t in Translator.from_pretrained(str(released)).translate(source)]
        translator = Translator.from_pretrained(f"{url}#sha256={digest}")
        assert [t.text for t in translator.translate(source)] == expected
        with pytest.raises(ReleaseError, match="cannot download"):
            Translator.from_pretrained(f"{url}#sha256={'0' * 64}")
    finally:
        server.shutdown()


def test_a_release_is_written_whole_or_not_at_all(trained_run, synth_dir, tmp_path, monkeypatch):
    out = tmp_path / "models" / "partial"

    def fail(*_args, **_kwargs):
        raise KeyboardInterrupt  # as Ctrl-C during the test translation

    monkeypatch.setattr(release_module, "measure", fail)
    with pytest.raises(KeyboardInterrupt):
        make_release(trained_run / "best.pt", out, test=(synth_dir / "test.en", synth_dir / "test.fr"),
                     log=lambda *_: None)
    assert not (tmp_path / "models").exists() or list((tmp_path / "models").iterdir()) == []
    monkeypatch.undo()
    make_release(trained_run / "best.pt", out, log=lambda *_: None)
    with pytest.raises(UsageError, match="exists; choose another name or pass --force"):
        make_release(trained_run / "best.pt", out, log=lambda *_: None)
    assert "Not measured at release" in (out / "README.md").read_text()


def test_an_int8_release_where_parity_holds(trained_run, released, synth_dir, tmp_path, capsys):
    """--dtype int8: matrices in int8 with a scale per row, a quarter of float32's bytes, read back
    as float32 by every loader; the card's BLEU is the int8 file's, beside bf16's, within --parity."""
    out = tmp_path / "models" / "tiny_int8"
    assert main(["release", str(trained_run / "best.pt"), "--out", str(out), "--src", str(synth_dir / "test.en"),
                 "--ref", str(synth_dir / "test.fr"), "--beam", "3", "--dtype", "int8", "--parity", "0.5"]) == 0
    manifest = json.loads((out / "release.json").read_text())
    bf16 = json.loads((released / "release.json").read_text())
    assert manifest["dtype"] == "int8" and manifest["bytes"] < 0.6 * 2 * bf16["parameters"]  # against bf16's bytes
    assert manifest["test"]["parity"] == {"bfloat16_bleu": bf16["test"]["bleu"], "tolerance": 0.5}
    assert abs(manifest["test"]["bleu"] - bf16["test"]["bleu"]) <= 0.5
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "log.jsonl", "model.pt", "release.json",
                                                     "test.hyp.fr"]
    original = checkpoint.load(trained_run / "best.pt")["model"]
    loaded = checkpoint.load(out / "model.pt")["model"]
    assert loaded.keys() == original.keys()
    for name, w in original.items():
        if w.is_floating_point() and w.dim() == 2:  # within half a step of its row's int8 grid
            step = w.abs().amax(1, keepdim=True) / 127
            assert loaded[name].dtype == torch.float32 and bool(((loaded[name] - w).abs() <= step / 2 + 1e-6).all())
    released = Translator.from_pretrained(str(out))
    hyps = [t.text for t in released.translate(read_lines(synth_dir / "test.en"), SearchSettings(beam=3))]
    assert corpus_bleu(hyps, read_lines(synth_dir / "test.fr"))[0] == manifest["test"]["bleu"]
    assert "int8 (matrices" in (out / "README.md").read_text()


def test_int8_is_refused_without_a_test_or_past_the_tolerance(trained_run, synth_dir, tmp_path, monkeypatch):
    out = tmp_path / "models" / "refused"
    with pytest.raises(UsageError, match="int8 release needs a test set"):
        make_release(trained_run / "best.pt", out, dtype="int8", log=lambda *_: None)
    measure = release_module.measure

    def bf16_scores_higher(weights, *args):  # the parity run's weights lie in a bf16/ folder
        scores = measure(weights, *args)
        return {**scores, "bleu": scores["bleu"] + (1.0 if weights.parent.name == "bf16" else 0.0)}

    monkeypatch.setattr(release_module, "measure", bf16_scores_higher)
    with pytest.raises(UsageError, match="more than the parity tolerance of 0.5: release in bf16"):
        make_release(trained_run / "best.pt", out, test=(synth_dir / "test.en", synth_dir / "test.fr"), beam=2,
                     dtype="int8", parity=0.5, log=lambda *_: None)
    assert not out.exists()
