"""Prefix-constrained search (interactive translation): every output begins with its prefix, its
score is still the model's log-probability of the whole output, a prefix the search would have
chosen itself changes nothing, and a sentence's result depends on neither its batch nor the
other sentences' prefixes."""
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import resolved, small_model
from rnnsearch.data.batching import pad, source_batch
from rnnsearch.data.vocab import BOS, EOS, PAD
from rnnsearch.decoding.sampling import Sampling, sample
from rnnsearch.decoding.scoring import score_ids
from rnnsearch.decoding.search import beam_search, greedy, max_lengths
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source

# prefix ids: <unk> (1) and words (4-22), never <pad>, <s> or </s>
words = st.lists(st.sampled_from([1] + list(range(4, 23))), min_size=0, max_size=7)
batches = st.lists(st.tuples(st.lists(st.integers(4, 22), min_size=1, max_size=8), words), min_size=1, max_size=4)


def decode(how: str, model, src, mask, prefix, k: int):
    """Each sentence's hypotheses under greedy, beam search (n-best k) or sampling (k draws)."""
    if how == "greedy":
        return [[h] for h in greedy(model, src, mask, resolved(max_len_ratio=1.5), prefix=prefix)]
    if how == "beam":
        return beam_search(model, src, mask, resolved(beam=k, max_len_ratio=1.5, n_best=k), prefix=prefix)
    return sample(model, src, mask, resolved(n_best=k, max_len_ratio=1.5, sampling=Sampling(temperature=1.3, seed=5)),
                  prefix=prefix)


@settings(max_examples=25, deadline=None)
@given(batch=batches, seed=st.integers(0, 1000), arch=st.sampled_from(["rnnsearch", "rnnencdec"]),
       how=st.sampled_from(["greedy", "beam", "sample"]), k=st.integers(1, 4))
def test_outputs_begin_with_their_prefix_and_score_as_the_model_reads_them(batch, seed, arch, how, k):
    model = small_model(arch, seed=seed).eval()
    src, mask = source_batch([s for s, _ in batch])
    limits = max_lengths(mask, 1.5).tolist()
    found = decode(how, model, src, mask, pad([p for _, p in batch]), k)
    for (sent, prefix), hyps, limit in zip(batch, found, limits, strict=True):
        assert hyps
        for h in hyps:
            assert h.tokens[:len(prefix)] == prefix, (h.tokens, prefix)
            assert not {EOS, PAD, BOS} & set(h.tokens)
            assert len(h.tokens) + 1 <= max(limit, len(prefix) + 1)  # the limit makes room for the prefix
            assert math.isclose(h.score, score_ids(model, [sent], [h.tokens], torch.get_default_device())[0].logprob,
                                rel_tol=1e-4, abs_tol=1e-4)
            if arch == "rnnsearch":
                assert h.attention.shape == (len(h.tokens) + 1, len(sent) + 1)
        if how == "beam":
            assert len({tuple(h.tokens) for h in hyps}) == len(hyps)  # distinct hypotheses


@settings(max_examples=15, deadline=None)
@given(batch=st.lists(st.lists(st.integers(4, 22), min_size=1, max_size=8), min_size=1, max_size=4),
       seed=st.integers(0, 1000), cut=st.integers(0, 12), arch=st.sampled_from(["rnnsearch", "rnnencdec"]))
def test_a_prefix_greedy_would_choose_changes_nothing(batch, seed, cut, arch):
    """Forcing the first tokens of greedy's own output gives greedy's output; beam 1 agrees."""
    model = small_model(arch, seed=seed).eval()
    src, mask = source_batch(batch)
    free = greedy(model, src, mask, resolved(max_len_ratio=1.5))
    prefix = pad([h.tokens[:cut] for h in free]) if any(h.tokens[:cut] for h in free) else None
    forced = greedy(model, src, mask, resolved(max_len_ratio=1.5), prefix=prefix)
    beam_one = beam_search(model, src, mask, resolved(beam=1, max_len_ratio=1.5), prefix=prefix)
    for f, g, b in zip(free, forced, beam_one, strict=True):
        assert f.tokens == g.tokens == b[0].tokens
        assert math.isclose(f.score, g.score, rel_tol=1e-5, abs_tol=1e-5)
        assert math.isclose(g.score, b[0].score, rel_tol=1e-5, abs_tol=1e-5)


