"""The alignment head (model/align_head.py, training/align_head.py): its rows are distributions
over the real source words, padding changes nothing, training leaves the translation as it was
and learns the links it is given, and the head travels in the checkpoint to `align --head`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DEVICE, small_model
from rnnsearch.cli import main
from rnnsearch.data import synthetic
from rnnsearch.data.batching import make_batch
from rnnsearch.data.io import read_lines
from rnnsearch.data.vocab import PAD
from rnnsearch.model.align_head import AlignmentHead, head_alignment, head_inputs, head_state, load_head, query_size


def _head(model, seed: int, context: int = 0) -> AlignmentHead:
    torch.manual_seed(seed)
    head = AlignmentHead(query_size(model), model.decoder.C_o.in_features, 6, context)
    with torch.no_grad():
        for p in head.parameters():
            p.normal_(0, 0.8)
    return head.eval()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(4, 22), min_size=1, max_size=7),
                          st.lists(st.integers(4, 26), min_size=1, max_size=7)), min_size=1, max_size=4),
       st.integers(0, 99), st.sampled_from(["previous", "current"]), st.sampled_from([0, 4]))
def test_rows_are_distributions_over_the_real_source_and_padding_changes_nothing(pairs, seed, readout, context):
    """With a GRU over the target side too (``context``): its states read only the real positions."""
    model = small_model(seed=seed, readout_state=readout)
    head = _head(model, seed, context)
    batch = make_batch([s for s, _ in pairs], [t for _, t in pairs])
    beta = head_alignment(model, head, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)  # (B, T, S)
    assert torch.allclose(beta.sum(-1), torch.ones(beta.shape[:2]), atol=1e-5)
    assert (beta.masked_select(~batch.src_mask.unsqueeze(1).expand_as(beta)) == 0).all()
    for b, (s, t) in enumerate(pairs):  # each pair alone: the same rows
        alone = make_batch([s], [t])
        own = head_alignment(model, head, alone.src, alone.src_mask, alone.tgt_in, alone.tgt_out)[0]
        assert torch.allclose(beta[b, :len(t) + 1, :len(s) + 1], own, atol=1e-5)


def test_the_query_reads_the_emitted_word_and_the_next():
    """q_i = [s_{i-1}; c_i; E y_i; E y_{i+1}]: changing y_2 changes the rows of y_1 and y_2 through
    their word parts and no state before the decoder reads y_2; c_i is the model's own."""
    model = small_model(seed=3)
    batch = make_batch([[5, 6, 7]], [[8, 9, 10]])
    other = make_batch([[5, 6, 7]], [[8, 11, 10]])
    q, annotations, alphas = head_inputs(model, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)
    q2, _, _ = head_inputs(model, other.src, other.src_mask, other.tgt_in, other.tgt_out)
    d, c, e = model.decoder.U_o.in_features, model.decoder.C_o.in_features, model.decoder.embed.embedding_dim
    assert q.shape == (1, 4, query_size(model)) == (1, 4, d + c + 2 * e)
    emb = model.decoder.embed.weight
    assert torch.equal(q[0, 1, d + c:d + c + e], emb[9]) and torch.equal(q[0, 0, d + c + e:], emb[9])
    assert torch.equal(q[0, 3, d + c + e:], emb[PAD])  # after </s>: padding (a zero row once trained)
    assert torch.allclose(q[0, :, d:d + c], torch.bmm(alphas, annotations)[0])
    assert torch.equal(q[0, :3, :d], q2[0, :3, :d])  # s_0, s_1, s_2 come before y_2 is read
    assert not torch.equal(q[0, 3, :d], q2[0, 3, :d])  # s_3, the query of </s>, has read y_2
    assert not torch.equal(q[0, 0], q2[0, 0]) and not torch.equal(q[0, 1], q2[0, 1])  # E y_{i+1}, E y_i


def test_the_target_context_reads_the_words_after_the_next():
    """With ``context``, the row of y_1 changes when y_3 does (a plain head's reads y_1 and y_2 only),
    and the head comes back from its checkpoint entry as it went in; an entry without a context
    (the heads released before it) loads as a plain head."""
    model = small_model(seed=4)
    batch, other = make_batch([[5, 6, 7]], [[8, 9, 10, 12]]), make_batch([[5, 6, 7]], [[8, 9, 10, 13]])
    for context, changes in ((0, False), (4, True)):
        head = _head(model, 5, context)
        rows = [head_alignment(model, head, b.src, b.src_mask, b.tgt_in, b.tgt_out)[0, 0] for b in (batch, other)]
        assert (not torch.allclose(*rows)) is changes
        again = load_head(head_state(head, {}))
        assert again.dims == head.dims == {"query": query_size(model), "key": model.decoder.C_o.in_features,
                                           "att": 6, "context": context}
        assert torch.equal(head_alignment(model, again, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)[0, 0],
                           rows[0])
    entry = head_state(_head(model, 5), {})
    entry["dims"].pop("context")
    assert load_head(entry).dims["context"] == 0


