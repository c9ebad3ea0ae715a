"""An output path the commands cannot write is one line naming it, before any work (no raw OSError)."""
from __future__ import annotations

import pytest

from rnnsearch.cli import main


@pytest.mark.parametrize("command", ["translate", "score"])
def test_an_output_in_no_folder_or_a_folder_is_one_line(command, tiny_run, tmp_path, capsys):
    (tmp_path / "in.en").write_text("the dog .\n")
    (tmp_path / "in.fr").write_text("le chien .\n")
    inputs = ["--input", str(tmp_path / "in.en")] if command == "translate" else \
        ["--src", str(tmp_path / "in.en"), "--tgt", str(tmp_path / "in.fr")]
    for out, said in ((tmp_path / "none" / "out.txt", "to write it in"), (tmp_path, "a folder; name the file to write")):
        assert main([command, str(tiny_run / "best.pt"), *inputs, "--output", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(out) in err[0] and said in err[0] and "Errno" not in err[0]
    assert not (tmp_path / "none").exists()


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(tiny_run, tmp_path, capsys):
    """``translate --input m3.en --output m3.en`` exited 0 with French in m3.en; so did score, align, average."""
    src, tgt, ckpt = tmp_path / "in.en", tmp_path / "in.fr", str(tiny_run / "best.pt")
    src.write_text("the dog .\n")
    tgt.write_text("le chien .\n")
    copy = tmp_path / "copy.pt"
    copy.write_bytes((tiny_run / "best.pt").read_bytes())
    for argv, kept in ((["translate", ckpt, "--input", str(src), "--output", str(src)], src),
                       (["score", ckpt, "--src", str(src), "--tgt", str(tgt), "--output", str(tgt)], tgt),
                       (["align", ckpt, "--src", str(src), "--tgt", str(tgt), "--out", str(tgt)], tgt),
                       (["average", str(copy), ckpt, "--out", str(copy)], copy)):
        before = kept.read_bytes()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "would overwrite an input" in err[0] and kept.read_bytes() == before


@pytest.mark.parametrize("flags, said", [(["--device", "tpu"], "expected cpu, cuda or cuda:N"),
                                         (["--backend", "onnx", "--shortlist", "x.tsv"], "not with --backend onnx")])
def test_a_device_or_backend_it_cannot_use_is_one_line_before_the_model_loads(flags, said, tiny_run, tmp_path, capsys):
    (tmp_path / "in.en").write_text("the dog .\n")
    with pytest.raises(SystemExit) if flags[0] == "--device" else _no_raise():
        assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in.en"), *flags]) == 2
    assert said in capsys.readouterr().err


def _no_raise():
    from contextlib import nullcontext
    return nullcontext()


def test_serve_refuses_a_port_out_of_range_or_in_use_before_the_model_loads(tiny_run, capsys):
    """``--port 99999`` was an OverflowError after the model had loaded; a port in use, uvicorn's Errno 98 after it."""
    import socket
    with pytest.raises(SystemExit):
        main(["serve", str(tiny_run / "best.pt"), "--port", "99999"])
    assert "a port is a number from 1 to 65535" in capsys.readouterr().err
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["serve", str(tiny_run / "nothing.pt"), "--port", str(port)]) == 2  # refused before loading
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot listen on 127.0.0.1:{port}" in err[0]


def test_an_output_through_a_link_writes_the_file_it_names_and_keeps_its_mode(tiny_run, tmp_path):
    """``--output link.txt`` replaced the link by a file (the target kept its old text), and ``--output /dev/stdout``
    replaced the device by a file."""
    import os
    (tmp_path / "in.en").write_text("the dog .\n")
    target = tmp_path / "real" / "target.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    target.chmod(0o600)
    (tmp_path / "link.txt").symlink_to(target)
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in.en"),
                 "--output", str(tmp_path / "link.txt"), "--beam", "2"]) == 0
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() != "old\n"
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so that writing does not block
    try:
        assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in.en"),
                     "--output", str(fifo), "--beam", "2"]) == 0
        assert fifo.exists() and not fifo.is_file() and os.read(reader, 1000).strip()  # still a pipe, written through
    finally:
        os.close(reader)


