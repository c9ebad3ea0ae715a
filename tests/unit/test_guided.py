"""Guided alignment (train.guided_alignment): the links' target distributions, the cost on
alpha_ij, its gradients through the fast training path, the links file's errors, and that it
does guide: a model trained with it puts more attention where the links point."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import demo_config, small_model
from rnnsearch.config import ConfigError, from_dict
from rnnsearch.data.batching import make_batch
from rnnsearch.data.guided import Links, guide_matrix, read_links
from rnnsearch.data.io import DataError
from rnnsearch.data.vocab import PAD
from rnnsearch.model.seq2seq import alignment_cost


def links_of(per_pair: list[list[tuple[int, int]]]) -> Links:
    flat = [link for pair in per_pair for link in pair]
    offsets = np.cumsum([0] + [len(p) for p in per_pair])
    return Links(np.asarray(flat, dtype=np.int32).reshape(-1, 2), offsets.astype(np.int64))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(0, 99)), min_size=1, max_size=5))
def test_guide_rows_are_distributions_over_linked_words(pairs):
    src_lens = np.array([s for s, _, _ in pairs])
    tgt_lens = np.array([t for _, t, _ in pairs])
    per_pair = []
    for s, t, seed in pairs:
        rng = np.random.default_rng(seed)
        per_pair.append(sorted({(int(rng.integers(s)), int(rng.integers(t))) for _ in range(rng.integers(0, 6))}))
    guide = guide_matrix(links_of(per_pair), np.arange(len(pairs)), src_lens, tgt_lens)  # (B, T, S)
    assert guide.shape == (len(pairs), tgt_lens.max() + 1, src_lens.max() + 1)
    for b, links in enumerate(per_pair):
        linked = {t for _, t in links} | {int(tgt_lens[b])}  # </s> is linked to </s>
        sums = guide[b].sum(-1)
        for i in range(guide.shape[1]):
            assert sums[i].item() == pytest.approx(1.0 if i in linked else 0.0)
        assert guide[b, int(tgt_lens[b]), int(src_lens[b])] == 1.0
        assert guide[b, :, int(src_lens[b]) + 1:].sum() == 0  # source padding
        for s, t in links:
            assert guide[b, t, s] == pytest.approx(1.0 / sum(1 for _, u in links if u == t))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 999), st.sampled_from(["ce", "mse"]))
def test_the_cost_is_least_where_the_attention_is_the_guide(seed, cost):
    """Gibbs' inequality for ce, a square for mse: alpha = A beats any other distribution, and
    rows without a guide cost nothing."""
    g = torch.Generator(torch.get_default_device()).manual_seed(seed)
    guide = torch.softmax(torch.randn(2, 4, 5, generator=g) * 3, -1)
    guide[1, 2] = 0  # an unguided row
    other = torch.softmax(torch.randn(2, 4, 5, generator=g), -1)
    assert alignment_cost(guide, guide, cost) < alignment_cost(other, guide, cost)
    moved = other.clone()
    moved[1, 2] = torch.softmax(torch.randn(5, generator=g), -1)
    assert alignment_cost(moved, guide, cost).item() == pytest.approx(alignment_cost(other, guide, cost).item())


@pytest.mark.parametrize("readout", ["current", "previous"])
def test_guided_gradients_of_the_fast_path_equal_the_plain_ones(readout):
    """The alignment cost's gradient through deferred weight gradients (model/deferred.py) is the
    gradient plain autograd computes."""
    fast = small_model(readout_state=readout).train()
    plain = copy.deepcopy(fast)
    plain.set_deferred(False)
    batch = make_batch([[5, 6, 7, 8], [9, 10]], [[11, 12, 13], [14, 15, 16]])
    guide = guide_matrix(links_of([[(0, 0), (2, 1), (3, 2)], [(1, 0), (0, 2)]]), np.arange(2),
                         np.array([4, 2]), np.array([3, 3])).to(batch.src.device)
    for model in (fast, plain):
        nll, n, cost = model.guided_loss(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out, guide)
        (nll + 0.1 * cost).backward()
        assert n == 8 and cost.item() > 0
    for (name, a), b in zip(fast.named_parameters(), plain.parameters(), strict=True):
        scale = float(b.grad.abs().max())  # float32 sums in another order: relative to the largest entry
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5 * scale, msg=name)


def test_a_links_file_that_does_not_fit_the_corpus_is_refused(tmp_path):
    path = tmp_path / "links.txt"
    path.write_text("0-0 1-1\n0-0\n")
    with pytest.raises(DataError, match=r"links.txt has 2 lines but the training files have 3"):
        read_links(path, 3, [0, 1], [2, 1], [2, 1])
    with pytest.raises(DataError, match=r"links.txt:1: link 1-1 is outside the pair \(1 source, 2 target words\)"):
        read_links(path, 2, [0, 1], [1, 1], [2, 1])
    path.write_text("0-0 1-x\n0-0\n")
    with pytest.raises(DataError, match=r"links.txt:1: '1-x' is not a Pharaoh link"):
        read_links(path, 2, [0, 1], [2, 1], [2, 1])
    path.write_text("0-0 1-1\nthis line's pair was dropped\n0-0\n")
    links = read_links(path, 3, [0, 2], [2, 1], [2, 1])  # pair 2 (line 2) dropped with its links
    assert links.of(0).tolist() == [[0, 0], [1, 1]] and links.of(1).tolist() == [[0, 0]]


def test_guided_alignment_needs_attention_and_units_known_before_training():
    with pytest.raises(ConfigError, match="only an rnnsearch model has attention"):
        from_dict({"model": {"arch": "rnnencdec"}, "train": {"guided_alignment": "links.txt"}})
    with pytest.raises(ConfigError, match="links index units: vocab.mode word, or a fixed vocab.sp_model's pieces"):
        from_dict({"vocab": {"mode": "sentencepiece"}, "train": {"guided_alignment": "links.txt"}})
    from_dict({"vocab": {"mode": "sentencepiece", "sp_model": "sp.model"}, "train": {"guided_alignment": "links.txt"}})


def test_links_over_the_pieces_of_a_fixed_sentencepiece_model_guide_its_updates(synth_dir, tmp_path):
    """With ``vocab.sp_model``, the links index the model's pieces: each pair's are checked against
    its pieces, and an update's guided positions are the linked pieces (and </s>)."""
    from rnnsearch.data.io import read_lines
    from rnnsearch.data.tokenize import sentencepiece_codec, train_sentencepiece
    from rnnsearch.training.trainer import Trainer
    src, tgt = read_lines(synth_dir / "train.en"), read_lines(synth_dir / "train.fr")
    proto = train_sentencepiece(src + tgt, 150, "bpe")
    (tmp_path / "sp.model").write_bytes(proto)
    codec = sentencepiece_codec("en", "moses", proto)  # joint: one model's pieces on both sides
    pieces = [(len(codec.units(s)), len(codec.units(t))) for s, t in zip(src, tgt)]
    assert sum(b for _, b in pieces) > sum(len(t.split()) for t in tgt)  # pieces, not words
    (tmp_path / "links.txt").write_text("".join(" ".join(f"{i}-{i}" for i in range(min(a, b))) + "\n" for a, b in pieces))
    cfg = demo_config(synth_dir, max_steps=1, guided_alignment=str(tmp_path / "links.txt"))
    cfg["vocab"] = {"mode": "sentencepiece", "sp_model": str(tmp_path / "sp.model"), "size": 150}
    trainer = Trainer(from_dict(cfg), tmp_path / "run", log=lambda *_: None)
    data, rows = trainer.train_data, np.arange(9)
    step = trainer.train_step(rows)
    want = sum(min(int(data.src_lens[k]), int(data.tgt_lens[k])) + 1 for k in rows)  # the diagonal and </s>
    assert step.ok and step.align_rows == want
    (tmp_path / "links.txt").write_text("".join(f"{a}-0\n" for a, _ in pieces))  # one past the last piece
    with pytest.raises(DataError, match=r"links.txt:1: link \d+-0 is outside the pair"):
        Trainer(from_dict(cfg), tmp_path / "run2", log=lambda *_: None)


