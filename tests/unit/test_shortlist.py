"""Lexical shortlists (decoding/shortlist.py, model/shortlist.py): with the whole vocabulary on the
list the search is the full search; with a short list every output word is a candidate of its own
sentence, a sentence's output does not depend on the sentences batched with it, prefixes and
constraints stay reachable; the flags of translate and serve, and what is refused."""
from __future__ import annotations

import pytest
import torch

from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.data.io import DataError
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import SPECIALS, Vocab
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.shortlist import ShortlistTable
from rnnsearch.decoding.source import Source
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from tests.conftest import small_model

SRC_WORDS = [f"s{i}" for i in range(19)]
TGT_WORDS = [f"t{i}" for i in range(23)]
SOURCES = ["The tired table calls the pretty letter without a white chair.", "A big strong table finds the big houses.",
           "A old blue hat takes a hat on some old chairs."]
SENTENCES = ["s1 s2 s3 s4", "s5 s6 s7 s8 s9 s10 s11", "s12 s13", "s14 s15 s16 s17 s18 s0 s2 s4"]


def _translator(arch: str = "rnnsearch") -> Translator:
    src = TextCodec("en", "space", Vocab(SPECIALS + SRC_WORDS))
    tgt = TextCodec("fr", "space", Vocab(SPECIALS + TGT_WORDS))
    return Translator(small_model(arch, vocab=23), src, tgt, from_dict({"model": {"arch": arch}}))


def _lexicon(path, per_source: int = 2) -> None:
    """s_i -> t_(i+k) for k < per_source: a list of a few words per source word."""
    lines = [f"s{i}\tt{(i + k) % 23}\t0.5\t3" for i in range(19) for k in range(per_source)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _outputs(translations):
    return [[t.tokens for t in tr.nbest] for tr in translations]


def _scores(translations):
    return [t.score for tr in translations for t in tr.nbest]


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
@pytest.mark.parametrize("beam", [1, 4])
def test_the_whole_vocabulary_as_the_list_is_the_full_search(arch, beam, tmp_path):
    translator = _translator(arch)
    settings = SearchSettings(beam=beam, n_best=min(beam, 3))
    full = translator.translate(SENTENCES, settings)
    _lexicon(tmp_path / "lex.tsv")
    vocab = len(translator.tgt_codec.vocab)
    translator.set_shortlist(ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab,
                                                 translator.tgt_codec.vocab, frequent=vocab))
    listed = translator.translate(SENTENCES, settings)
    assert [[t.tokens for t in tr.nbest] for tr in listed] == [[t.tokens for t in tr.nbest] for tr in full]
    for a, b in zip(listed, full):
        assert [t.score for t in a.nbest] == pytest.approx([t.score for t in b.nbest], abs=1e-5)


def test_every_output_word_is_a_candidate_of_its_own_sentence(tmp_path):
    translator = _translator()
    _lexicon(tmp_path / "lex.tsv")
    table = ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab, translator.tgt_codec.vocab,
                                frequent=2, best=2)
    translator.set_shortlist(table)
    for tr in translator.translate(SENTENCES, SearchSettings(beam=4, n_best=4)):
        sources = [int(w[1:]) for w in tr.source_tokens[:-1]]
        allowed = {f"t{(i + k) % 23}" for i in sources for k in range(2)} | {"t0", "t1", "<unk>"}
        for hyp in tr.nbest:
            assert set(hyp.tokens) <= allowed, (tr.source_tokens, hyp.tokens)
    ids, member = table.candidates(torch.tensor([[5, 6, 0]]), torch.tensor([[True, True, False]]))
    assert ids.tolist() == sorted(ids.tolist()) and member.all()  # one sentence: its own list is the batch's
    assert ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]  # the specials, t0 t1, and s1 s2's t1 t2 t3


def test_a_sentence_translates_the_same_alone_and_in_any_batch(tmp_path):
    translator = _translator()
    _lexicon(tmp_path / "lex.tsv", per_source=3)
    translator.set_shortlist(ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab,
                                                 translator.tgt_codec.vocab, frequent=1, best=3))
    settings = SearchSettings(beam=3, n_best=2)
    together = translator.translate(SENTENCES, settings)
    alone = [translator.translate([s], settings)[0] for s in SENTENCES]
    in_pairs = translator.translate(SENTENCES, SearchSettings(beam=3, n_best=2, batch_size=2))
    for other in (together, in_pairs):
        assert _outputs(other) == _outputs(alone)
        assert _scores(other) == pytest.approx(_scores(alone), abs=1e-4)


def test_prefix_and_constraints_are_candidates_whatever_the_lexicon(tmp_path):
    translator = _translator()
    (tmp_path / "lex.tsv").write_text("s1\tt5\n", encoding="utf-8")
    translator.set_shortlist(ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab,
                                                 translator.tgt_codec.vocab, frequent=0))
    out = translator.translate([Source("s1 s2", prefix="t20"), Source("s3 s4", constraints=["t21 t22"])],
                               SearchSettings(beam=3))
    assert out[0].tokens[0] == "t20" and set(out[0].tokens) <= {"t20", "t5", "<unk>"}
    assert "t21 t22" in " ".join(out[1].tokens) and out[1].constraints_met


def test_what_a_shortlist_refuses(tmp_path):
    translator = _translator()
    (tmp_path / "bad.tsv").write_text("s1\tt5\nonly-one-field\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.tsv:2"):
        ShortlistTable.read(tmp_path / "bad.tsv", translator.src_codec.vocab, translator.tgt_codec.vocab)
    with pytest.raises(DataError, match="at least 0"):
        ShortlistTable.read(tmp_path / "bad.tsv", translator.src_codec.vocab, translator.tgt_codec.vocab, frequent=-1)
    _lexicon(tmp_path / "lex.tsv")
    table = ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab, translator.tgt_codec.vocab)
    from rnnsearch.decoding.backends import Ensemble
    translator.model = Ensemble([translator.model, small_model(vocab=23, seed=1)])
    with pytest.raises(UsageError, match="without --ensemble"):
        translator.set_shortlist(table)


