"""experiments/aer.py's variants of attention links, without eflomal: every variant is what
`rnnsearch align` gives with the flags it is named by, and the summary picks on the first half."""
import sys
from pathlib import Path

import pytest

from rnnsearch.cli import main
from rnnsearch.analysis.links import alignment_error_rate, read_pharaoh

pytestmark = pytest.mark.slow  # end to end: the study script in subprocesses

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
aer = pytest.importorskip("aer")


def test_every_variant_is_the_align_command_it_names(tiny_run, synth_dir, tmp_path):
    checkpoint = tiny_run / "best.pt"
    src = (synth_dir / "test.en").read_text().splitlines()[:8]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:8]
    pairs = list(zip(src, tgt))
    # the same model read backwards stands in for a Fr->En one
    found, seconds = aer.attention_links(checkpoint, pairs, reverse=checkpoint)
    assert seconds > 0
    readings, extractions = 10, len(aer.extractions())  # alpha at 4 shifts and the posterior, x 2 forms
    assert len(found) == readings * extractions * (1 + 1 + 4)  # forward, Fr->En alone, 4 combinations
    (tmp_path / "pairs").write_text("".join(f"{s} ||| {t}\n" for s, t in pairs))
    for name in (aer.DEFAULT, "`--natural --shift 1 --extract grow-diag --balance 3`", "`--shift 2 --threshold 0.3`",
                 "`--extract columns --balance 10 --reverse-model FR_EN --symmetrize soft`",
                 "`--natural --extract intersection --reverse-model FR_EN --symmetrize grow-diag`",
                 "`--natural --posterior --extract grow-diag --balance 10`",
                 "`--posterior --extract columns --reverse-model FR_EN --symmetrize intersection`"):
        flags = [] if name == aer.DEFAULT else name.strip("`").replace("FR_EN", str(checkpoint)).split()
        out = tmp_path / "links"
        assert main(["align", str(checkpoint), "--pairs", str(tmp_path / "pairs"), "--out", str(out), *flags]) == 0
        assert read_pharaoh(out) == found[name], name
    # Fr->En alone: the reverse model reads the pairs turned round (`--flip`), its links in the pairs' order
    assert main(["align", str(checkpoint), "--pairs", str(tmp_path / "pairs"), "--out", str(out), "--flip",
                 "--posterior", "--extract", "intersection"]) == 0
    assert read_pharaoh(out) == found[aer.ALONE + "`--posterior --extract intersection`"]
    # the summary: the default first, then one variant per kind, each the best of its kind on the first half
    gold = [(links, links) for links in found["`--extract intersection`"]]
    halves = (lambda xs: xs, lambda xs: xs[:4], lambda xs: xs[4:])
    rows = [("rnnsearch attention", name, *(alignment_error_rate(h(links), h(gold)) for h in halves))
            for name, links in found.items()]
    chosen = aer.summary(rows)
    assert chosen[0][1] == aer.DEFAULT
    kinds = [aer.family(r[1]) for r in chosen[1:]]
    assert len(kinds) == len(set(kinds))
    for row in chosen[1:]:
        assert row[3]["aer"] == min(r[3]["aer"] for r in rows if aer.family(r[1]) == aer.family(row[1]))
    assert min(r[3]["aer"] for r in rows) == 0.0  # the intersection itself is among the variants
    assert "AER 0.0000 there" in aer.held_out(rows)
    assert aer.table(chosen).count("\n") == len(chosen) + 1


def test_readings_chooses_which_readings_are_scored(tiny_run, synth_dir):
    checkpoint = tiny_run / "best.pt"
    src = (synth_dir / "test.en").read_text().splitlines()[:4]
    tgt = (synth_dir / "test.fr").read_text().splitlines()[:4]
    pairs = list(zip(src, tgt))
    every, _ = aer.attention_links(checkpoint, pairs)
    some, _ = aer.attention_links(checkpoint, pairs, only=["", "--natural --posterior"])
    assert len(some) == 2 * len(aer.extractions())
    assert aer.DEFAULT in some and "`--natural --posterior --extract grow-diag --balance 3`" in some
    assert all(every[name] == links for name, links in some.items())
    with pytest.raises(SystemExit, match="--readings: no reading '--head'.*it has: ''"):
        aer.attention_links(checkpoint, pairs, only=["--head"])
