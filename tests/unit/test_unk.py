"""[UNK] replacement: the attention's most attended source word (copy) or its lexicon entry (dict)."""
import numpy as np
import pytest
import torch

from conftest import small_model
from rnnsearch.analysis.force_align import Alignment
from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.decoding.translator import Translator
from rnnsearch.analysis.lexicon import build_lexicon, write_lexicon
from rnnsearch.decoding.shortlist import BEST, FREQUENT
from rnnsearch.decoding.unk import read_lexicon, replace
from rnnsearch.data.vocab import SPECIALS, UNK, Vocab
from rnnsearch.decoding.settings import SearchSettings


def test_copy_and_dict_use_the_most_attended_source_word_not_eos():
    source = ["the", "Smithers", "house", "."]
    tokens = ["la", "<unk>", "<unk>", "."]
    attention = np.full((5, 5), 0.01)
    attention[1, 1] = 0.6   # first <unk> -> "Smithers"
    attention[2, 4] = 0.9   # second <unk> peaks on </s>, which is never copied ...
    attention[2, 2] = 0.05  # ... so it takes "house"
    assert replace(tokens, source, attention, "copy") == ["la", "Smithers", "house", "."]
    assert replace(tokens, source, attention, "dict", {"house": "maison"}) == ["la", "Smithers", "maison", "."]
    assert replace(["la", "."], source, None, "copy") == ["la", "."]  # nothing to replace, no attention needed
    with pytest.raises(ValueError, match="attention"):
        replace(tokens, source, None, "copy")


def test_lexicon_counts_links_and_round_trips(tmp_path):
    a = Alignment(["the", "house"], ["la", "maison"], np.eye(2), {(0, 0), (1, 1)})
    b = Alignment(["house", "the"], ["maison", "le"], np.eye(2), {(0, 0), (1, 1)})
    c = Alignment(["house"], ["domicile"], np.eye(1), {(0, 0)})
    table = build_lexicon([a, b, c])
    assert table["house"] == [("maison", pytest.approx(2 / 3), 2)]
    assert table["the"][0][0] == "la" and table["the"][0][2] == 1  # a tie: alphabetical
    assert set(build_lexicon([a, b, c], min_count=2)) == {"house"}
    path = tmp_path / "lex.tsv"
    write_lexicon(table, path)
    assert read_lexicon(path) == {s: rows[0][0] for s, rows in table.items()}
    several = build_lexicon([a, b, c], per_source=2)
    assert several["house"] == [("maison", pytest.approx(2 / 3), 2), ("domicile", pytest.approx(1 / 3), 1)]
    write_lexicon(several, path)
    assert read_lexicon(path)["house"] == "maison"  # --replace-unk dict: the most frequent
    assert not list(tmp_path.glob("*.partial"))
    path.write_text("house\tmaison\nbroken line\n")
    with pytest.raises(ValueError, match=r"lex.tsv:2"):
        read_lexicon(path)


def _word_translator(arch="rnnsearch") -> Translator:
    src_words = [f"s{i}" for i in range(19)]
    tgt_words = [f"t{i}" for i in range(23)]
    model = small_model(arch, vocab=23)  # src 23, tgt 27 ids
    with torch.no_grad():  # make <unk> frequent in the outputs
        model.decoder.W_o.bias[UNK] += 4.0
    src = TextCodec("en", "space", Vocab(SPECIALS + src_words))
    tgt = TextCodec("fr", "space", Vocab(SPECIALS + tgt_words))
    cfg = from_dict({"model": {"arch": arch}})
    return Translator(model, src, tgt, cfg)


def test_translator_replaces_every_unk_by_its_argmax_source_word():
    translator = _word_translator()
    sentences = ["s1 s2 s3 s4", "s5 s6 s7 s8 s9 s10 s11", "s12 s13"]
    plain = translator.translate(sentences, SearchSettings(beam=3))
    assert sum(t.tokens.count("<unk>") for t in plain) >= 2
    translator.set_unk_replacement("copy")
    copied = translator.translate(sentences, SearchSettings(beam=3))
    for p, c in zip(plain, copied):
        assert len(p.tokens) == len(c.tokens) and "<unk>" not in c.tokens
        for i, (a, b) in enumerate(zip(p.tokens, c.tokens)):
            if a == "<unk>":
                assert b == p.source_tokens[int(np.argmax(p.attention[i, :-1]))]
            else:
                assert a == b
        assert c.text == " ".join(c.tokens)


