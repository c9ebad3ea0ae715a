"""AER arithmetic (Och & Ney 2003) on hand-made cases, Pharaoh and WPT readers, the CLI."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import DEVICE
from rnnsearch.analysis.links import (alignment_error_rate, format_pharaoh, link_misses, parse_pharaoh,
                                      read_pharaoh, read_wpt_gold)
from rnnsearch.cli import main
from rnnsearch.data.io import DataError



def test_perfect_and_disjoint_alignments():
    gold = [({(0, 0), (1, 1)}, {(0, 0), (1, 1)})]
    assert alignment_error_rate([{(0, 0), (1, 1)}], gold) == pytest.approx(
        {"aer": 0.0, "precision": 1.0, "recall": 1.0, "sentences": 1, "predicted_links": 2, "sure_links": 2})
    r = alignment_error_rate([{(0, 1), (1, 0)}], gold)
    assert (r["aer"], r["precision"], r["recall"]) == (1.0, 0.0, 0.0)


def test_possible_links_count_for_precision_only():
    # S = {(0,0)}, P = S + {(1,2)}; A = {(0,0), (1,2), (2,2)}
    gold = [({(0, 0)}, {(1, 2)})]
    r = alignment_error_rate([{(0, 0), (1, 2), (2, 2)}], gold)
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == 1.0
    assert r["aer"] == pytest.approx(1 - (1 + 2) / (3 + 1))


def test_possible_only_gold_and_empty_alignments():
    possible_only = [(set(), {(0, 0), (1, 1)})]
    r = alignment_error_rate([{(0, 0)}], possible_only)
    assert (r["precision"], r["recall"], r["aer"]) == (1.0, 1.0, pytest.approx(1 - 1 / 1))
    r = alignment_error_rate([set()], [({(0, 0)}, set())])
    assert (r["precision"], r["recall"], r["aer"]) == (1.0, 0.0, 1.0)
    r = alignment_error_rate([set()], [(set(), set())])
    assert (r["precision"], r["recall"], r["aer"]) == (1.0, 1.0, 0.0)


def test_counts_are_summed_over_the_corpus_not_averaged():
    gold = [({(0, 0)}, set()), ({(0, 0), (1, 1), (2, 2)}, set())]
    r = alignment_error_rate([{(0, 0)}, {(0, 0)}], gold)
    assert r["recall"] == pytest.approx(2 / 4) and r["aer"] == pytest.approx(1 - 4 / 6)


def test_pharaoh_round_trip_and_errors(tmp_path):
    links = {(3, 1), (0, 0), (2, 5)}
    assert parse_pharaoh(format_pharaoh(links)) == links
    assert format_pharaoh(links) == "0-0 2-5 3-1"
    f = tmp_path / "a.pharaoh"
    f.write_text("0-0 1-2\n\n2-1\n")
    assert read_pharaoh(f) == [{(0, 0), (1, 2)}, set(), {(2, 1)}]
    assert read_pharaoh(f, reverse=True)[0] == {(0, 0), (2, 1)}
    f.write_text("0-0\n1p2\n")
    with pytest.raises(DataError, match=r"a.pharaoh:2: '1p2' is not a Pharaoh link"):
        read_pharaoh(f)


def test_wpt_gold_is_read_as_it_is(tmp_path):
    f = tmp_path / "g"
    f.write_text("1-1 2p3 3-2\n")
    assert read_wpt_gold(f) == [({(0, 0), (2, 1)}, {(0, 0), (1, 2), (2, 1)})]
    f.write_text("0-1\n")
    with pytest.raises(DataError, match="g:1: '0-1' is not a WPT link"):
        read_wpt_gold(f)


def test_the_shared_wpt_gold_set_and_the_cli(tmp_path, capsys):
    from pathlib import Path
    gold_path = Path(__file__).resolve().parents[3] / "shared/data/alignment/hansards_enfr/test.gold"
    if not gold_path.exists():
        pytest.skip("../shared/data is not beside the repository")
    gold = read_wpt_gold(gold_path)
    assert len(gold) == 447 and all(sure <= possible for sure, possible in gold)
    sure_as_pharaoh = tmp_path / "sure.pharaoh"
    sure_as_pharaoh.write_text("".join(format_pharaoh(s) + "\n" for s, _ in gold))
    assert main(["aer", "--pred", str(sure_as_pharaoh), "--gold", str(gold_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"aer": 0.0, "precision": 1.0, "recall": 1.0}
    diagonal = tmp_path / "diag.pharaoh"
    diagonal.write_text("".join(format_pharaoh({(i, i) for i in range(5)}) + "\n" for _ in gold))
    assert main(["aer", "--pred", str(diagonal), "--gold", str(gold_path)]) == 0
    assert capsys.readouterr().out.startswith("AER 0.")


def test_merge_sums_source_pieces_and_averages_target_pieces():
    from rnnsearch.analysis.force_align import hard_links, merge
    import numpy as np
    # target units: t0 (word 0), t1 t2 (word 1); source units: s0 s1 (word 0), s2 (word 1)
    attention = np.array([[0.2, 0.3, 0.5],
                          [0.6, 0.3, 0.1],
                          [0.1, 0.1, 0.8]])
    soft = merge(attention, [(0,), (0,), (1,)], [(0,), (1,), (1,)], 2, 2)
    np.testing.assert_allclose(soft, [[0.5, 0.5], [(0.9 + 0.2) / 2, (0.1 + 0.8) / 2]])
    np.testing.assert_allclose(soft.sum(1), 1.0)
    assert hard_links(soft) == {(0, 0), (0, 1)}


def test_align_puts_links_where_attention_peaks(tiny_run, synth_dir, tmp_path, capsys):
    import numpy as np
    import torch
    from rnnsearch.analysis.force_align import force_align, group_units
    from rnnsearch.analysis.gold_text import as_written
    from rnnsearch.decoding.translator import Translator
    translator = Translator.from_checkpoint(tiny_run / "best.pt", device=DEVICE)
    src = (synth_dir / "test.en").read_text().splitlines()[:6]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:6]
    alignments = force_align(translator, list(zip(src, tgt)))
    for (s, t), a in zip(zip(src, tgt), alignments):
        su, _ = group_units(translator.src_codec, as_written(s.split()))
        tu, _ = group_units(translator.tgt_codec, as_written(t.split()))
        batch_src = torch.tensor([translator.src_codec.vocab.encode(su) + [3]])
        tgt_in = torch.tensor([[2] + translator.tgt_codec.vocab.encode(tu)])
        with torch.no_grad():
            _, alphas = translator.model(batch_src, batch_src != 0, tgt_in)
        unit_attention = alphas[0, : len(tu), : len(su)].cpu().numpy()
        if len(su) == len(s.split()) and len(tu) == len(t.split()):  # one unit per word
            np.testing.assert_allclose(a.soft, unit_attention, atol=1e-6)
        assert a.links == {(int(a.soft[j].argmax()), j) for j in range(len(t.split()))}
        assert a.soft.shape == (len(t.split()), len(s.split()))
    pairs = tmp_path / "pairs"
    pairs.write_text("".join(f"{s} ||| {t}\n" for s, t in zip(src, tgt)))
    gold = tmp_path / "gold"
    gold.write_text("".join(" ".join(f"{i + 1}-{j + 1}" for i, j in sorted(a.links)) + "\n" for a in alignments))
    out = tmp_path / "links.pharaoh"
    assert main(["align", str(tiny_run / "best.pt"), "--pairs", str(pairs), "--out", str(out),
                 "--gold", str(gold)]) == 0
    assert json.loads(capsys.readouterr().out) == {"aer": 0.0, "precision": 1.0, "recall": 1.0}
    assert read_pharaoh(out) == [a.links for a in alignments]
    # --natural: the model reads other words, the links stay on the given ones (one per target word)
    assert main(["align", str(tiny_run / "best.pt"), "--pairs", str(pairs), "--out", str(out), "--natural"]) == 0
    for links, (s, t) in zip(read_pharaoh(out), zip(src, tgt)):
        assert sorted(j for _, j in links) == list(range(len(t.split())))
        assert all(0 <= i < len(s.split()) for i, _ in links)


def test_grow_diag_final_and():
    from rnnsearch.analysis.links import grow_diag_final_and
    forward = {(0, 0), (1, 1), (2, 1)}
    reverse = {(0, 0), (1, 1), (3, 3)}
    # intersection {(0,0),(1,1)}; (2,1) neighbours (1,1) and aligns the unaligned source word 2;
    # (3,3) is added by final-and (both words unaligned)
    assert grow_diag_final_and(forward, reverse) == {(0, 0), (1, 1), (2, 1), (3, 3)}
    # a union link far from the intersection, whose words are aligned already, stays out
    assert grow_diag_final_and({(0, 0), (1, 1)}, {(0, 0), (1, 1), (0, 1)}) == {(0, 0), (1, 1)}
    assert grow_diag_final_and(set(), set()) == set()
    assert grow_diag_final_and({(0, 1)}, set()) == {(0, 1)}


LINKS = st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=20)


@given(LINKS, LINKS)
def test_the_symmetrisations_nest_between_intersection_and_union(forward, reverse):
    """Koehn's heuristics only add union links to the intersection: intersection <= grow-diag <=
    grow-diag-final(-and) <= union (the two finals add greedily, so neither need hold the other)."""
    from rnnsearch.analysis.links import SYMMETRIZATIONS, symmetrize
    got = {m: symmetrize(forward, reverse, m) for m in SYMMETRIZATIONS}
    assert got["intersection"] == forward & reverse and got["union"] == forward | reverse
    assert got["intersection"] <= got["grow-diag"]
    assert got["grow-diag"] <= got["grow-diag-final-and"] <= got["union"]
    assert got["grow-diag"] <= got["grow-diag-final"] <= got["union"]
    assert symmetrize(reverse, forward, "grow-diag") == got["grow-diag"]  # depends on the two sets only
    for s, t in got["grow-diag-final-and"] - got["grow-diag"]:  # final-and: both words were unaligned
        assert all(a[0] != s and a[1] != t for a in got["grow-diag"])
    for s, t in got["grow-diag-final"] - got["grow-diag"]:  # final: one of them was
        assert all(a[0] != s for a in got["grow-diag"]) or all(a[1] != t for a in got["grow-diag"])


def test_align_symmetrises_with_a_reverse_model(tiny_run, synth_dir, tmp_path):
    """--reverse-model: the reverse model aligns (target, source) pairs; its links, flipped, are
    combined with the forward ones (here the same model read backwards stands in for a Fr->En one)."""
    from rnnsearch.analysis.force_align import force_align
    from rnnsearch.analysis.links import symmetrize
    from rnnsearch.decoding.translator import Translator
    translator = Translator.from_checkpoint(tiny_run / "best.pt")
    src = (synth_dir / "test.en").read_text().splitlines()[:6]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:6]
    forward = force_align(translator, list(zip(src, tgt)))
    backward = force_align(translator, list(zip(tgt, src)))
    (tmp_path / "s").write_text("".join(x + "\n" for x in src))
    (tmp_path / "t").write_text("".join(x + "\n" for x in tgt))
    for method in ("intersection", "grow-diag-final"):
        out = tmp_path / f"{method}.pharaoh"
        assert main(["align", str(tiny_run / "best.pt"), "--src", str(tmp_path / "s"), "--tgt", str(tmp_path / "t"),
                     "--reverse-model", str(tiny_run / "best.pt"), "--symmetrize", method, "--out", str(out)]) == 0
        expected = [symmetrize(f.links, {(s, t) for t, s in b.links}, method) for f, b in zip(forward, backward)]
        assert read_pharaoh(out) == expected
    # soft: links read from the product of the two soft alignments, here both ways of reading it
    out = tmp_path / "soft.pharaoh"
    assert main(["align", str(tiny_run / "best.pt"), "--src", str(tmp_path / "s"), "--tgt", str(tmp_path / "t"),
                 "--reverse-model", str(tiny_run / "best.pt"), "--symmetrize", "soft", "--extract", "grow-diag",
                 "--out", str(out)]) == 0
    for links, f, b in zip(read_pharaoh(out), forward, backward, strict=True):
        product = f.soft * b.soft.T
        rows = {(int(s), t) for t, s in enumerate(product.argmax(1))}
        columns = {(s, int(t)) for s, t in enumerate(product.argmax(0))}
        assert links == symmetrize(rows, columns, "grow-diag")


def test_hard_links_threshold_adds_every_heavy_source_word():
    import numpy as np
    from rnnsearch.analysis.force_align import hard_links
    soft = np.array([[0.5, 0.4, 0.1], [0.05, 0.05, 0.9]])
    assert hard_links(soft) == {(0, 0), (2, 1)}
    assert hard_links(soft, threshold=0.3) == {(0, 0), (1, 0), (2, 1)}
    assert hard_links(np.zeros((0, 3)), threshold=0.3) == set()


def test_hard_links_extract_rows_columns_or_both():
    import numpy as np
    from rnnsearch.analysis.force_align import hard_links
    from rnnsearch.errors import UsageError
    # target word 1 attends most to source 2; source 1 is attended most by target 0
    soft = np.array([[0.5, 0.4, 0.1], [0.05, 0.05, 0.9]])
    assert hard_links(soft, extract="columns") == {(0, 0), (1, 0), (2, 1)}
    assert hard_links(soft, extract="intersection") == {(0, 0), (2, 1)}
    assert hard_links(soft, extract="grow-diag") == {(0, 0), (1, 0), (2, 1)}
    assert hard_links(np.zeros((0, 3)), extract="columns") == set()
    with pytest.raises(UsageError, match="extract must be one of"):
        hard_links(soft, extract="diagonal")


def test_the_align_command_offers_every_extraction_and_combination():
    """The CLI spells its choices out (registering imports no torch); they are the library's."""
    import argparse
    from rnnsearch.analysis.force_align import COMBINATIONS, EXTRACTIONS
    from rnnsearch.cli.analysis import register
    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    actions = {a.dest: a for a in sub.choices["align"]._actions}
    assert tuple(actions["extract"].choices) == EXTRACTIONS
    assert tuple(actions["symmetrize"].choices) == COMBINATIONS


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_extracted_links_cover_their_side_and_nest(n_tgt, n_src, seed):
    """rows link every target word once, columns every source word once; their symmetrisations
    lie between the two's intersection and union."""
    import numpy as np
    from rnnsearch.analysis.force_align import EXTRACTIONS, hard_links
    soft = np.random.default_rng(seed).dirichlet(np.ones(n_src), size=n_tgt)  # (target words, source words)
    argmaxes = [e for e in EXTRACTIONS if e != "threshold"]  # "threshold" reads weights (next test)
    got = {e: hard_links(soft, extract=e) for e in argmaxes}
    assert sorted(t for _, t in got["rows"]) == list(range(n_tgt))
    assert sorted(s for s, _ in got["columns"]) == list(range(n_src))
    for e in argmaxes:
        assert got["intersection"] <= got[e] <= got["union"]
    assert all(soft[t, s] == soft[t].max() for s, t in got["rows"])
    assert all(soft[t, s] == soft[:, s].max() for s, t in got["columns"])