def test_an_rnnencdec_has_no_attention_to_read():
    model = small_model("rnnencdec")
    batch = make_batch([[5, 6]], [[7]])
    with pytest.raises(ValueError, match="attention"):
        head_inputs(model, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)


def _lexicon() -> dict[str, set[str]]:
    """French word -> the English words it translates, from the synthetic grammar's tables."""
    lex: dict[str, set[str]] = {".": {"."}}

    def add(fr: str, en: str) -> None:
        lex.setdefault(fr, set()).add(en)
    for en, fr, _, plural in synthetic.NOUNS:
        add(fr, en)
        add(plural or synthetic._plural(fr), synthetic._english_plural(en))
    for en, masc, fem in synthetic.ADJECTIVES:
        for fr in (masc, fem):
            add(fr, en)
            add(synthetic._plural(fr), en)
    for sing, plur, fr_sing, fr_plur in synthetic.VERBS:
        add(fr_sing, sing)
        add(fr_plur, plur)
    for en, fr in synthetic.PREPOSITIONS:
        add(fr, en)
    return lex


def dictionary_links(src_words: list[str], tgt_words: list[str], lex) -> list[tuple[int, int]]:
    """(source, target) links of the target words whose translation occurs once in the source."""
    src = [w.lower() for w in src_words]
    links = []
    for t, word in enumerate(tgt_words):
        hits = [s for s, w in enumerate(src) if w in lex.get(word.lower(), ())]
        if len(hits) == 1:
            links.append((hits[0], t))
    return links


def _accuracy(translator, head_or_none, src_lines, tgt_lines, lex) -> float:
    """Share of dictionary-linked target words whose row's argmax is their source word."""
    hit = total = 0
    model = translator.model
    for s_line, t_line in zip(src_lines, tgt_lines):
        s_words, t_words = translator.src_codec.units(s_line), translator.tgt_codec.units(t_line)
        batch = make_batch([translator.src_codec.vocab.encode(s_words)], [translator.tgt_codec.vocab.encode(t_words)])
        if head_or_none is None:
            with torch.no_grad():
                rows = model(batch.src, batch.src_mask, batch.tgt_in)[1][0]
        else:
            rows = head_alignment(model, head_or_none, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)[0]
        for s, t in dictionary_links(s_words, t_words, lex):
            hit += int(rows[t].argmax()) == s
            total += 1
    return hit / total


@pytest.mark.slow  # trains a head
def test_training_learns_the_links_and_leaves_the_translation_alone(trained_run, synth_dir, tmp_path):
    """On the synthetic corpus with dictionary links, the head finds the linked source word of
    held-out test pairs at least as often as alpha does, and at least 99% of the time; the new
    checkpoint translates exactly as the old one."""
    from rnnsearch import checkpoint
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.training.align_head import HeadSettings, train_alignment_head
    lex = _lexicon()
    before = Translator.from_checkpoint(trained_run / "best.pt", device=DEVICE)
    src, tgt = read_lines(synth_dir / "train.en"), read_lines(synth_dir / "train.fr")
    lines = [" ".join(f"{s}-{t}" for s, t in dictionary_links(before.src_codec.units(a), before.tgt_codec.units(b), lex))
             for a, b in zip(src, tgt)]
    (tmp_path / "links.txt").write_text("".join(line + "\n" for line in lines))
    messages: list[str] = []
    record = train_alignment_head(trained_run / "best.pt", tmp_path / "links.txt", tmp_path / "head.pt",
                                  HeadSettings(pairs=2000, held_out=200, epochs=3, att=32, lr=3e-3, batch_size=50,
                                               device=DEVICE),
                                  log=messages.append)
    assert record["pairs"] == 2000 and record["held_out"] == 200 and len(record["held_out_ce"]) == 3
    assert record["held_out_ce"][-1] < min(0.05, record["held_out_ce"][0]), record  # 0.092 -> 0.013
    assert any("epoch 3" in m for m in messages)
    after = Translator.from_checkpoint(tmp_path / "head.pt", device=DEVICE)
    assert before.align_head is None and after.align_head is not None
    source, written = checkpoint.load(trained_run / "best.pt"), checkpoint.load(tmp_path / "head.pt")
    old, new = source["model"], written["model"]
    assert old.keys() == new.keys() and all(torch.equal(old[k], new[k]) for k in old)
    assert "optimizer" in source and not {"optimizer", "scheduler", "rng"} & written.keys()  # no resuming from it
    assert written["config"] == source["config"] and written["train_state"] == source["train_state"]
    test_src, test_tgt = read_lines(synth_dir / "test.en")[:80], read_lines(synth_dir / "test.fr")[:80]
    by_head = _accuracy(after, after.align_head, test_src, test_tgt, lex)
    by_alpha = _accuracy(after, None, test_src, test_tgt, lex)
    assert by_head >= max(0.99, by_alpha), (by_head, by_alpha)  # 1.0 and 0.974 (AVX-512)