def test_describe_reads_a_trained_models_real_sizes(tiny_run, capsys):
    """``describe`` read configs only: a config's 30,000-word vocabulary and 80M parameters were taken for a
    trained model's, whose recipe set smaller sizes and whose corpus had fewer words."""
    from rnnsearch import checkpoint
    assert main(["describe", str(tiny_run)]) == 0
    out = capsys.readouterr().out
    weights = checkpoint.load(tiny_run / "best.pt")["model"]
    sizes = [weights[f"{s}.embed.weight"].shape[0] for s in ("encoder", "decoder")]
    assert f"vocabulary {sizes[0]} source, {sizes[1]} target (word)" in out
    assert f"parameters: {sum(w.numel() for w in weights.values()):,}" in out
    assert main(["describe", str(tiny_run / "best.pt"), "--set", "model.emb=3"]) == 2
    assert "--set changes a config, not a trained model" in capsys.readouterr().err


def test_evaluate_and_report_refuse_an_empty_test_set_in_one_line(tiny_run, tmp_path, capsys):
    """Both raised sacrebleu's IndexError from deep inside corpus_score."""
    src, ref = tmp_path / "empty.en", tmp_path / "empty.fr"
    src.write_text(""), ref.write_text("")
    assert main(["evaluate", str(tiny_run / "best.pt"), "--src", str(src), "--ref", str(ref)]) == 2
    assert main(["report", "--model", f"A={tiny_run / 'best.pt'}", "--src", str(src), "--ref", str(ref),
                 "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(str(src) in line and "empty" in line for line in err)


def test_evaluate_names_a_release_without_a_leading_slash():
    from rnnsearch.cli.scoring import _label
    assert _label("hansards_enfr_rnnsearch50") == "hansards_enfr_rnnsearch50"
    assert _label("runs/tiny/best.pt") == "tiny/best.pt" and _label("models/x") == "models/x"


def test_score_normalize_with_json_gives_the_per_unit_log_probability(tiny_run, tmp_path, capsys):
    """``--normalize --json`` wrote the whole sentence's log-probability, as if --normalize were not given."""
    import json
    (tmp_path / "in.en").write_text("the dog .\n")
    (tmp_path / "in.fr").write_text("le chien .\n")
    args = ["score", str(tiny_run / "best.pt"), "--src", str(tmp_path / "in.en"), "--tgt", str(tmp_path / "in.fr")]
    assert main(args + ["--json", "--normalize"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert abs(row["per_unit"] - row["logprob"] / row["units"]) < 1e-9
    assert main(args + ["--normalize"]) == 0
    assert abs(float(capsys.readouterr().out) - row["per_unit"]) < 1e-5


def test_describe_gives_no_attention_for_rnnencdec(capsys):
    assert main(["describe", "configs/paper_rnnencdec50.yaml"]) == 0
    assert "attention" not in capsys.readouterr().out
    assert main(["describe", "configs/paper_rnnsearch50.yaml"]) == 0
    assert "attention 1000" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["translate", "evaluate"])
def test_a_source_in_another_language_is_named_in_a_warning(command, tiny_run, tmp_path, capsys):
    """A French file given to the En->Fr model was translated to garbage, and evaluate printed BLEU 0.55,
    each without a word (translate-file refuses such a file)."""
    french = "Le comité s'est réuni hier.\nIl a adopté le budget de l'année prochaine sans débat.\n"
    english = "the dog sees a cat .\na girl paints the red car .\n"
    for text, warned in ((french, True), (english, False)):
        (tmp_path / "in.txt").write_text(text, encoding="utf-8")
        (tmp_path / "ref.txt").write_text(text, encoding="utf-8")
        files = ["--input", str(tmp_path / "in.txt")] if command == "translate" else \
            ["--src", str(tmp_path / "in.txt"), "--ref", str(tmp_path / "ref.txt")]
        assert main([command, str(tiny_run / "best.pt"), *files]) == 0
        err = capsys.readouterr().err
        said = f"{tmp_path / 'in.txt'} reads as French (fr" in err and "not English" in err and "translated already?" in err
        assert said == warned, err