@given(st.integers(1, 6), st.integers(1, 6), st.floats(0.05, 0.95), st.integers(0, 2**32 - 1))
def test_threshold_extraction_links_the_weights_at_or_above_it_and_nothing_else(n_tgt, n_src, threshold, seed):
    """--extract threshold: exactly the weights >= W (the rows' argmax plus them is a superset); over
    the soft product of two directions with W > 1/2 each direction's weight is over 1/2, its argmax,
    so the links lie in the two directions' intersection."""
    import numpy as np
    from rnnsearch.analysis.force_align import Alignment, combine, hard_links
    rng = np.random.default_rng(seed)
    forward = rng.dirichlet(np.full(n_src, 0.3), size=n_tgt)  # (target words, source words), peaked rows
    backward = rng.dirichlet(np.full(n_tgt, 0.3), size=n_src)  # (source words, target words): the other model's
    got = hard_links(forward, threshold, "threshold")
    assert got == {(s, t) for t in range(n_tgt) for s in range(n_src) if forward[t, s] >= threshold}
    assert got <= hard_links(forward, threshold, "rows")
    one = [Alignment(["s"] * n_src, ["t"] * n_tgt, forward, hard_links(forward))]
    other = [Alignment(["t"] * n_tgt, ["s"] * n_src, backward, hard_links(backward))]
    product = combine(one, other, "soft", threshold, "threshold")[0]
    np.testing.assert_allclose(product.soft, forward * backward.T)
    assert product.links == {(s, t) for t, s in zip(*np.nonzero(forward * backward.T >= threshold))}
    if threshold > 0.5:
        assert product.links <= combine(one, other, "intersection")[0].links


