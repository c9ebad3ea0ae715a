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
from rnnsearch.decoding.unk import read_lexicon, replace
from rnnsearch.data.vocab import SPECIALS, UNK, Vocab


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
    assert table["house"] == ("maison", pytest.approx(2 / 3), 2)
    assert table["the"][0] in ("la", "le") and table["the"][2] == 1
    assert set(build_lexicon([a, b, c], min_count=2)) == {"house"}
    path = tmp_path / "lex.tsv"
    write_lexicon(table, path)
    assert read_lexicon(path) == {s: t for s, (t, _, _) in table.items()}
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
    plain = translator.translate(sentences, beam=3)
    assert sum(t.tokens.count("<unk>") for t in plain) >= 2
    translator.set_unk_replacement("copy")
    copied = translator.translate(sentences, beam=3)
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


def test_cli_lexicon_and_replace_unk(trained_run, synth_dir, tmp_path, capsys):
    ckpt = str(trained_run / "best.pt")
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