def test_replacement_needs_words_attention_and_a_lexicon():
    with pytest.raises(ValueError, match="RNNencdec"):
        _word_translator("rnnencdec").set_unk_replacement("copy")
    with pytest.raises(ValueError, match="lexicon"):
        _word_translator().set_unk_replacement("dict")
    with pytest.raises(ValueError, match="copy"):
        _word_translator().set_unk_replacement("nearest")


def test_cli_lexicon_and_replace_unk(tiny_run, synth_dir, tmp_path, capsys):
    ckpt = str(tiny_run / "best.pt")
    lex = tmp_path / "lex.tsv"
    assert main(["lexicon", ckpt, "--src", str(synth_dir / "train.en"), "--tgt", str(synth_dir / "train.fr"),
                 "--out", str(lex), "--max-pairs", "200"]) == 0
    assert "from 200 pairs" in capsys.readouterr().out
    table = read_lexicon(lex)
    assert table and all(" " not in k for k in table)
    src = tmp_path / "in.en"
    src.write_text("The big Zorblax sees a cat .\n")
    for mode in (["--replace-unk", "copy"], ["--replace-unk", "dict", "--lexicon", str(lex)]):
        assert main(["translate", ckpt, "--input", str(src), *mode]) == 0
        assert "<unk>" not in capsys.readouterr().out
    assert main(["translate", ckpt, "--input", str(src), "--lexicon", str(lex)]) == 2
    assert "--replace-unk dict" in capsys.readouterr().err


def _with_a_head(translator: Translator) -> Translator:
    """``translator`` with a random alignment head over its model."""
    from rnnsearch.model.align_head import AlignmentHead, query_size
    torch.manual_seed(3)
    head = AlignmentHead(query_size(translator.model), translator.model.decoder.C_o.in_features, 6)
    with torch.no_grad():
        for p in head.parameters():
            p.normal_(0, 0.8)
    translator.align_head = head.eval()
    return translator


def test_with_an_alignment_head_the_head_says_where_each_unk_comes_from(monkeypatch):
    from rnnsearch.decoding import unk
    from rnnsearch.decoding.unk import head_rows
    translator = _with_a_head(_word_translator())
    sentences = ["s1 s2 s3 s4", "s5 s6 s7 s8 s9 s10 s11", "s12 s13"]
    plain = translator.translate(sentences, SearchSettings(beam=3))
    translator.set_unk_replacement("copy")
    replaced = translator.translate(sentences, SearchSettings(beam=3))
    differs, outputs = 0, [[translator.tgt_codec.vocab.stoi[t] for t in p.tokens] for p in plain]
    monkeypatch.setattr(unk, "HEAD_PAIRS", 2)  # the pairs read together (padded), two passes
    together = head_rows(translator, [s.split() for s in sentences], outputs)
    for text, p, r, ids, read in zip(sentences, plain, replaced, outputs, together):
        beta = head_rows(translator, [text.split()], [ids])[0]  # alone
        assert np.allclose(beta.sum(1), 1, atol=1e-5) and beta.shape == read.shape and np.allclose(beta, read, atol=1e-5)
        for i, (a, b) in enumerate(zip(p.tokens, r.tokens)):
            if a == "<unk>":
                assert b == p.source_tokens[int(np.argmax(beta[i, :-1]))]
                differs += b != p.source_tokens[int(np.argmax(p.attention[i, :-1]))]
    assert sum(t.tokens.count("<unk>") for t in plain) >= 2 and differs  # the head, not alpha, decided