def test_threshold_extraction_needs_a_threshold_and_no_balance():
    import numpy as np
    from rnnsearch.analysis.force_align import hard_links
    from rnnsearch.errors import UsageError
    soft = np.array([[0.7, 0.3], [0.2, 0.8]])
    for kwargs in ({}, {"threshold": 0.5, "balance": 3}):
        with pytest.raises(UsageError, match="give --threshold W and no --balance"):
            hard_links(soft, extract="threshold", **kwargs)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_sinkhorn_balances_rows_and_columns_and_keeps_the_words_order_free(n_tgt, n_src, seed):
    """Balanced: columns sum to T/S after every iteration, the rows' distance from 1 never grows with
    more iterations, and a matrix whose weights are not near zero has its rows at 1 within 200 (one
    with a weight near zero may need far more: the rate of Sinkhorn's iterations falls with the ratio
    of the largest weight to the smallest); renumbering the words renumbers the result."""
    import numpy as np
    from rnnsearch.analysis.force_align import hard_links, sinkhorn
    rng = np.random.default_rng(seed)
    soft = rng.dirichlet(np.ones(n_src + 1), size=n_tgt)[:, :n_src]  # rows sum below 1, as without </s>
    errors = []
    for iterations in (50, 200, 800):
        balanced = sinkhorn(soft, iterations)
        np.testing.assert_allclose(balanced.sum(0), n_tgt / n_src, rtol=1e-6)
        errors.append(np.abs(balanced.sum(1) - 1).sum())
    assert errors[1] <= errors[0] + 1e-9 and errors[2] <= errors[1] + 1e-9
    even = 0.5 * soft + 0.5 / (n_src + 1)  # every weight at least 1 / (2 (S + 1))
    np.testing.assert_allclose(sinkhorn(even, 200).sum(1), 1.0, rtol=1e-3)
    rows, cols = rng.permutation(n_tgt), rng.permutation(n_src)
    np.testing.assert_allclose(sinkhorn(soft[rows][:, cols], 3), sinkhorn(soft, 3)[rows][:, cols])
    assert hard_links(soft, balance=0) == hard_links(soft)
    assert hard_links(soft, extract="grow-diag", balance=3) == hard_links(sinkhorn(soft, 3), extract="grow-diag")


