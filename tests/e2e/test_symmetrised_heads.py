"""Symmetrised alignment heads (#63): an En->Fr and a Fr->En model, each with an alignment head
trained on the links of a toy gold set (the synthetic grammar's word-for-word correspondences),
read together by `align --head --reverse-model`: the intersection's and grow-diag-final's links are
links of one of the two directions and score a lower AER on held-out pairs than the weaker
direction; the soft reading (the two heads' distributions multiplied, then read) beats both, and
its weights over a threshold above 1/2 lie in the intersection; and
experiments/head_links.py's self-training links are, line for line, what `align --reverse-model`
reads from the pairs that `train-align-head --pairs N` samples, and nothing on the other lines.
(grow-diag and grow-diag-final-and are not asked to: from the intersection they grow into a weak
direction's errors next to it, and with heads trained on 600 pairs they scored worse than both.)"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rnnsearch.analysis.links import alignment_error_rate, read_pharaoh
from rnnsearch.cli import main
from rnnsearch.config import from_dict
from rnnsearch.data import synthetic
from rnnsearch.data.io import read_lines
from rnnsearch.decoding.translator import Translator
from tests.conftest import demo_config

pytestmark = pytest.mark.slow


def _dictionary() -> dict[str, set[str]]:
    """English word -> the French words of the grammar that translate it (every inflection)."""
    d: dict[str, set[str]] = {".": {"."}, "the": {"le", "la", "les"}, "a": {"un", "une"}, "some": {"des"}}
    for en, fr, _, plural in synthetic.NOUNS:
        d.setdefault(en, set()).add(fr)
        d.setdefault(synthetic._english_plural(en), set()).add(plural or synthetic._plural(fr))
    for en, masc, fem in synthetic.ADJECTIVES:
        d[en] = {masc, fem, synthetic._plural(masc), synthetic._plural(fem)}
    for singular, plural, fr_singular, fr_plural in synthetic.VERBS:
        d[singular], d[plural] = {fr_singular}, {fr_plural}
    for en, fr in synthetic.PREPOSITIONS:
        d[en] = {fr}
    return d


def gold_links(src_words: list[str], tgt_words: list[str], dictionary) -> set[tuple[int, int]]:
    """Each English word to the first French word not yet taken that translates it (the grammar
    keeps the order of its phrases, and mirrors adjectives within a noun phrase, whose words differ)."""
    taken, links = set(), set()
    for i, word in enumerate(src_words):
        for j, other in enumerate(tgt_words):
            if j not in taken and other.lower() in dictionary.get(word.lower(), ()):
                taken.add(j)
                links.add((i, j))
                break
    return links


def _pharaoh(rows) -> str:
    return "".join(" ".join(f"{i}-{j}" for i, j in sorted(links)) + "\n" for links in rows)


def _aer(links, gold) -> float:
    return alignment_error_rate(links, [(g, g) for g in gold])["aer"]


def test_symmetrised_heads_stay_within_the_union_and_beat_the_weaker_direction(trained_run, synth_dir, tmp_path):
    from rnnsearch.training.trainer import train
    reverse_run = tmp_path / "fren"
    cfg = demo_config(synth_dir)
    cfg["data"].update(src_lang="fr", tgt_lang="en")
    train(from_dict(cfg), reverse_run, log=lambda *_: None)
    codecs = Translator.from_pretrained(trained_run / "best.pt")
    dictionary = _dictionary()

    def words(split: str):
        return ([codecs.src_codec.words(s) for s in read_lines(synth_dir / f"{split}.en")],
                [codecs.tgt_codec.words(t) for t in read_lines(synth_dir / f"{split}.fr")])

    train_src, train_tgt = words("train")
    gold_train = [gold_links(s, t, dictionary) for s, t in zip(train_src, train_tgt)]
    assert sum(map(len, gold_train)) > 0.9 * sum(map(len, train_src))  # the toy gold links nearly every word
    (tmp_path / "enfr.links").write_text(_pharaoh(gold_train), encoding="utf-8")
    (tmp_path / "fren.links").write_text(_pharaoh([{(j, i) for i, j in g} for g in gold_train]), encoding="utf-8")
    heads = {}
    for name, run in (("enfr", trained_run), ("fren", reverse_run)):
        heads[name] = tmp_path / f"{name}_head.pt"
        assert main(["train-align-head", str(run / "best.pt"), "--links", str(tmp_path / f"{name}.links"),
                     "--out", str(heads[name]), "--pairs", "2400", "--held-out", "50", "--epochs", "3",
                     "--size", "16", "--set", f"data.dir={synth_dir}"]) == 0

    test_src, test_tgt = words("test")
    n = 60
    pairs = tmp_path / "test.pairs"
    pairs.write_text("".join(f"{' '.join(s)} ||| {' '.join(t)}\n" for s, t in zip(test_src[:n], test_tgt[:n])),
                     encoding="utf-8")
    gold = [gold_links(s, t, dictionary) for s, t in zip(test_src[:n], test_tgt[:n])]
    flipped = tmp_path / "flipped.pairs"
    flipped.write_text("".join(f"{' '.join(t)} ||| {' '.join(s)}\n" for s, t in zip(test_src[:n], test_tgt[:n])),
                       encoding="utf-8")
    out = {name: tmp_path / f"{name}.pharaoh" for name in ("forward", "backward")}
    assert main(["align", str(heads["enfr"]), "--pairs", str(pairs), "--head", "--out", str(out["forward"])]) == 0
    assert main(["align", str(heads["fren"]), "--pairs", str(flipped), "--head", "--out", str(out["backward"])]) == 0
    forward, backward = read_pharaoh(out["forward"]), read_pharaoh(out["backward"], reverse=True)
    aer = {"forward": _aer(forward, gold), "backward": _aer(backward, gold)}
    for method in ("intersection", "grow-diag-final", "soft"):
        out[method] = tmp_path / f"{method}.pharaoh"
        assert main(["align", str(heads["enfr"]), "--pairs", str(pairs), "--head", "--reverse-model",
                     str(heads["fren"]), "--symmetrize", method, "--out", str(out[method])]) == 0
        aer[method] = _aer(read_pharaoh(out[method]), gold)
    weaker, stronger = max(aer["forward"], aer["backward"]), min(aer["forward"], aer["backward"])
    assert weaker < 0.3 and forward != backward, aer  # both heads learned the toy alignment, differently
    for method in ("intersection", "grow-diag-final"):
        assert all(s <= f | b for s, f, b in zip(read_pharaoh(out[method]), forward, backward, strict=True))
        assert aer[method] < weaker, aer
    assert aer["soft"] < stronger, aer
    agreed = tmp_path / "agreed.pharaoh"  # the product's weights over 0.6: links both heads give over 0.6
    assert main(["align", str(heads["enfr"]), "--pairs", str(pairs), "--head", "--reverse-model", str(heads["fren"]),
                 "--symmetrize", "soft", "--extract", "threshold", "--threshold", "0.6", "--out", str(agreed)]) == 0
    agreed_links = read_pharaoh(agreed)
    assert all(a <= i for a, i in zip(agreed_links, read_pharaoh(out["intersection"]), strict=True))
    assert sum(map(len, agreed_links)) > 0.5 * sum(map(len, gold))  # toy links the two heads are sure of

    # experiments/head_links.py: the pairs train-align-head samples, read as `align --reverse-model` reads them
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
    import head_links

    links = tmp_path / "self.links"
    argv = [str(heads["enfr"]), str(heads["fren"]), "--pairs", "40", "--out", str(links),
                "--reading", "head", "--extract", "rows", "--symmetrize", "intersection", "--set", f"data.dir={synth_dir}"]
    assert head_links.main(argv) == 0
    total, lines, sampled = head_links.sampled_pairs(Translator.from_pretrained(heads["enfr"]), str(heads["enfr"]),
                                                     [f"data.dir={synth_dir}"], 40)
    written, flipped_links = read_pharaoh(links), read_pharaoh(Path(f"{links}.flipped"), reverse=True)
    assert len(written) == total == len(read_lines(synth_dir / "train.en")) and len(lines) == 40
    assert flipped_links == written and not any(written[i] for i in set(range(total)) - set(lines))
    assert sum(bool(written[i]) for i in lines) > 30  # the two heads agree on links in most pairs
    (tmp_path / "sampled.pairs").write_text("".join(f"{s} ||| {t}\n" for s, t in sampled), encoding="utf-8")
    assert main(["align", str(heads["enfr"]), "--pairs", str(tmp_path / "sampled.pairs"), "--head", "--reverse-model",
                 str(heads["fren"]), "--symmetrize", "intersection", "--out", str(tmp_path / "sampled.pharaoh")]) == 0
    assert [written[i] for i in lines] == read_pharaoh(tmp_path / "sampled.pharaoh")