@pytest.mark.slow
def test_guided_training_puts_the_attention_where_the_links_point(synth_dir, tmp_path):
    """The same tiny model and minibatches, with and without a guide: each target word linked to
    the source word at its own position (a guide the data does not suggest), weight 1. Guided,
    the attention's mass on the linked words is higher."""
    from rnnsearch.data.io import read_lines
    from rnnsearch.training.trainer import Trainer
    src, tgt = read_lines(synth_dir / "train.en"), read_lines(synth_dir / "train.fr")
    diagonal = ["".join(f"{i}-{i} " for i in range(min(len(s.split()), len(t.split())))).strip()
                for s, t in zip(src, tgt)]
    (tmp_path / "links.txt").write_text("".join(line + "\n" for line in diagonal))
    mass, costs = {}, {}
    for name, extra in (("plain", {}), ("guided", {"guided_alignment": str(tmp_path / "links.txt"),
                                                   "guided_alignment_weight": 1.0})):
        cfg = from_dict(demo_config(synth_dir, max_steps=150, valid_every=1000, **extra))
        trainer = Trainer(cfg, tmp_path / name, log=lambda *_: None)
        trainer.run()
        data, model = trainer.train_data, trainer.model.eval()
        rows = np.arange(64)
        guide = guide_matrix(links_of([[(i, i) for i in range(min(int(data.src_lens[k]), int(data.tgt_lens[k])))]
                                       for k in rows]), rows, data.src_lens, data.tgt_lens)
        batch = make_batch([data.src_ids[k] for k in rows], [data.tgt_ids[k] for k in rows])
        guide = guide.to(batch.src.device)  # guide_matrix builds on the CPU
        with torch.no_grad():
            _, alphas = model(batch.src, batch.src_mask, batch.tgt_in)  # (B, T, S)
        linked = (guide > 0) & (batch.tgt_out != PAD).unsqueeze(-1)
        mass[name] = float((alphas * linked).sum() / linked.any(-1).sum())
        costs[name] = [e["align_cost"] for e in _log(tmp_path / name) if "align_cost" in e]
    assert mass["guided"] > mass["plain"] + 0.1, mass  # 0.65 / 0.53 against 0.34 (AVX-512 / forced to AVX2)
    assert costs["plain"] == [] and len(costs["guided"]) == 150 // 25  # one per train.log_every window
    assert costs["guided"][-1] < costs["guided"][0], costs  # the log shows the attention following the links


