"""``make bench-aer``: alignment error rate on the WPT 2003 English-French gold set (447 sentences)
of a Hansards-trained RNNsearch's attention, beside eflomal trained on the same Hansards pairs
with its default settings, in one run; then variants of the attention's links.

    python experiments/aer.py --checkpoint runs/hansards/rnnsearch50/best.pt [--pairs 200000] [--out F.md]
        [--reverse-checkpoint FR_EN_CKPT]

eflomal reads the first --pairs training pairs, Moses-tokenised and lowercased like the gold set,
with the 447 test pairs appended (an unsupervised aligner aligns its test data with its training
data); its forward and reverse links, their intersection, union and grow-diag-final-and are scored.

The "natural form" rows have the model read the gold sentences as Hansards writes them (first
word capitalised, French elisions and contractions restored: ``rnnsearch.analysis.gold_text``),
the form it was trained on, with the links put back on the gold set's words. The variants: which
step's attention links y_i (``--shift``: 0, the step that emits it; 1, the step where y_i is the
decoder's input, Shift-Att; 2; -1), plain argmax or with thresholds; with a Fr->En model, each also
symmetrised with that model's links. Held out: the variant is chosen by its AER on WPT sentences
1-223 and reported on 224-447.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
WPT = DATA / "alignment" / "hansards_enfr"
DEFAULT = "argmax of alpha_i (default)"
HALF = 223  # variants and thresholds are chosen on WPT sentences 1-223; AER reported on 224-447
HALVES = (lambda xs: xs, lambda xs: xs[:HALF], lambda xs: xs[HALF:])  # all, the choosing half, the held-out half

from rnnsearch.analysis.force_align import force_align  # noqa: E402
from rnnsearch.analysis.gold_text import natural_forms  # noqa: E402
from rnnsearch.analysis.links import (alignment_error_rate, grow_diag_final_and, link_misses,  # noqa: E402
                                      parse_pharaoh, read_wpt_gold, symmetrize)
from rnnsearch.data.io import read_lines  # noqa: E402
from rnnsearch.data.tokenize import pretokenize  # noqa: E402
from rnnsearch.decoding.translator import Translator  # noqa: E402


def say(message: str) -> None:
    print(f"[aer {time.strftime('%H:%M:%S')}] {message}", flush=True)


def wpt_pairs() -> list[tuple[str, str]]:
    pairs = []
    for line in read_lines(WPT / "test.en-fr"):
        src, tgt = line.split(" ||| ")
        pairs.append((" ".join(src.split()), " ".join(tgt.split())))
    return pairs


def eflomal_links(pairs: int, test: list[tuple[str, str]], work: Path, reuse: bool) -> tuple[dict, float]:
    """eflomal's links of the test pairs, by symmetrisation, and its wall time (s)."""
    stamp = work / f"eflomal.{pairs}.seconds"
    if reuse and stamp.exists():
        say(f"reusing eflomal's links of {work} ({pairs} pairs)")
        return _symmetrised(work, len(test)), float(stamp.read_text())
    src = read_lines(DATA / "hansards" / "train.en.gz")[:pairs]
    tgt = read_lines(DATA / "hansards" / "train.fr.gz")[:pairs]
    lines, skipped = [], 0
    for s, t in zip(src, tgt):
        sw, tw = pretokenize(s.lower(), "moses", "en"), pretokenize(t.lower(), "moses", "fr")
        if sw and tw:
            lines.append(f"{' '.join(sw)} ||| {' '.join(tw)}\n")
        else:
            skipped += 1
    lines.extend(f"{s} ||| {t}\n" for s, t in test)
    (work / "eflomal.in").write_text("".join(lines), encoding="utf-8")
    say(f"eflomal: {len(lines) - len(test)} training pairs ({skipped} empty left out) + {len(test)} test pairs")
    binary = Path(sys.executable).parent / "eflomal-align"
    start = time.monotonic()
    subprocess.run([str(binary), "-i", str(work / "eflomal.in"), "-f", str(work / "fwd"), "-r", str(work / "rev"),
                    "--overwrite"], check=True)
    seconds = time.monotonic() - start
    stamp.write_text(f"{seconds:.1f}")
    return _symmetrised(work, len(test)), seconds


def _symmetrised(work: Path, n: int) -> dict:
    fwd = [parse_pharaoh(x) for x in (work / "fwd").read_text().splitlines()[-n:]]
    rev = [parse_pharaoh(x) for x in (work / "rev").read_text().splitlines()[-n:]]
    links = {"forward (en->fr)": fwd, "reverse (fr->en)": rev,
             "intersection": [f & r for f, r in zip(fwd, rev)], "union": [f | r for f, r in zip(fwd, rev)],
             "grow-diag-final-and": [grow_diag_final_and(f, r) for f, r in zip(fwd, rev)]}
    return links


def variants_of(translator) -> dict[str, dict]:
    """force_align's settings to score: every shift (-1 to 2; 1 is Shift-Att's step), as written and
    in natural form, plain argmax and with thresholds 0.3 and 0.2."""
    natural = natural_forms(translator.src_codec, translator.tgt_codec)
    out = {}
    for form_name, forms in (("", None), ("natural form: ", natural)):
        for shift in (0, 1, 2, -1):
            for threshold in (None, 0.3, 0.2):
                flags = " ".join(f for f in ("--natural" if forms else "", f"--shift {shift}" if shift else "",
                                             f"--threshold {threshold}" if threshold else "") if f)
                name = (f"{form_name}argmax of alpha_{{i{shift:+d}}}".replace("{i+0}", "i")
                        + (f" + alpha >= {threshold}" if threshold else "") + (f" ({flags})" if flags else ""))
                out[DEFAULT if not flags else name] = {"shift": shift, "threshold": threshold, "forms": forms}
    return out


