"""`rnnsearch report` on tiny models: files, Table 1 rows, and BLEU equal to `evaluate`'s."""
import json

import pytest

from sacrebleu.metrics import BLEU

from rnnsearch import checkpoint
from rnnsearch.cli import main
from rnnsearch.decoding.settings import SearchSettings

pytestmark = pytest.mark.slow  # end to end: whole reports


def test_report_tables_figures_and_bleu_equal_evaluate(tiny_run, synth_dir, tmp_path, capsys):
    ckpt = str(tiny_run / "best.pt")
    src, ref = str(synth_dir / "test.en"), str(synth_dir / "test.fr")
    out = tmp_path / "report"
    assert main(["report", "--model", f"RNNsearch-50={ckpt}", "--model", f"tiny={ckpt}", "--src", src,
                 "--ref", ref, "--out", str(out), "--beam", "2", "--sentence", "The big dog sees a cat ."]) == 0
    capsys.readouterr()
    assert main(["evaluate", ckpt, "--src", src, "--ref", ref, "--beam", "2", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    md = (out / "report.md").read_text()
    table1 = md.split("## Table 1")[1]
    row = next(line for line in table1.splitlines() if line.startswith("| RNNsearch-50 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"{expected['bleu']:.2f}" and cells[2] == f"{expected['bleu_no_unk']:.2f}"
    assert cells[3:] == ["26.75", "34.16"]  # the paper's numbers beside
    assert any(line.startswith("| tiny |") for line in md.splitlines())
    results = json.loads((out / "results.json").read_text())
    assert results["tiny"]["bleu"] == expected["bleu"]
    for name in ("figure2.png", "figure3_0.png", "figure3_1.png", "curves.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG", name
    assert "The big dog sees a cat ." in md and "## Long sentences" in md
    assert "## Figure 3: alignments of RNNsearch-50" in md  # the first model with attention
    hyp = (out / "RNNsearch-50.hyp.fr").read_text().splitlines()
    assert len(hyp) == len((synth_dir / "test.en").read_text().splitlines())
    refs = (synth_dir / "test.fr").read_text().splitlines()
    assert BLEU().corpus_score(hyp, [refs]).score == expected["bleu"]  # the file is what was scored
    assert (out / "tiny.hyp.fr").exists() and "`RNNsearch-50.hyp.fr`" in md
    compute = next(line for line in md.split("## Compute")[1].splitlines() if line.startswith("| tiny |"))
    state = checkpoint.load(ckpt)["train_state"]
    assert f"| {state['step']:,} | {state['epoch']} |" in compute
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 4 and "<table>" in page and "figure2.png" not in page


def test_report_names_an_unknown_figure3_model(tiny_run, synth_dir, tmp_path, capsys):
    ckpt = str(tiny_run / "best.pt")
    rc = main(["report", "--model", f"a={ckpt}", "--src", str(synth_dir / "test.en"), "--ref",
               str(synth_dir / "test.fr"), "--out", str(tmp_path / "r"), "--figure3", "b"])
    assert rc == 2 and "--figure3 'b': not one of the models (a)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before writing anything


def test_report_counts_each_models_sentences_to_its_progress(tiny_run, synth_dir, tmp_path):
    """The report's translations advance a progress callback per model (the CLI's tqdm bar), by
    every test sentence and no more."""
    import contextlib

    from rnnsearch.analysis.report import build_report
    ckpt = str(tiny_run / "best.pt")
    done: dict[str, list[int]] = {}

    @contextlib.contextmanager
    def progress(total, name):
        done[name] = [total, 0]
        yield lambda n: done[name].__setitem__(1, done[name][1] + n)

    build_report([("a", ckpt), ("b", ckpt)], synth_dir / "test.en", synth_dir / "test.fr", tmp_path / "r",
                 SearchSettings(beam=2),
                 sentence="The big dog sees a cat .", log=lambda _: None, progress=progress)
    n = len((synth_dir / "test.en").read_text().splitlines())
    assert done == {"a": [n, n], "b": [n, n]}


def test_a_system_given_by_its_output_is_a_row_scored_as_the_models(tiny_run, synth_dir, tmp_path, capsys):
    """``--output Moses=FILE`` (Moses' committed hypotheses, say): a row of Table 1 with the paper's
    Moses numbers beside, scored by sacreBLEU on the file as given, and a curve of Figure 2; a file
    of the wrong length, a missing one or a name used twice is refused in one line, before any work."""
    ckpt = str(tiny_run / "best.pt")
    src, ref = synth_dir / "test.en", synth_dir / "test.fr"
    refs = ref.read_text().splitlines()
    given = tmp_path / "moses.hyp.fr"
    given.write_text("".join(r.replace("le", "la") + "\n" for r in refs))
    out = tmp_path / "r"
    assert main(["report", "--model", f"tiny={ckpt}", "--output", f"Moses={given}", "--src", str(src),
                 "--ref", str(ref), "--out", str(out), "--beam", "1", "--long", "1"]) == 0
    md = (out / "report.md").read_text()
    row = next(line for line in md.split("## Table 1")[1].splitlines() if line.startswith("| Moses |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    expected = BLEU().corpus_score(given.read_text().splitlines(), [refs]).score
    assert cells[1] == f"{expected:.2f}" and cells[3:] == ["33.30", "35.63"]
    assert (out / "Moses.hyp.fr").read_text() == given.read_text()
    assert "Moses" in json.loads((out / "results.json").read_text())
    assert any(line.startswith("| Moses |") for line in md.split("## Figure 2")[1].splitlines())
    short = tmp_path / "short.fr"
    short.write_text("\n".join(refs[:3]) + "\n")
    for spec, message in ((f"Moses={short}", f"--output Moses={short}: 3 lines for the {len(refs)} test sentences"),
                          (f"Moses={tmp_path / 'none'}", "no such file"), (f"tiny={given}", "'tiny' names two rows")):
        rc = main(["report", "--model", f"tiny={ckpt}", "--output", spec, "--src", str(src), "--ref", str(ref),
                   "--out", str(tmp_path / "refused")])
        err = capsys.readouterr().err
        assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "refused").exists()


def test_figure3s_random_sentences_are_others_than_the_given_one(tiny_run, synth_dir):
    """On a 3-line test set the first (given) sentence was drawn again as a "random" one."""
    from rnnsearch import Translator
    from rnnsearch.analysis.report import figure3_sentences
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    codec = translator.src_codec
    fit = [s for s in (synth_dir / "test.en").read_text().splitlines()
           if 10 <= len(codec.words(s)) <= 20 and not codec.has_unk(s)][:3]
    assert len(fit) == 3
    for given in (None, fit[1]):
        picked = figure3_sentences(translator, fit * 2, given, seed=1)  # each sentence twice
        assert len(picked) == len(set(picked)) == 3, picked


def test_report_says_how_it_counts_unk_and_keep_unk_counts_as_written(tiny_run, synth_dir, tmp_path, capsys):
    """The regenerated Hansards report replaced <unk> (a release's default) where the committed one had kept
    them, and said neither."""
    ckpt = str(tiny_run / "best.pt")
    src, ref = str(synth_dir / "test.en"), str(synth_dir / "test.fr")
    for flags, said in (([], "a release replaces each `<unk>`"), (["--keep-unk"], "Outputs as written, `<unk>` included")):
        out = tmp_path / f"r{len(flags)}"
        assert main(["report", "--model", f"a={ckpt}", "--src", src, "--ref", ref, "--out", str(out), "--beam", "2",
                     *flags]) == 0
        assert said in (out / "report.md").read_text()
    capsys.readouterr()
    assert main(["evaluate", ckpt, "--src", src, "--ref", ref, "--beam", "2", "--keep-unk", "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "r1" / "results.json").read_text())["a"]["bleu"] == expected["bleu"]