def test_an_int8_model_takes_a_shortlist(tiny_run, tmp_path):
    """Its W_o's int8 rows in the same int8 product: every word listed gives the int8 model's own
    output; a short list, output words from it only."""
    translator = Translator.from_pretrained(tiny_run / "best.pt", quantize="int8")
    vocab = translator.tgt_codec.vocab
    rows = [f"{w}\t{vocab.itos[10 + i % 50]}" for i, w in enumerate(translator.src_codec.vocab.itos[4:])]
    (tmp_path / "lex.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    settings = SearchSettings(beam=3, n_best=2)
    full = translator.translate(SOURCES, settings)
    translator.set_shortlist(ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab, vocab,
                                                 frequent=len(vocab)))
    listed = translator.translate(SOURCES, settings)
    assert _outputs(listed) == _outputs(full) and _scores(listed) == pytest.approx(_scores(full), abs=1e-5)
    translator.set_shortlist(ShortlistTable.read(tmp_path / "lex.tsv", translator.src_codec.vocab, vocab, frequent=6))
    for out in translator.translate(SOURCES, settings):
        sources = translator.src_codec.vocab.encode(out.source_tokens[:-1])
        allowed = set(vocab.itos[:10]) | {vocab.itos[10 + (i - 4) % 50] for i in sources}
        assert out.tokens and all(set(h.tokens) <= allowed for h in out.nbest)


def test_translate_and_evaluate_flags(tiny_run, synth_dir, tmp_path, capsys):
    """--shortlist on the command line: a lexicon from `rnnsearch lexicon --per-source`; the flags
    refused where they cannot act, in one line."""
    ckpt = str(tiny_run / "best.pt")
    lexicon = tmp_path / "lex.tsv"
    assert main(["lexicon", ckpt, "--src", str(synth_dir / "train.en"), "--tgt", str(synth_dir / "train.fr"),
                 "--max-pairs", "300", "--per-source", "5", "--out", str(lexicon)]) == 0
    rows = [line.split("\t") for line in lexicon.read_text(encoding="utf-8").splitlines()]
    assert max(sum(r[0] == s for r in rows) for s in {r[0] for r in rows}) > 1  # several per source word
    source = tmp_path / "in.en"
    source.write_text("The tired table calls the pretty letter without a white chair.\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["translate", ckpt, "--input", str(source)]) == 0
    full = capsys.readouterr().out
    assert main(["translate", ckpt, "--input", str(source), "--shortlist", str(lexicon),
                 "--shortlist-frequent", "4000"]) == 0
    assert capsys.readouterr().out == full  # the whole target vocabulary (146 ids) on the list
    assert main(["translate", ckpt, "--input", str(source), "--shortlist", str(lexicon),
                 "--shortlist-frequent", "10", "--shortlist-best", "3"]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["translate", ckpt, "--input", str(source), "--shortlist-best", "3"]) == 2
    assert "go with --shortlist LEXICON" in capsys.readouterr().err
    assert main(["translate", ckpt, "--input", str(source), "--shortlist", str(lexicon), "--dtype", "bf16"]) == 2
    assert "not --dtype bf16" in capsys.readouterr().err
    assert main(["evaluate", ckpt, "--src", str(source), "--ref", str(source), "--shortlist",
                 str(tmp_path / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err


def test_a_lexicon_from_another_aligners_links(tiny_run, tmp_path, capsys):
    """`lexicon --links`: counts the given links of the words the model reads, each source word's
    targets most frequent first; a count or a link that does not fit is one line naming the file."""
    ckpt = str(tiny_run / "best.pt")
    (tmp_path / "s.en").write_text("The dog sees a cat .\nThe cat sees a dog .\nA dog .\n", encoding="utf-8")
    (tmp_path / "s.fr").write_text("Le chien voit un chat .\nLe chat voit un chien .\nUn chien .\n", encoding="utf-8")
    links = tmp_path / "links"
    links.write_text("0-0 1-1 2-2 3-3 4-4 5-5\n0-0 1-1 2-2 3-3 4-4 5-5\n0-0 1-1 1-0 2-2\n", encoding="utf-8")
    out = tmp_path / "lex.tsv"
    flags = ["lexicon", ckpt, "--src", str(tmp_path / "s.en"), "--tgt", str(tmp_path / "s.fr"), "--out", str(out)]
    assert main([*flags, "--links", str(links), "--per-source", "2"]) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r[1], r[3]) for r in rows if r[0] == "dog"] == [("chien", "3"), ("Un", "1")]
    assert [r[1] for r in rows if r[0] == "."] == ["."]
    assert [(r[1], r[3]) for r in rows if r[0] == "A"] == [("Un", "1")]
    assert [(r[1], r[3]) for r in rows if r[0] == "cat"] == [("chat", "2")]
    capsys.readouterr()
    links.write_text("0-0\n0-0\n", encoding="utf-8")
    assert main([*flags, "--links", str(links)]) == 2
    assert "2 lines of links for 3 sentence pairs" in capsys.readouterr().err
    links.write_text("0-0\n0-0\n3-0\n", encoding="utf-8")
    assert main([*flags, "--links", str(links)]) == 2
    assert "links:3: link 3-0 is outside the pair's 3 source and 3 target words" in capsys.readouterr().err
