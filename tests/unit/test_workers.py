"""Worker processes (decoding/workers.py): batches searched by forked processes give the outputs,
scores and n-best lists of the search in this process, in input order, with prefixes, constraints,
refusals and shortlists mixed in; what cannot fork is refused in one line."""
from __future__ import annotations

import pytest
import torch

from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import SPECIALS, UNK, Vocab
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.model.align_head import AlignmentHead, query_size
from tests.conftest import small_model

SENTENCES = ["s1 s2 s3 s4", "s5 s6 s7 s8 s9 s10 s11", "", "s12 s13", "s14 s15 s16 s17 s18 s0 s2 s4", "s3",
             "s4 s4 s4 s9 s1", "s7 s6 s5"]


def _translator() -> Translator:
    """A small model that writes <unk> often, with an alignment head to replace them by."""
    src = TextCodec("en", "space", Vocab(SPECIALS + [f"s{i}" for i in range(19)]))
    tgt = TextCodec("fr", "space", Vocab(SPECIALS + [f"t{i}" for i in range(23)]))
    model = small_model("rnnsearch", vocab=23)
    with torch.no_grad():
        model.decoder.W_o.bias[UNK] += 3.0
    translator = Translator(model, src, tgt, from_dict({"model": {"arch": "rnnsearch"}}))
    torch.manual_seed(3)
    translator.align_head = AlignmentHead(query_size(model), model.decoder.C_o.in_features, 6).eval()
    return translator


def _nbest(translations):
    return [[(t.text, t.tokens, t.replaced, round(t.score, 4)) for t in tr.nbest] for tr in translations]


@pytest.mark.parametrize("beam", [1, 4])
def test_workers_give_the_search_of_one_process(beam):
    translator = _translator()
    translator.set_unk_replacement("copy")  # packaged in the workers too
    settings = SearchSettings(beam=beam, n_best=min(beam, 2), batch_size=2)  # 4 batches of the 7 non-blank lines
    sources = [Source(s, prefix="t3" if i == 1 else "", constraints=("t5 t6",) if i == 3 else (),
                      avoid=("t1",) if i == 4 else ()) for i, s in enumerate(SENTENCES)]
    alone = translator.translate(sources, settings)
    translator.set_workers(3)
    together = translator.translate(sources, settings)
    assert _nbest(together) == _nbest(alone)
    assert [t.text for t in together][2] == ""  # the blank line stays blank, in its place
    assert together[1].tokens[0] == "t3" and "t5 t6" in " ".join(together[3].tokens)
    assert sum(bool(t.replaced) for t in alone) >= 2  # <unk>s replaced through the head (the same way in both)


def test_refused_constraints_and_more_workers_than_batches():
    translator = _translator()
    sources = ["s1 s2", Source("s3 s4", constraints=("zz",)), "s5"]  # zz: not a target word
    translator.set_workers(8)
    with pytest.warns(UserWarning, match="line 2: not translated"):
        out = translator.translate(sources, SearchSettings(beam=3, batch_size=1))
    assert out[1].error and "zz" in out[1].error and out[0].tokens and out[2].tokens


def test_what_is_refused():
    translator = _translator()
    for n, why in ((0, "at least 1"), (-2, "at least 1")):
        with pytest.raises(UsageError, match=why):
            translator.set_workers(n)
    translator.set_workers(2)
    with pytest.raises(UsageError, match="--sample"):
        translator.translate(SENTENCES, SearchSettings(sampling={"seed": 1}))


def test_the_translate_flag(tiny_run, synth_dir, tmp_path, capsys):
    ckpt, source = str(tiny_run / "best.pt"), synth_dir / "test.en"
    assert main(["translate", ckpt, "--input", str(source), "--batch-size", "3", "--beam", "3"]) == 0
    alone = capsys.readouterr().out
    assert main(["translate", ckpt, "--input", str(source), "--batch-size", "3", "--beam", "3", "--workers", "2"]) == 0
    assert capsys.readouterr().out == alone and alone.strip()
    assert main(["translate", ckpt, "--input", str(source), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
