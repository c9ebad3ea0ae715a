import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rnnsearch.analysis.evaluate import (bleu_by_length, bucket_of, corpus_bleu, corpus_chrf, format_table,
                                         score_translations)
from rnnsearch.analysis.plot import plot_alignment, plot_bleu_by_length
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import Vocab

REFS = ["Un homme fait du vélo dans la rue.", "Deux chiens jouent dans l'herbe verte.",
        "Une femme lit un livre.", "Des enfants courent sur la plage au coucher du soleil."]
HYPS = ["Un homme fait du vélo dans une rue.", "Deux chiens jouent sur l'herbe.",
        "Une femme lit un livre.", "Les enfants courent sur la plage."]


def test_bleu_and_chrf_equal_the_sacrebleu_command_line(tmp_path):
    ref, hyp = tmp_path / "ref.fr", tmp_path / "hyp.fr"
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    cli = Path(sys.executable).with_name("sacrebleu")
    out = subprocess.run([str(cli), str(ref), "-i", str(hyp), "-b", "-w", "4"], capture_output=True, text=True, check=True)
    ours, signature = corpus_bleu(HYPS, REFS)
    assert abs(ours - float(out.stdout.strip())) < 1e-4  # the CLI rounds to 4 decimals
    assert "tok:13a" in signature and "nrefs:1" in signature
    out = subprocess.run([str(cli), str(ref), "-i", str(hyp), "-m", "chrf", "-b", "-w", "4"], capture_output=True,
                         text=True, check=True)
    ours, signature = corpus_chrf(HYPS, REFS)
    assert abs(ours - float(out.stdout.strip())) < 1e-4 and 0 < ours < 100
    assert "nc:6" in signature and "nw:0" in signature


def test_buckets():
    assert bucket_of(1) == (1, 10) and bucket_of(10) == (1, 10) and bucket_of(11) == (11, 20)
    assert bucket_of(60) == (51, 60) and bucket_of(61) == (61, 0) and bucket_of(300) == (61, 0)
    rows = bleu_by_length(HYPS, REFS, [5, 15, 15, 70])
    assert [(r["bucket"], r["n"]) for r in rows] == [("1-10", 1), ("11-20", 2), (">60", 1)]
    assert (rows[-1]["lo"], rows[-1]["hi"]) == (61, None)  # no upper bound (it was 0: an empty range)
    assert rows[1]["bleu"] == pytest.approx(corpus_bleu(HYPS[1:3], REFS[1:3])[0])


def test_no_unk_subset_uses_the_vocabularies():
    src_codec = TextCodec("en", "space", Vocab(["<pad>", "<unk>", "<s>", "</s>", "a", "b"]))
    words = sorted({w for r in REFS for w in r.split()} - {"herbe"})
    tgt_codec = TextCodec("fr", "space", Vocab(["<pad>", "<unk>", "<s>", "</s>"] + words))
    srcs = ["a b", "a", "c", "b a"]  # "c" is unknown
    refs = [r for r in REFS]
    refs[1] = "Deux chiens jouent dans herbe verte."  # "herbe" unknown
    result = score_translations(HYPS, refs, srcs, src_codec, tgt_codec)
    assert result["n"] == 4 and result["n_no_unk"] == 2
    subset = corpus_bleu([HYPS[0], HYPS[3]], [refs[0], refs[3]])[0]
    assert result["bleu_no_unk"] == pytest.approx(subset)
    assert result["chrf"] == pytest.approx(corpus_chrf(HYPS, refs)[0])
    table = format_table({"m": result})
    assert "| m | " in table and "No UNK" in table and f"| m | {result['chrf']:.2f} |" in table


def test_alignment_plot(tmp_path):
    att = np.random.default_rng(0).dirichlet(np.ones(4), size=3)
    path = plot_alignment(att, ["a", "b", "c", "</s>"], ["x", "y", "</s>"], tmp_path / "a.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="does not match"):
        plot_alignment(att, ["a", "b"], ["x", "y", "</s>"], tmp_path / "b.png")


def test_bleu_by_length_plot(tmp_path):
    rows = bleu_by_length(HYPS, REFS, [5, 15, 15, 70])
    path = plot_bleu_by_length({"A": rows, "B": rows[:2]}, tmp_path / "len.png")
    assert path.stat().st_size > 1000
