"""End to end on the synthetic corpus: learn it, translate, evaluate, plot, resume."""
import json

import pytest
import torch

from conftest import demo_config
from rnnsearch import checkpoint
from rnnsearch.cli import main
from rnnsearch.config import from_dict, replace
from rnnsearch.data.io import read_lines
from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.training.trainer import train
from rnnsearch.decoding.translator import Translator
from rnnsearch.decoding.settings import SearchSettings

pytestmark = pytest.mark.slow


def test_tiny_corpus_is_learned_to_bleu_100(trained_run, synth_dir):
    translator = Translator.from_checkpoint(trained_run / "best.pt")
    src, ref = read_lines(synth_dir / "train.en")[:200], read_lines(synth_dir / "train.fr")[:200]
    hyps = [t.text for t in translator.translate(src, SearchSettings(beam=3))]
    assert corpus_bleu(hyps, ref)[0] == pytest.approx(100.0)
    test_src, test_ref = read_lines(synth_dir / "test.en"), read_lines(synth_dir / "test.fr")
    assert corpus_bleu([t.text for t in translator.translate(test_src)], test_ref)[0] >= 90


def test_log_and_checkpoints_follow_the_contract(trained_run):
    entries = [json.loads(line) for line in (trained_run / "log.jsonl").read_text().splitlines()]
    assert entries and all({"step", "elapsed_s", "tgt_tokens"} <= e.keys() for e in entries)
    assert any("loss" in e for e in entries) and any("dev_bleu" in e for e in entries)
    tokens = [e["tgt_tokens"] for e in entries]
    assert tokens == sorted(tokens) and tokens[-1] > 0
    payload = checkpoint.load(trained_run / "last.pt")
    assert payload["config"]["model"]["arch"] == "rnnsearch"
    assert payload["src_codec"]["itos"][:4] == ["<pad>", "<unk>", "<s>", "</s>"]


def test_python_api(trained_run):
    translator = Translator.from_checkpoint(trained_run / "best.pt")
    out = translator.translate(["The small dog sees a red car.", "", "A girl likes the horses."],
                               SearchSettings(beam=4, n_best=3))
    assert out[1].text == "" and out[1].tokens == []
    first = out[0]
    assert first.text.startswith("Le chien petit") and first.text.endswith(".")
    assert first.source_tokens[-1] == "</s>" and first.attention.shape == (len(first.tokens) + 1, len(first.source_tokens))
    assert len(first.nbest) == 3 and first.nbest[0] is first
    assert first.score <= 0 and all(a.score >= b.score for a, b in zip(first.nbest, first.nbest[1:]))


def test_over_long_input_is_cut_with_a_warning(trained_run):
    translator = Translator.from_checkpoint(trained_run / "best.pt")
    translator.decode_cfg = replace(translator.decode_cfg, max_src_len=6)
    with pytest.warns(UserWarning, match=r"line 2: 11 source units, translating the first 6 \(decode.max_src_len\)"):
        out = translator.translate(["A dog.", "The big dog sees the small cat in the house."], SearchSettings(beam=1))
    assert len(out[1].source_tokens) == 7


