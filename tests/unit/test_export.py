"""Decoding for deployment: the ONNX graphs compute what the PyTorch model computes, and the same
beam search over them gives the same n-best lists; int8 and bf16 decoding run; ensembles average
probabilities; checkpoints average; the last N saves are kept."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("onnxruntime")

from conftest import demo_config, small_model  # noqa: E402
from rnnsearch import checkpoint  # noqa: E402
from rnnsearch.cli import main  # noqa: E402
from rnnsearch.config import from_dict  # noqa: E402
from rnnsearch.data.batching import source_batch  # noqa: E402
from rnnsearch.data.tokenize import TextCodec  # noqa: E402
from rnnsearch.data.vocab import SPECIALS, Vocab  # noqa: E402
from rnnsearch.decoding.average import average_checkpoints  # noqa: E402
from rnnsearch.decoding.backends import OnnxModel  # noqa: E402
from rnnsearch.decoding.export import export  # noqa: E402
from rnnsearch.decoding.nbest import parse_nbest  # noqa: E402
from rnnsearch.decoding.translator import Translator  # noqa: E402
from rnnsearch.model.packed import Int8Linear  # noqa: E402
from rnnsearch.errors import UsageError  # noqa: E402
from rnnsearch.decoding.settings import SearchSettings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_2026_11_22"


def _random_translator(arch: str, cell: str, readout: str) -> Translator:
    model = small_model(arch, encoder_cell=cell, readout_state=readout)  # src 23, tgt 27 ids, large weights
    src = TextCodec("en", "space", Vocab(SPECIALS + [f"s{i}" for i in range(19)]))
    tgt = TextCodec("fr", "space", Vocab(SPECIALS + [f"t{i}" for i in range(23)]))
    cfg = from_dict({"model": {"arch": arch, "encoder_cell": cell, "readout_state": readout}})
    return Translator(model, src, tgt, cfg)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("cell", ["paper", "fused"])
@pytest.mark.parametrize("readout", ["current", "previous"])
def test_graphs_compute_the_models_encoder_and_step(tmp_path, arch, cell, readout):
    translator = _random_translator(arch, cell, readout)
    onnx = OnnxModel(export(translator, tmp_path))
    src, mask = source_batch([[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]])  # padding in two rows
    model = translator.model
    with torch.no_grad():
        enc, got = model.encode(src, mask), onnx.encode(src, mask)
        state, onnx_state = model.init_state(enc), onnx.init_state(got)
        torch.testing.assert_close(onnx_state.hidden, state.hidden, rtol=1e-4, atol=1e-5)
        y, rows = torch.tensor([2, 7, 9]), torch.arange(3)
        for step in range(5):  # each step from its own outputs
            if step == 3:  # then beam search's rows: K = 2 hypotheses per sentence, one encoder row each
                rows = rows.repeat_interleave(2)
                state, onnx_state, y = state.select(rows), onnx_state.select(rows), torch.tensor([4, 7, 9, 2, 11, 5])
            logp, state, alpha = model.step(y, state, enc)
            onnx_logp, onnx_state, onnx_alpha = onnx.step(y, onnx_state, got)
            torch.testing.assert_close(onnx_logp, logp, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(onnx_state.hidden, state.hidden, rtol=1e-4, atol=1e-5)
            if arch == "rnnsearch":
                torch.testing.assert_close(onnx_alpha, alpha, rtol=1e-4, atol=1e-5)
                assert float(onnx_alpha[~mask[rows]].abs().sum()) == 0.0  # padding gets no attention
            else:
                assert onnx_alpha is None and alpha is None
            y = logp.argmax(1)


@pytest.mark.parametrize("version", [1, 2])
def test_an_export_of_another_format_version_says_how_to_export_again(tiny_run, tmp_path, capsys, version):
    """An export written before the graphs changed (format version 1: one encoder row per step row;
    2: graphs built op by op) is refused in one line naming the command that writes the current format."""
    import json
    out = tmp_path / "export"
    assert main(["export", str(tiny_run / "best.pt"), "--format", "onnx", "--out", str(out)]) == 0
    meta = json.loads((out / "model.json").read_text())
    (out / "model.json").write_text(json.dumps({**meta, "version": version}))
    capsys.readouterr()
    assert main(["translate", str(out), "--backend", "onnx", "--input", str(tmp_path / "none.en")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"format version {version}" in err and "rnnsearch export CKPT --format onnx --out DIR" in err and "\n" not in err


def test_no_graph_is_built_by_hand():
    """The ONNX graphs are traced from the model's modules (decoding/export.py), so the decoder's
    equations exist once: nothing under src/ assembles ONNX nodes itself."""
    src = Path(__file__).resolve().parents[2] / "src"
    hand_built = [f"{path.relative_to(src)}:{n}" for path in sorted(src.rglob("*.py"))
                  for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  if "make_node" in line or "onnx.helper" in line or "from onnx import helper" in line]
    assert hand_built == []


@pytest.mark.parametrize("which", ["trained", "fixture"])
def test_onnx_backend_reproduces_the_n_best_lists(tiny_run, synth_dir, tmp_path, which):
    ckpt = tiny_run / "best.pt" if which == "trained" else FIXTURE / "last.pt"
    sources = (synth_dir / "test.en").read_text().splitlines()[:40]
    torch_t = Translator.from_checkpoint(ckpt)
    onnx_t = Translator.from_checkpoint(ckpt, backend="onnx")
    for beam, n_best in ((1, 1), (4, 3)):
        search = SearchSettings(beam=beam, n_best=n_best)
        a, b = torch_t.translate(sources, search), onnx_t.translate(sources, search)
        assert [[h.text for h in r.nbest] for r in a] == [[h.text for h in r.nbest] for r in b]
        diffs = [abs(x.score - y.score) for r, s in zip(a, b) for x, y in zip(r.nbest, s.nbest)]
        assert max(diffs) < 1e-4


def test_an_export_replaces_unk_as_the_translator_it_was_exported_from(tiny_run, tmp_path):
    """A release's export folder wrote raw ``<unk>`` (``n' <unk> pas``): its replacement was not exported."""
    from rnnsearch.decoding.export import export
    exported = Translator.from_checkpoint(tiny_run / "best.pt")
    exported.set_unk_replacement("dict", {"zebra": "zèbre"})
    exported.name = "a_release"  # as from_checkpoint names a release after its folder
    export(exported, tmp_path / "replacing")
    export(Translator.from_checkpoint(tiny_run / "best.pt"), tmp_path / "keeping")
    replacing = Translator.from_checkpoint(tmp_path / "replacing", backend="onnx")
    keeping = Translator.from_checkpoint(tmp_path / "keeping", backend="onnx")
    assert (replacing.replace_unk, replacing.lexicon) == ("dict", {"zebra": "zèbre"})
    assert (keeping.replace_unk, keeping.lexicon) == (None, None)
    assert replacing.name == "a_release"  # a release's export served as "hansards_rnnsearch" (its recipe's name)
    out = replacing.translate(["The zebra and the okapi sleep ."])[0]
    assert "<unk>" not in out.tokens


def test_cli_export_then_translate_the_directory(tiny_run, synth_dir, tmp_path, capsys):
    ckpt, out = str(tiny_run / "best.pt"), tmp_path / "export"
    assert main(["export", ckpt, "--out", str(out), "--quantize", "int8"]) == 0
    assert {p.name for p in out.iterdir()} == {"encoder.onnx", "decoder_step.onnx", "decoder_step.int8.onnx",
                                               "model.json"}
    src = str(synth_dir / "test.en")
    capsys.readouterr()
    outputs = {}
    for name, extra in (("torch", [ckpt]), ("onnx", [str(out), "--backend", "onnx"])):
        assert main(["translate", *extra, "--input", src, "--beam", "3", "--n-best", "2"]) == 0
        outputs[name] = parse_nbest(capsys.readouterr().out.splitlines())
    assert [[t for t, _ in hyps] for hyps in outputs["torch"]] == [[t for t, _ in hyps] for hyps in outputs["onnx"]]
    assert main(["translate", str(out), "--input", src]) == 2  # an export needs --backend onnx
    assert "--backend onnx" in capsys.readouterr().err



def test_an_export_again_into_its_folder_leaves_no_int8_decoder_of_the_earlier_model(tiny_run, tmp_path):
    """Exporting another model into a folder kept the first one's decoder_step.int8.onnx: int8 decoding then wrote
    garbage (``L'après effet.``) with exit status 0."""
    import os
    out = tmp_path / "export"
    assert main(["export", str(tiny_run / "best.pt"), "--out", str(out), "--quantize", "int8"]) == 0
    first = (out / "decoder_step.int8.onnx").read_bytes()
    os.utime(out / "decoder_step.int8.onnx", (0, 2e9))  # even one that looks newer
    assert main(["export", str(FIXTURE / "last.pt"), "--out", str(out)]) == 0
    assert not (out / "decoder_step.int8.onnx").exists()
    assert main(["export", str(FIXTURE / "last.pt"), "--out", str(out), "--quantize", "int8"]) == 0
    assert (out / "decoder_step.int8.onnx").read_bytes() != first

@pytest.mark.parametrize("kind", [dict(backend="onnx", quantize="int8"), dict(quantize="int8"), dict(dtype="bf16")])
def test_int8_and_bf16_keep_the_translations_of_a_trained_model(tiny_run, synth_dir, kind):
    from rnnsearch.analysis.evaluate import corpus_bleu
    ckpt = tiny_run / "best.pt"
    sources = (synth_dir / "test.en").read_text().splitlines()[:60]
    refs = (synth_dir / "test.fr").read_text().splitlines()[:60]
    beam3 = SearchSettings(beam=3)
    full = corpus_bleu([t.text for t in Translator.from_checkpoint(ckpt).translate(sources, beam3)], refs)[0]
    low = Translator.from_checkpoint(ckpt, **kind)
    got = corpus_bleu([t.text for t in low.translate(sources, SearchSettings(beam=3))], refs)[0]
    assert got >= full - 1.0, (kind, full, got)


def test_an_ensemble_averages_probabilities(tiny_run, tmp_path):
    ckpt = tiny_run / "best.pt"
    single = Translator.from_checkpoint(ckpt)
    pair = Translator.from_checkpoint(ckpt)
    pair.add_ensemble([str(ckpt)])  # a model with itself: the model
    sentences = ["The big dog sees a small cat .", "A white cat sleeps ."]
    search = SearchSettings(beam=3, n_best=2)
    for a, b in zip(single.translate(sentences, search), pair.translate(sentences, search)):
        assert [h.text for h in a.nbest] == [h.text for h in b.nbest]
        assert [h.score for h in a.nbest] == pytest.approx([h.score for h in b.nbest], abs=1e-5)
    # two different models: the step's log-probabilities are log((p1 + p2) / 2)
    other = Translator.from_checkpoint(ckpt)
    with torch.no_grad():
        for p in other.model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    mixed = Translator.from_checkpoint(ckpt)
    mixed.model = type(pair.model)([single.model, other.model])
    src, mask = source_batch([[5, 6, 7], [8, 9]])
    with torch.no_grad():
        first = torch.tensor([2, 2])
        logp, _, alpha = mixed.model.step(first, mixed.model.init_state(enc := mixed.model.encode(src, mask)), enc)
        l1, _, a1 = single.model.step(first, single.model.init_state(e1 := single.model.encode(src, mask)), e1)
        l2, _, a2 = other.model.step(first, other.model.init_state(e2 := other.model.encode(src, mask)), e2)
    torch.testing.assert_close(logp.exp(), (l1.exp() + l2.exp()) / 2, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(alpha, (a1 + a2) / 2)


@pytest.mark.parametrize("kind", [dict(backend="onnx"), dict(quantize="int8"), dict(dtype="bf16")])
def test_ensemble_members_are_loaded_as_the_first_model(tiny_run, tmp_path, kind):
    ckpt = tiny_run / "best.pt"
    pair = Translator.from_checkpoint(ckpt, **kind)
    pair.add_ensemble([str(ckpt)])
    if "backend" in kind:  # the first model an export's graphs: a checkpoint member is exported too
        exported = Translator.from_checkpoint(export(Translator.from_checkpoint(ckpt), tmp_path), backend="onnx")
        exported.add_ensemble([str(ckpt)])
        assert [type(m) for m in exported.model.models] == [OnnxModel, OnnxModel]
    first, second = pair.model.models
    assert type(first) is type(second)
    if "quantize" in kind:
        assert [type(m.decoder.W_o) for m in pair.model.models] == [Int8Linear, Int8Linear]
    if "dtype" in kind:
        assert {p.dtype for p in second.parameters()} == {p.dtype for p in first.parameters()} == {torch.bfloat16}
    if "backend" in kind:
        assert isinstance(second, OnnxModel)
    assert pair.translate(["A white cat sleeps ."])[0].text  # and they search together


def test_an_ensemble_needs_the_same_vocabularies(tiny_run):
    t = Translator.from_checkpoint(tiny_run / "best.pt")
    with pytest.raises(UsageError, match="vocabulary differs"):
        t.add_ensemble([str(FIXTURE / "last.pt")])


def test_average_of_checkpoints(tiny_run, tmp_path, synth_dir):
    ckpt = tiny_run / "best.pt"
    averaged = average_checkpoints([str(ckpt), str(tiny_run / "last.pt")], tmp_path / "avg.pt")
    a, b = checkpoint.load(ckpt)["model"], checkpoint.load(tiny_run / "last.pt")["model"]
    for name, value in averaged["model"].items():
        torch.testing.assert_close(value, (a[name] + b[name]) / 2)
    translator = Translator.from_checkpoint(tmp_path / "avg.pt")
    assert translator.translate(["The dog ."])[0].text
    assert translator.averaged_from == [str(ckpt), str(tiny_run / "last.pt")]
    assert Translator.from_checkpoint(ckpt).averaged_from == []
    # a report's Compute section says which model is an average, and of what
    from rnnsearch.analysis.report import compute_table
    rows = compute_table({"Avg": translator, "Best": Translator.from_checkpoint(ckpt)})
    notes = [row for row in rows if row and not row.startswith("|")]
    assert notes == ["Avg: the mean of 2 checkpoints (`rnnsearch average`): `best.pt`, `last.pt`; "
                     "not its best dev BLEU checkpoint."]
    with pytest.raises(UsageError, match="model.emb is 32 but 48"):
        average_checkpoints([str(ckpt), str(FIXTURE / "last.pt")], tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()


def test_checkpoints_of_different_trainings_do_not_average(tiny_run, tmp_path):
    """Two trainings of one config from different initialisations were averaged into a model that translates
    nothing: same config, same vocabularies, unrelated parameters."""
    from rnnsearch.model import build_model
    payload = checkpoint.load(tiny_run / "best.pt")
    model = payload["model"]
    other = build_model(from_dict(payload["config"]).model, model["encoder.embed.weight"].shape[0],
                        payload["model"]["decoder.embed.weight"].shape[0], seed=7, deferred=False).state_dict()
    checkpoint.save(tmp_path / "other.pt", {**payload, "model": {k: other[k] for k in model}})
    with pytest.raises(UsageError, match=r"other.pt: its parameters are unrelated to .*best.pt's \(cosine -?0.0"):
        average_checkpoints([str(tiny_run / "best.pt"), str(tmp_path / "other.pt")], tmp_path / "avg.pt")
    assert not (tmp_path / "avg.pt").exists()


@pytest.mark.slow  # runs the training loop
def test_keep_last_keeps_the_last_saves(synth_dir, tmp_path):
    from rnnsearch.training.trainer import train
    cfg = demo_config(synth_dir, max_steps=50, save_every=10, valid_every=20, keep_last=2, valid_max_sentences=10)
    cfg["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    train(from_dict(cfg), tmp_path, log=lambda *_: None)
    kept = sorted(p.name for p in tmp_path.glob("step-*.pt"))
    assert kept == ["step-00000040.pt", "step-00000050.pt"]
    assert [checkpoint.load(tmp_path / name)["train_state"]["step"] for name in kept] == [40, 50]


def test_int8_onnx_is_quantised_after_onnxruntimes_pre_processing(tiny_run, caplog, capfd):
    """onnxruntime's quantiser asks for its pre-processing first; the back end runs it, so the user
    sees no 'Please consider to run pre-processing' warning, and no pre-processed file stays behind."""
    import logging
    with caplog.at_level(logging.DEBUG):
        translator = Translator.from_checkpoint(tiny_run / "best.pt", backend="onnx", quantize="int8")
        assert translator.translate(["The dog sees a cat ."])[0].text
    printed = caplog.text + "".join(capfd.readouterr())
    assert "pre-processing" not in printed and "pre_process" not in printed
    assert sorted(p.name for p in Path(translator._export_dir.name).glob("*.onnx")) == [
        "decoder_step.int8.onnx", "decoder_step.onnx", "encoder.onnx"]


def test_a_saved_checkpoint_is_readable_as_any_file_the_process_makes(tiny_run, tmp_path):
    """``release`` and ``average`` wrote 0600 files: the documented service's user could not read a release."""
    import os
    mask = os.umask(0o022)
    try:
        checkpoint.save(tmp_path / "c.pt", checkpoint.load(tiny_run / "best.pt"))
    finally:
        os.umask(mask)
    assert (tmp_path / "c.pt").stat().st_mode & 0o777 == 0o644