def test_balance_moves_links_to_the_words_attention_neglects():
    """Two target words both attend most to source 0; balanced, the second goes to source 1, which
    only it gives weight to."""
    import numpy as np
    from rnnsearch.analysis.force_align import hard_links
    from rnnsearch.errors import UsageError
    soft = np.array([[0.9, 0.1], [0.6, 0.4]])
    assert hard_links(soft) == {(0, 0), (0, 1)}
    assert hard_links(soft, balance=10) == {(0, 0), (1, 1)}
    with pytest.raises(UsageError, match="Sinkhorn"):
        hard_links(soft, balance=-1)


def test_link_misses_add_up_and_measure_the_distance_to_the_gold():
    gold = [({(0, 0)}, {(0, 0), (3, 1)}), (set(), set())]
    words = [["a", "b", "c"], ["a"]]
    predicted = [{(0, 0), (1, 1), (2, 2)}, {(4, 0)}]  # hit; 2 from (3, 1); t=2 and the second unaligned
    misses = link_misses(predicted, gold, words)
    assert misses["links"] == 4 and misses["missed"] == 3
    assert misses[1] + misses[2] + misses["3+"] + misses["unaligned"] == misses["missed"]
    assert (misses[2], misses["unaligned"]) == (1, 2)
    assert misses["by_word"] == {"a": [2, 1], "b": [1, 1], "c": [1, 1]}
    r = alignment_error_rate(predicted, gold)
    assert r["precision"] == pytest.approx(1 - misses["missed"] / misses["links"])