def test_cli_translate_keeps_lines_and_names_the_cut_line(trained_run, tmp_path, capsys):
    ckpt = str(trained_run / "best.pt")
    long = " ".join(["the big dog sees the small cat"] * 50)  # 350 words > decode.max_src_len 256
    src = tmp_path / "in.en"
    src.write_bytes(b"The dog sees a cat.\n\n   \r\n" + long.encode() + b"\nA car.\n")
    out, pieces = tmp_path / "out.fr", tmp_path / "pieces.fr"
    assert main(["translate", ckpt, "--input", str(src), "--output", str(pieces), "--beam", "2"]) == 0
    assert "source units" not in capsys.readouterr().err  # by default the long line is translated in pieces, all of it
    from rnnsearch import Translator
    from rnnsearch.text.pipeline import translate_lines
    [[whole]] = translate_lines(Translator.from_checkpoint(ckpt), [long])
    assert len(whole.segments) == 5 and all(t.text for t in whole.segments)  # 350 units in windows of 2 x 40
    cut = ["--max-units", "1000"]  # asked not to cut it into pieces: the model reads its first 256 units
    assert main(["translate", ckpt, "--input", str(src), "--output", str(out), "--beam", "2", *cut]) == 0
    rows = out.read_text(encoding="utf-8").split("\n")
    assert len(rows) == 6 and rows[5] == ""  # five lines in, five out
    assert rows[1] == "" and rows[2] == "" and rows[0] and rows[3] and rows[4]
    err = capsys.readouterr().err
    assert f"{src} line 4: 350 source units, translating the first 256" in err
    assert "sentences" not in err  # the progress bar is for terminals only
    # two lines at a time: the same output, written part by part, the warning on the same line
    parts = tmp_path / "parts.fr"
    assert main(["translate", ckpt, "--input", str(src), "--output", str(parts), "--beam", "2", "--buffer-size", "2",
                 *cut]) == 0
    assert parts.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
    assert f"{src} line 4: 350 source units" in capsys.readouterr().err
    nbest = [main(["translate", ckpt, "--input", str(src), "--beam", "2", "--n-best", "2", "--buffer-size", size])
             or capsys.readouterr().out for size in ("3", "10000")]
    assert nbest[0] == nbest[1] and nbest[0].splitlines()[-1].startswith("4 ||| ")
    sampled = [main(["translate", ckpt, "--input", str(src), "--sample", "--seed", "3", "--buffer-size", "2"])
               or capsys.readouterr().out for _ in range(2)]
    assert sampled[0] == sampled[1] and len(sampled[0].splitlines()) == 5  # the seed's draws go on over the parts
    refused = tmp_path / "refused.fr"
    assert main(["translate", ckpt, "--input", str(src), "--output", str(refused), "--beam", "2", "--n-best", "3"]) == 2
    assert not refused.exists() and "--n-best 3 is larger than --beam 2" in capsys.readouterr().err
    assert main(["translate", ckpt, "--input", str(src), "--beam", "0"]) == 2
    assert "--beam must be at least 1 (1 = greedy search), got 0" in capsys.readouterr().err
    (tmp_path / "empty.en").write_text("")
    assert main(["translate", ckpt, "--input", str(tmp_path / "empty.en"), "--output", str(tmp_path / "e.fr")]) == 0
    assert "is empty: nothing to translate" in capsys.readouterr().err and (tmp_path / "e.fr").read_text() == ""
    assert main(["translate", ckpt, "--input", str(src), "--buffer-size", "0"]) == 2
    assert "--buffer-size must be at least 1, got 0" in capsys.readouterr().err


def test_progress_counts_every_sentence_once(trained_run, synth_dir):
    """Translator.translate(progress=f): f(n) after each batch, blank lines first; the counts add up
    to the input (what the CLI's tqdm bar shows on a terminal)."""
    translator = Translator.from_checkpoint(trained_run / "best.pt")
    texts = (synth_dir / "test.en").read_text().splitlines()[:23] + ["", "  "]
    calls = []
    found = translator.translate(texts, SearchSettings(beam=2, batch_size=5), progress=calls.append)
    again = translator.translate(texts, SearchSettings(beam=2))
    assert calls == [2, 5, 5, 5, 5, 3] and [r.text for r in found] == [r.text for r in again]