@pytest.fixture(scope="module")
def head_checkpoint(trained_run, synth_dir, tmp_path_factory):
    """The tiny trained model with a head trained by the CLI on diagonal links."""
    folder = tmp_path_factory.mktemp("head")
    src = read_lines(synth_dir / "train.en")
    (folder / "links.txt").write_text("".join(" ".join(f"{i}-{i}" for i in range(3)) + "\n" for _ in src))
    out = folder / "with_head.pt"
    assert main(["train-align-head", str(trained_run / "best.pt"), "--links", str(folder / "links.txt"),
                 "--out", str(out), "--pairs", "100", "--held-out", "20", "--epochs", "1", "--size", "8"]) == 0
    return out


@pytest.mark.slow  # trains a head
def test_align_reads_the_head_from_the_checkpoint(head_checkpoint, trained_run, tmp_path, capsys):
    """CLI: `align --head` reads the head train-align-head wrote; a checkpoint without a head, a
    shift, or writing over the input is a clear error."""
    test = tmp_path / "test.pairs"
    test.write_text("The dog sees a cat . ||| Le chien voit un chat .\n")
    out = tmp_path / "links.head"
    assert main(["align", str(head_checkpoint), "--pairs", str(test), "--head", "--out", str(out)]) == 0
    links = [tuple(map(int, x.split("-"))) for x in out.read_text().split()]
    assert sorted(t for _, t in links) == list(range(6)) and all(s < 6 for s, _ in links)
    capsys.readouterr()
    assert main(["align", str(trained_run / "best.pt"), "--pairs", str(test), "--head"]) == 2
    assert "best.pt: this model has no alignment head" in capsys.readouterr().err
    assert main(["align", str(head_checkpoint), "--pairs", str(test), "--head", "--reverse-model",
                 str(trained_run / "best.pt")]) == 2
    assert f"{trained_run / 'best.pt'}: this model has no alignment head" in capsys.readouterr().err
    assert main(["align", str(head_checkpoint), "--pairs", str(test), "--head", "--shift", "1"]) == 2
    assert "takes no shift" in capsys.readouterr().err
    assert main(["train-align-head", str(head_checkpoint), "--links", str(tmp_path / "x"), "--out",
                 str(head_checkpoint)]) == 2
    assert "input checkpoint" in capsys.readouterr().err
    if not torch.cuda.is_available():  # a GPU asked for where there is none
        assert main(["train-align-head", str(head_checkpoint), "--links", str(tmp_path / "x"), "--out",
                     str(tmp_path / "y.pt"), "--device", "cuda"]) == 2
        assert "torch sees no CUDA device" in capsys.readouterr().err