def test_a_release_replaces_by_default_and_keep_unk_keeps(tiny_run, tmp_path):
    import argparse

    from rnnsearch.analysis.release import make_release
    from rnnsearch.cli.common import load_translator
    make_release(tiny_run / "best.pt", tmp_path / "tiny_release", log=lambda *_: None)
    assert Translator.from_pretrained(str(tmp_path / "tiny_release")).replace_unk == "copy"
    assert Translator.from_checkpoint(tiny_run / "best.pt").replace_unk is None  # a run's checkpoint: as written
    flags = dict(backend="torch", quantize=None, dtype="float32", device="cpu", ensemble=[], lexicon=None,
                 shortlist=None, shortlist_frequent=FREQUENT, shortlist_best=BEST,
                 replace_unk=None, keep_unk=False)
    assert load_translator(argparse.Namespace(**flags), str(tmp_path / "tiny_release")).replace_unk == "copy"
    kept = load_translator(argparse.Namespace(**{**flags, "keep_unk": True}), str(tmp_path / "tiny_release"))
    assert kept.replace_unk is None
    with pytest.raises(ValueError, match="opposite"):
        load_translator(argparse.Namespace(**{**flags, "keep_unk": True, "replace_unk": "copy"}), str(tiny_run))


def test_measuring_a_release_again_keeps_its_weights_and_gives_both_scores(tiny_run, synth_dir, tmp_path, capsys):
    import json

    from rnnsearch.analysis.evaluate import evaluate
    from rnnsearch.analysis.release import make_release, measure_release
    from rnnsearch.data.io import read_lines
    folder = tmp_path / "tiny_release"
    make_release(tiny_run / "best.pt", folder, log=lambda *_: None)
    weights = (folder / "model.pt").read_bytes()
    test = (synth_dir / "test.en", synth_dir / "test.fr")
    manifest = measure_release(folder, test, beam=2, log=lambda *_: None)
    assert (folder / "model.pt").read_bytes() == weights and json.loads((folder / "release.json").read_text()) == manifest
    u = manifest["test"]["unk_replaced"]
    assert u["mode"] == "copy" and (u["tokens"] > 0 or u["bleu_keep_unk"] == manifest["test"]["bleu"])
    again = evaluate(Translator.from_pretrained(str(folder)), read_lines(test[0]), read_lines(test[1]),
                     SearchSettings(beam=2))
    assert again["bleu"] == manifest["test"]["bleu"] and again["hypotheses"] == read_lines(folder / "test.hyp.fr")
    assert "`--keep-unk`" in (folder / "README.md").read_text()
    assert main(["release", str(tiny_run / "best.pt"), "--measure", "--src", str(test[0]), "--ref", str(test[1])]) == 2
    assert "not a release folder" in capsys.readouterr().err


def test_a_release_is_measured_as_it_translates_by_default(tiny_run, synth_dir, tmp_path):
    from rnnsearch.analysis.evaluate import evaluate
    from rnnsearch.analysis.release import make_release
    from rnnsearch.data.io import read_lines
    folder, test = tmp_path / "tiny_release", (synth_dir / "test.en", synth_dir / "test.fr")
    manifest = make_release(tiny_run / "best.pt", folder, test=test, beam=2, log=lambda *_: None)
    assert manifest["test"]["unk_replaced"]["mode"] == "copy"
    again = evaluate(Translator.from_pretrained(str(folder)), read_lines(test[0]), read_lines(test[1]),
                     SearchSettings(beam=2))
    assert again["bleu"] == manifest["test"]["bleu"] and again["hypotheses"] == read_lines(folder / "test.hyp.fr")


def test_an_ensemble_reads_the_head_of_its_first_member():
    """The head reads the states of the model it was trained over: an ensemble's first member."""
    from rnnsearch.decoding.backends import Ensemble
    from rnnsearch.decoding.markup import alignment_of
    from rnnsearch.decoding.unk import head_model, head_rows
    single = _with_a_head(_word_translator())
    other = _word_translator().model
    with torch.no_grad():
        for p in other.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    pair = Translator(Ensemble([single.model, other]), single.src_codec, single.tgt_codec, single.config)
    pair.align_head = single.align_head
    assert head_model(pair) is single.model and head_model(single) is single.model
    found = pair.translate(["s1 s2 s3 s4", "s5 s6 s7 s8 s9 s10 s11"], SearchSettings(beam=3))
    sources, outputs = [t.source_tokens[:-1] for t in found], [pair.tgt_codec.vocab.encode(t.tokens) for t in found]
    for a, b in zip(head_rows(pair, sources, outputs), head_rows(single, sources, outputs)):
        assert np.allclose(a, b)
    rows = alignment_of(pair, found[0])  # markup is placed by the head's rows, not the ensemble's attention
    assert np.allclose(rows, head_rows(single, sources[:1], outputs[:1])[0]) and not np.allclose(rows, found[0].attention)