@settings(max_examples=10, deadline=None)
@given(batch=batches, seed=st.integers(0, 1000), beam=st.integers(1, 4))
def test_a_sentence_does_not_depend_on_its_batch_or_the_others_prefixes(batch, seed, beam):
    model = small_model("rnnsearch", seed=seed).eval()
    src, mask = source_batch([s for s, _ in batch])
    search = resolved(beam=beam, max_len_ratio=1.5, n_best=beam)
    together = beam_search(model, src, mask, search, prefix=pad([p for _, p in batch]))
    for (sent, prefix), hyps in zip(batch, together):
        alone = beam_search(model, *source_batch([sent]), search, prefix=pad([prefix]) if prefix else None)[0]
        assert [h.tokens for h in alone] == [h.tokens for h in hyps]
        assert [h.score for h in alone] == pytest.approx([h.score for h in hyps], abs=1e-4)


def test_an_all_padding_prefix_is_no_prefix():
    model = small_model("rnnsearch", seed=3).eval()
    src, mask = source_batch([[5, 6, 7], [8, 9]])
    empty = torch.full((2, 3), PAD, dtype=torch.long)
    for how in ("greedy", "beam", "sample"):
        assert ([[h.tokens for h in hs] for hs in decode(how, model, src, mask, empty, 3)]
                == [[h.tokens for h in hs] for hs in decode(how, model, src, mask, None, 3)])


def test_translator_and_cli_complete_a_prefix(tiny_run, synth_dir, tmp_path, capsys):
    """Translator.translate(prefixes=...) and `rnnsearch translate --prefix F`: each translation
    begins with its prefix (an unknown word kept as typed), a blank prefix is none, the score is
    the model's log-probability of the whole translation, and the ONNX backend agrees."""
    from rnnsearch.cli import main
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.errors import UsageError
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    sources = (synth_dir / "test.en").read_text().splitlines()[:4]
    refs = (synth_dir / "test.fr").read_text().splitlines()[:4]
    prefixes = [" ".join(refs[0].split()[:2]), "", "Zorglub", " ".join(refs[3].split()[:4])]
    found = translator.translate([Source(s, p) for s, p in zip(sources, prefixes)], SearchSettings(beam=3))
    free = translator.translate(sources, SearchSettings(beam=3))
    scores = translator.score(sources, [r.text for r in found])
    for prefix, r, s in zip(prefixes, found, scores, strict=True):
        units = translator.tgt_codec.units(prefix) if prefix else []
        assert r.tokens[:len(units)] == units and r.text.startswith(prefix)
        assert math.isclose(s.logprob, r.score, rel_tol=1e-4, abs_tol=1e-4)
    assert found[1].text == free[1].text and found[2].tokens[0] == "Zorglub"
    onnx = Translator.from_checkpoint(tiny_run / "best.pt", backend="onnx")  # the same search on ONNX graphs
    prefixed = [Source(s, p) for s, p in zip(sources, prefixes)]
    assert [r.text for r in onnx.translate(prefixed, SearchSettings(beam=3))] == [r.text for r in found]
    with pytest.raises(UsageError, match="3 prefixes for 4 sentences"):  # units: a prefix list per sentence
        translator.translate_units([translator.source_units(s) for s in sources], prefixes=[[]] * 3)
    (tmp_path / "in").write_text("\n".join(sources) + "\n")
    (tmp_path / "prefixes").write_text("\n".join(prefixes) + "\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in"), "--beam", "3",
                 "--prefix", str(tmp_path / "prefixes")]) == 0
    assert capsys.readouterr().out.splitlines() == [r.text for r in found]
    (tmp_path / "short").write_text("a\n")
    assert main(["translate", str(tiny_run / "best.pt"), "--input", str(tmp_path / "in"),
                 "--prefix", str(tmp_path / "short")]) == 2
    assert f"{tmp_path / 'short'} has 1 prefix but {tmp_path / 'in'} has 4 lines" in capsys.readouterr().err