@pytest.mark.slow  # trains a head
def test_the_aer_study_reads_the_head_where_there_is_one(head_checkpoint, trained_run, synth_dir):
    """experiments/aer.py scores the head as written and in natural form, as its own kind, and
    combines it with a Fr->En model's head only when that model has one."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
    aer = pytest.importorskip("aer")
    pairs = list(zip(read_lines(synth_dir / "test.en")[:3], read_lines(synth_dir / "test.fr")[:3]))
    found, _ = aer.attention_links(head_checkpoint, pairs, reverse=trained_run / "best.pt")
    assert "`--head`" in found and "`--natural --head --extract columns`" in found
    assert "`--natural --head --posterior --extract intersection`" in found
    assert not any("--head" in name and "--symmetrize" in name for name in found)
    assert any("--posterior" in name and "--symmetrize" in name for name in found)
    assert aer.family("`--head --extract columns`") == "head: columns"
    assert aer.family("`--natural --head --posterior --extract intersection`") == "head+posterior: intersection"


@pytest.mark.slow  # trains a head
def test_head_and_posterior_together_read_their_mean(head_checkpoint, synth_dir, tmp_path):
    """`align --head --posterior`: the mean of the head's and the posterior's distributions."""
    import numpy as np
    from rnnsearch.analysis.force_align import force_align
    from rnnsearch.decoding.translator import Translator
    translator = Translator.from_checkpoint(head_checkpoint, device=DEVICE)
    pairs = list(zip(read_lines(synth_dir / "test.en")[:6], read_lines(synth_dir / "test.fr")[:6]))
    both, head, posterior = (force_align(translator, pairs, reading=r) for r in ("head+posterior", "head", "posterior"))
    for a, h, p in zip(both, head, posterior):
        assert np.allclose(a.soft, (h.soft + p.soft) / 2, atol=1e-6)
        assert not np.allclose(h.soft, p.soft, atol=1e-3)
    (tmp_path / "pairs").write_text("".join(f"{s} ||| {t}\n" for s, t in pairs))
    out = tmp_path / "links"
    assert main(["align", str(head_checkpoint), "--pairs", str(tmp_path / "pairs"), "--head", "--posterior",
                 "--extract", "intersection", "--out", str(out)]) == 0
    from rnnsearch.analysis.force_align import hard_links
    from rnnsearch.analysis.links import read_pharaoh
    assert read_pharaoh(out) == [hard_links(a.soft, None, "intersection", 0) for a in both]


@pytest.mark.slow  # trains a head
def test_a_release_keeps_the_head(head_checkpoint, tmp_path):
    """`release` keeps the head in float32 beside the slimmed model, the card says how it was
    trained, and the released model aligns with it."""
    from rnnsearch import checkpoint
    from rnnsearch.analysis.release import make_release, slim_payload
    from rnnsearch.decoding.translator import Translator
    payload = checkpoint.load(head_checkpoint)
    for dtype in ("bfloat16", "int8"):
        slim = slim_payload(payload, dtype)
        assert slim["align_head"]["dims"] == payload["align_head"]["dims"]
        assert all(torch.equal(slim["align_head"]["state"][k], v) for k, v in payload["align_head"]["state"].items())
    make_release(head_checkpoint, tmp_path / "tiny_head", log=lambda *_: None)
    card = (tmp_path / "tiny_head" / "README.md").read_text()
    where = (tmp_path / "tiny_head").resolve()  # outside the clone's models/: the card gives its path
    assert "## Alignment head" in card and f"rnnsearch align {where} --head" in card and "100 training pairs" in card
    released = Translator.from_pretrained(str(tmp_path / "tiny_head"))
    own = Translator.from_checkpoint(head_checkpoint)
    assert all(torch.equal(a, b) for a, b in zip(released.align_head.parameters(), own.align_head.parameters()))
    test = tmp_path / "test.pairs"
    test.write_text("The dog sees a cat . ||| Le chien voit un chat .\n")
    assert main(["align", str(tmp_path / "tiny_head"), "--pairs", str(test), "--head", "--out", str(tmp_path / "l")]) == 0


@pytest.mark.slow  # trains a head
def test_an_average_keeps_the_alignment_head(head_checkpoint, tmp_path):
    """``average`` dropped a release's head: the mean wrote ``<unk>`` and placed items otherwise."""
    from rnnsearch import checkpoint
    from rnnsearch.decoding.average import average_checkpoints
    averaged = average_checkpoints([str(head_checkpoint), str(head_checkpoint)], tmp_path / "avg.pt")
    own = checkpoint.load(head_checkpoint)["align_head"]
    assert averaged["align_head"]["dims"] == own["dims"]
    assert all(torch.allclose(averaged["align_head"]["state"][k], v) for k, v in own["state"].items())