def _log(run) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def test_an_update_reports_the_alignment_cost_of_its_minibatch(synth_dir, tmp_path):
    """train_step's Step carries the summed guided cost and the guided positions: those of
    alignment_cost on the same weights before the update (no dropout)."""
    from rnnsearch.training.trainer import Trainer
    from rnnsearch.data.io import read_lines
    src, tgt = read_lines(synth_dir / "train.en"), read_lines(synth_dir / "train.fr")
    lines = [" ".join(f"{i % len(s.split())}-{i}" for i in range(len(t.split()))) for s, t in zip(src, tgt)]
    (tmp_path / "links.txt").write_text("".join(line + "\n" for line in lines))
    cfg = from_dict(demo_config(synth_dir, max_steps=1, guided_alignment=str(tmp_path / "links.txt")))
    logged = []
    trainer = Trainer(cfg, tmp_path / "run", log=logged.append)
    assert "guided alignment: weight 0.1, cost ce" in logged, logged
    data, rows = trainer.train_data, np.arange(9)
    batch = make_batch([data.src_ids[k] for k in rows], [data.tgt_ids[k] for k in rows])
    guide = guide_matrix(data.links, rows, data.src_lens, data.tgt_lens).to(batch.src.device)
    with torch.no_grad():
        _, _, want = trainer.model.guided_loss(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out, guide)
    step = trainer.train_step(rows)
    assert step.ok and step.tokens == int(data.tgt_lens[rows].sum()) + len(rows)
    assert step.align_rows == int((guide.sum(-1) > 0).sum()) > 2 * len(rows)  # linked words and </s>
    assert step.align_cost == pytest.approx(float(want), rel=1e-5)
    logged.clear()
    plain = Trainer(from_dict(demo_config(synth_dir, max_steps=1)), tmp_path / "plain", log=logged.append)
    assert plain.train_step(rows)[3:] == (0.0, 0)
    assert not [line for line in logged if "guided" in line or "word alignments" in line], logged