def attention_links(checkpoint: Path, test: list[tuple[str, str]], device: str = "cpu",
                    reverse: Path | None = None) -> tuple[dict, float]:
    """Links of every variant; with ``reverse`` (a Fr->En checkpoint), also each variant's links
    symmetrised with the reverse model's links of the same variant (intersection, grow-diag-final-and)."""
    translator = Translator.from_pretrained(str(checkpoint), device=device)
    variants = variants_of(translator)
    out, start = {}, time.monotonic()
    for name, kwargs in variants.items():
        out[name] = [a.links for a in force_align(translator, test, **kwargs)]
    if reverse is not None:
        back = Translator.from_pretrained(str(reverse), device=device)
        flipped = [(t, s_) for s_, t in test]
        for name, kwargs in variants_of(back).items():
            links = [{(s_, t) for t, s_ in a.links} for a in force_align(back, flipped, **kwargs)]
            for method in ("intersection", "grow-diag-final-and"):
                out[f"{method} with Fr->En: {name}"] = [symmetrize(f, r, method) for f, r in zip(out[name], links)]
    return out, (time.monotonic() - start) / len(variants)


def held_out(rows: list[tuple[str, str, dict, dict, dict]]) -> str:
    """The variant with the lowest AER on the first half, and its AER on the second half."""
    best = min((r for r in rows if r[0].startswith("rnnsearch")), key=lambda r: r[3]["aer"])
    return (f"Held out: chosen on the first {HALF} sentences, **{best[0]}, {best[1]}** (AER {best[3]['aer']:.4f} "
            f"there); on the other {best[4]['sentences']} sentences, never looked at to choose, its AER is "
            f"**{best[4]['aer']:.4f}** (precision {best[4]['precision']:.4f}, recall {best[4]['recall']:.4f}).")


def misses_text(links: list, gold: list, test: list[tuple[str, str]], top: int = 12) -> str:
    """Where the default attention links miss the gold, in words."""
    m = link_misses(links, gold, [t.split() for _, t in test])
    share = {k: m[k] / max(m["missed"], 1) for k in (1, 2, "3+", "unaligned")}
    words = sorted(m["by_word"].items(), key=lambda kv: -kv[1][1])[:top]
    listed = ", ".join(f"`{w}` {missed:,} of {n:,}" for w, (n, missed) in words)
    return (f"Where the default links (argmax of alpha_i) miss: {m['missed']:,} of {m['links']:,} links are not "
            f"possible gold links. Of those, {share[1]:.0%} point one source word away from the nearest "
            f"gold link of their target word, {share[2]:.0%} two, {share['3+']:.0%} three or more, and "
            f"{share['unaligned']:.0%} link a target word that the gold leaves unaligned. Most missed "
            f"target words (missed of linked): {listed}.")


def _eflomal_version(reused: bool, work: Path) -> str:
    """eflomal's version; with --reuse on a machine without eflomal, where its links came from."""
    from importlib import metadata
    try:
        return metadata.version("eflomal")
    except metadata.PackageNotFoundError:
        if not reused:
            raise
        return f"(not installed here; its links reused from {work})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="a Hansards En->Fr RNNsearch checkpoint")
    parser.add_argument("--pairs", type=int, default=200000, help="Hansards training pairs for eflomal")
    parser.add_argument("--work", default=str(ROOT / "runs" / "aer"))
    parser.add_argument("--out", help="also write the table (Markdown) here")
    parser.add_argument("--reuse", action="store_true", help="reuse eflomal's links from an earlier run in --work")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N: where the model aligns")
    parser.add_argument("--reverse-checkpoint", help="a Fr->En RNNsearch: also score the symmetrised links")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    test, gold = wpt_pairs(), read_wpt_gold(WPT / "test.gold")
    reverse = Path(args.reverse_checkpoint) if args.reverse_checkpoint else None
    ours, ours_s = attention_links(Path(args.checkpoint), test, args.device, reverse)
    theirs, eflomal_s = eflomal_links(args.pairs, test, work, args.reuse)
    rows = [(who, name, *(alignment_error_rate(part(links), part(gold)) for part in HALVES))
            for who, found in (("rnnsearch attention", ours), (f"eflomal ({args.pairs:,} pairs)", theirs))
            for name, links in found.items()]
    table = ["| aligner | links | AER | precision | recall | AER 1-223 | AER 224-447 |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for who, name, r, first, second in rows:
        table.append(f"| {who} | {name} | {r['aer']:.4f} | {r['precision']:.4f} | {r['recall']:.4f} | "
                     f"{first['aer']:.4f} | {second['aer']:.4f} |")
    text = (f"WPT 2003 En-Fr gold ({len(test)} sentences; AER, precision, recall summed over the corpus, "
            f"Och & Ney 2003), {date.today().isoformat()}. Command: `python experiments/aer.py "
            f"{' '.join(shlex.quote(a) for a in sys.argv[1:])}`. Attention: {ours_s:.1f} s per variant; eflomal "
            f"{_eflomal_version(args.reuse, work)}: {eflomal_s:.0f} s.\n\n"
            + "\n".join(table) + "\n\n" + held_out(rows) + "\n\n" + misses_text(ours[DEFAULT], gold, test) + "\n")
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