@pytest.mark.slow  # trains a head
def test_a_release_records_its_measured_alignment(head_checkpoint, tmp_path, capsys):
    """`align --gold --record` on a release: the AER and the flags go into release.json and the model
    card; the same flags again replace their entry; the weights stay byte for byte."""
    from rnnsearch.analysis.release import make_release
    from rnnsearch.decoding.translator import Translator
    release = tmp_path / "tiny_head"
    make_release(head_checkpoint, release, log=lambda *_: None)
    weights = (release / "model.pt").read_bytes()
    (tmp_path / "pairs").write_text("The dog sees a cat . ||| Le chien voit un chat .\n")
    (tmp_path / "gold").write_text("1-1 2-2 3-3 4-4 5-5 6-6 4p3\n")
    base = ["align", str(release), "--pairs", str(tmp_path / "pairs"), "--gold", str(tmp_path / "gold"), "--record"]
    measured = {}
    given = ["--head", "--extract", "intersection", "--threshold", "0.0", "--shift", "0"]  # --shift 0: the default
    for flags in (given, [], given):
        capsys.readouterr()
        assert main(base + flags) == 0
        measured[" ".join(flags[:-2] if flags else [])] = json.loads(capsys.readouterr().err.splitlines()[0])
    manifest = json.loads((release / "release.json").read_text())
    assert [(e["flags"], e["sentences"], e["gold"]) for e in manifest["alignment"]] == [
        ("", 1, str(tmp_path / "gold")), ("--head --extract intersection --threshold 0.0", 1, str(tmp_path / "gold"))]
    card = (release / "README.md").read_text()
    for entry in manifest["alignment"]:
        assert {k: entry[k] for k in ("aer", "precision", "recall")} == measured[entry["flags"]]
        flags = f"`{entry['flags']}`" if entry["flags"] else "(none)"
        assert f"| {flags} | `{entry['pairs']}` | `{entry['gold']}` (1 sentences) | {entry['aer']:.4f} |" in card
    assert (release / "model.pt").read_bytes() == weights and not list(release.glob(".*.partial"))
    assert Translator.from_pretrained(str(release)).align_head is not None
    assert main(base[:-1]) == 0 and (release / "README.md").read_text() == card  # no --record: nothing written
    assert main(base[:4] + ["--record"]) == 2
    assert "--record needs --gold" in capsys.readouterr().err
    assert main(["align", str(head_checkpoint)] + base[2:]) == 2
    assert "not a release folder" in capsys.readouterr().err


def test_a_broken_head_entry_names_the_file(tiny_run, tmp_path):
    from rnnsearch import checkpoint
    from rnnsearch.decoding.translator import Translator
    payload = checkpoint.load(tiny_run / "best.pt")
    payload.pop("format"), payload.pop("version")
    checkpoint.save(tmp_path / "bad.pt", {**payload, "align_head": {"dims": {"query": 3}, "state": {}}})
    with pytest.raises(checkpoint.CheckpointError, match="bad.pt: its align_head entry"):
        Translator.from_checkpoint(tmp_path / "bad.pt")


def test_the_card_says_whether_the_head_reads_the_target_context():
    from rnnsearch.analysis.model_card import head_lines
    record = {"pairs": 100, "links": "links.txt", "epochs": 1, "cpu_s": 36.0, "held_out": 20, "held_out_ce": [0.5]}
    plain = " ".join(head_lines({"dims": {"att": 8, "context": 0}, "record": record}, "m"))
    wide = " ".join(head_lines({"dims": {"att": 8, "context": 4}, "record": record}, "m"))
    assert "head of size 8 trained over" in plain and "--context" not in plain
    assert "a bidirectional GRU of 4 a direction over its queries: `--context 4`" in wide and "100 training pairs" in wide


@pytest.mark.slow  # trains a head
def test_init_head_goes_on_from_the_checkpoints_head(head_checkpoint, trained_run, tmp_path):
    """--init-head: the new head starts from the checkpoint's (its sizes, whatever --size says) and
    records how that one was trained; a checkpoint without a head is a one-line error."""
    from rnnsearch import checkpoint
    from rnnsearch.errors import UsageError
    from rnnsearch.training.align_head import HeadSettings, train_alignment_head
    links = head_checkpoint.parent / "links.txt"
    settings = HeadSettings(pairs=50, held_out=10, epochs=1, att=32, lr=1e-9, init_head=True, device=DEVICE)
    record = train_alignment_head(head_checkpoint, links, tmp_path / "again.pt", settings, log=lambda m: None)
    parent, child = checkpoint.load(head_checkpoint)["align_head"], checkpoint.load(tmp_path / "again.pt")["align_head"]
    assert child["dims"] == parent["dims"] and child["dims"]["att"] == 8 and record["att"] == 8
    assert all(torch.allclose(parent["state"][k], v, atol=1e-6) for k, v in child["state"].items())  # lr 1e-9
    assert record["init_head"] == parent["record"]
    anew = settings.model_copy(update={"init_head": False})
    fresh = train_alignment_head(head_checkpoint, links, tmp_path / "new.pt", anew, log=lambda m: None)
    assert fresh["att"] == 32 and "init_head" not in fresh
    with pytest.raises(UsageError, match="best.pt has no alignment head to start from"):
        train_alignment_head(trained_run / "best.pt", links, tmp_path / "none.pt", settings, log=lambda m: None)