def test_align_reads_the_posterior_with_posterior(tiny_run, synth_dir, tmp_path):
    """--posterior: each target word's links come from the posterior of its alignment (the model's
    alignment_posterior on the same batch), not from alpha; it takes no shift."""
    import numpy as np
    import torch
    from rnnsearch.analysis.force_align import force_align, group_units, hard_links, merge
    from rnnsearch.analysis.gold_text import as_written
    from rnnsearch.data.batching import make_batch
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.errors import UsageError
    translator = Translator.from_checkpoint(tiny_run / "best.pt", device=DEVICE)
    src = (synth_dir / "test.en").read_text().splitlines()[:5]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:5]
    (tmp_path / "s").write_text("".join(x + "\n" for x in src))
    (tmp_path / "t").write_text("".join(x + "\n" for x in tgt))
    out = tmp_path / "posterior.pharaoh"
    assert main(["align", str(tiny_run / "best.pt"), "--src", str(tmp_path / "s"), "--tgt", str(tmp_path / "t"),
                 "--posterior", "--extract", "grow-diag", "--out", str(out)]) == 0
    posterior = force_align(translator, list(zip(src, tgt)), reading="posterior")
    assert read_pharaoh(out) == [hard_links(a.soft, extract="grow-diag") for a in posterior]
    codec_s, codec_t = translator.src_codec, translator.tgt_codec
    for (s, t), a in zip(zip(src, tgt), posterior):  # the model's posterior over units, merged into words
        su, so = group_units(codec_s, as_written(s.split()))
        tu, to = group_units(codec_t, as_written(t.split()))
        b = make_batch([codec_s.vocab.encode(su)], [codec_t.vocab.encode(tu)])
        with torch.no_grad():
            alphas, q = translator.model.alignment_posterior(b.src, b.src_mask, b.tgt_in, b.tgt_out)
        want = merge(q[0, : len(tu), : len(su)].cpu().numpy(), so, to, len(s.split()), len(t.split()))
        # atol: float32 sums in the order the device's kernels choose for the batch's shape (the
        # batch of force_align against this one-pair batch): 2.4e-5 seen on an H200
        np.testing.assert_allclose(a.soft, want, atol=1e-5 if DEVICE == "cpu" else 1e-4)
        assert not np.allclose(q.cpu().numpy(), alphas.cpu().numpy(), atol=1e-3)  # not the attention itself
    with pytest.raises(UsageError, match="takes no shift"):
        force_align(translator, list(zip(src, tgt)), reading="posterior", shift=1)