def test_cli_translate_evaluate_plot(trained_run, synth_dir, tmp_path, capsys):
    ckpt = str(trained_run / "best.pt")
    out = tmp_path / "hyp.fr"
    assert main(["translate", ckpt, "--input", str(synth_dir / "test.en"), "--output", str(out), "--beam", "2"]) == 0
    assert len(read_lines(out)) == len(read_lines(synth_dir / "test.en"))
    capsys.readouterr()
    assert main(["evaluate", ckpt, "--src", str(synth_dir / "test.en"), "--ref", str(synth_dir / "test.fr"),
                 "--beam", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"bleu", "signature", "bleu_no_unk", "n_no_unk", "by_length", "chrf", "chrf_signature"} <= result.keys()
    assert 0 < result["chrf"] <= 100 and "nc:6" in result["chrf_signature"]
    assert result["bleu"] == pytest.approx(corpus_bleu(read_lines(out), read_lines(synth_dir / "test.fr"))[0])
    plot = tmp_path / "len.png"
    assert main(["evaluate", ckpt, "--src", str(synth_dir / "test.en"), "--ref", str(synth_dir / "test.fr"),
                 "--compare", ckpt, "--names", "A,B", "--plot", str(plot)]) == 0
    table = capsys.readouterr().out
    assert "| A | " in table and "| B | " in table and plot.exists()
    png = tmp_path / "align.png"
    assert main(["plot-alignment", ckpt, "--input", str(synth_dir / "test.en"), "--line", "3", "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    nbest = tmp_path / "nbest.txt"
    (tmp_path / "in.en").write_text("The dog sees a cat.\n\nA car.\n")
    assert main(["translate", ckpt, "--input", str(tmp_path / "in.en"), "--output", str(nbest),
                 "--beam", "3", "--n-best", "2"]) == 0
    rows = nbest.read_text().splitlines()
    assert [r.split(" ||| ")[0] for r in rows] == ["0", "0", "1", "2", "2"]


def test_resume_gives_the_parameters_of_an_uninterrupted_run(synth_dir, tmp_path):
    base = demo_config(synth_dir, max_steps=24, valid_every=8, log_every=4, patience=0,
                       valid_max_sentences=20)
    base["model"].update(dropout=0.3, emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    quiet = lambda *_: None  # noqa: E731
    train(from_dict(base), tmp_path / "full", log=quiet)
    first = {**base, "train": {**base["train"], "max_steps": 16}}
    train(from_dict(first), tmp_path / "parts", log=quiet)
    train(from_dict(base), tmp_path / "parts", resume=True, log=quiet)
    full = checkpoint.load(tmp_path / "full" / "last.pt")
    parts = checkpoint.load(tmp_path / "parts" / "last.pt")
    assert full["train_state"]["step"] == parts["train_state"]["step"] == 24
    for name, tensor in full["model"].items():
        assert torch.equal(tensor, parts["model"][name]), name
    steps = [json.loads(line)["step"] for line in (tmp_path / "parts" / "log.jsonl").read_text().splitlines()]
    assert steps == sorted(steps)


def test_rate_halves_when_dev_bleu_stalls_and_the_schedule_survives_a_resume(synth_dir, tmp_path):
    """train.lr_decay=0.5 with lr_decay_patience=0: after each validation whose dev BLEU is no new
    best, the rate halves; a run stopped and resumed keeps the schedule (rates and parameters of
    the uninterrupted run)."""
    base = demo_config(synth_dir, max_steps=40, valid_every=8, log_every=4, patience=0, lr_decay=0.5,
                       lr_decay_patience=0, valid_max_sentences=20)
    base["model"].update(emb=16, enc_hidden=16, dec_hidden=16, att=16, maxout=8)
    quiet = lambda *_: None  # noqa: E731
    train(from_dict(base), tmp_path / "full", log=quiet)
    first = {**base, "train": {**base["train"], "max_steps": 24}}
    train(from_dict(first), tmp_path / "parts", log=quiet)
    train(from_dict(base), tmp_path / "parts", resume=True, log=quiet)

    def dev(run):
        entries = [json.loads(line) for line in (tmp_path / run / "log.jsonl").read_text().splitlines()]
        return [(e["step"], e["dev_bleu"], e["lr"]) for e in entries if "dev_bleu" in e]

    full = dev("full")
    assert [step for step, _, _ in full] == [8, 16, 24, 32, 40]
    assert dev("parts") == full
    best, rate = float("-inf"), base["train"]["lr"]
    for _, bleu, lr in full:
        better = bleu > (best * (1 + 1e-4) if best > 0 else best)  # ReduceLROnPlateau's "better"
        if better:
            best = bleu
        else:
            rate *= 0.5
        assert lr == pytest.approx(rate)
    assert rate < base["train"]["lr"], full  # at least one stall in these 40 updates
    a, b = checkpoint.load(tmp_path / "full" / "last.pt"), checkpoint.load(tmp_path / "parts" / "last.pt")
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name


def test_rnnencdec_trains_and_translates(synth_dir, tmp_path, capsys):
    cfg = demo_config(synth_dir, max_steps=30, valid_every=30, valid_max_sentences=20)
    cfg["model"]["arch"] = "rnnencdec"
    train(from_dict(cfg), tmp_path, log=lambda *_: None)
    translator = Translator.from_checkpoint(tmp_path / "best.pt")
    result = translator.translate(["The dog sees a cat."], SearchSettings(beam=2))[0]
    assert result.attention is None and isinstance(result.text, str)
    assert main(["plot-alignment", str(tmp_path / "best.pt"), "--sentence", "The dog.", "--out",
                 str(tmp_path / "x.png")]) == 2
    assert "no attention" in capsys.readouterr().err