def test_align_refuses_threshold_extraction_without_a_threshold_before_reading_anything(tmp_path, capsys):
    """One line, exit 2, before the (here missing) model and pairs are opened."""
    from rnnsearch.cli import main
    for extra in ([], ["--threshold", "0.2", "--balance", "3"]):
        assert main(["align", str(tmp_path / "missing.pt"), "--pairs", str(tmp_path / "missing"),
                     "--extract", "threshold"] + extra) == 2
        err = capsys.readouterr().err.strip()
        assert "give --threshold W and no --balance" in err and "\n" not in err and "missing" not in err


def test_align_flip_reads_pairs_written_the_other_way(tiny_run, synth_dir, tmp_path, capsys):
    """--flip: a file of 'target ||| source' pairs (and gold links target-source) gives the model's
    links turned round, the soft weights transposed, and the AER of those against the flipped gold."""
    import json

    import numpy as np
    src = (synth_dir / "test.en").read_text().splitlines()[:5]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:5]
    (tmp_path / "st").write_text("".join(f"{s} ||| {t}\n" for s, t in zip(src, tgt)))
    (tmp_path / "ts").write_text("".join(f"{t} ||| {s}\n" for s, t in zip(src, tgt)))
    model = str(tiny_run / "best.pt")
    for name, pairs, extra in (("plain", "st", []), ("flipped", "ts", ["--flip"])):
        assert main(["align", model, "--pairs", str(tmp_path / pairs), "--format", "json", "--out",
                     str(tmp_path / f"{name}.json"), *extra]) == 0
    plain, flipped = ([json.loads(x) for x in (tmp_path / f"{n}.json").read_text().splitlines()]
                      for n in ("plain", "flipped"))
    for a, b in zip(plain, flipped, strict=True):
        assert (b["source"], b["target"]) == (a["target"], a["source"])
        assert {tuple(x) for x in b["links"]} == {(t, s) for s, t in a["links"]}
        assert np.allclose(np.array(b["soft"]), np.array(a["soft"]).T)
    gold = [" ".join(f"{s + 1}-{t + 1}" for s, t in sorted(a["links"])) for a in plain]
    (tmp_path / "gold.st").write_text("".join(g + "\n" for g in gold))
    (tmp_path / "gold.ts").write_text("".join(" ".join("-".join(x.split("-")[::-1]) for x in g.split()) + "\n"
                                              for g in gold))
    capsys.readouterr()
    for pairs, gold_file, extra in (("st", "gold.st", []), ("ts", "gold.ts", ["--flip"])):
        assert main(["align", model, "--pairs", str(tmp_path / pairs), "--gold", str(tmp_path / gold_file),
                     "--out", str(tmp_path / "links"), *extra]) == 0
        assert json.loads(capsys.readouterr().out) == {"aer": 0.0, "precision": 1.0, "recall": 1.0}
