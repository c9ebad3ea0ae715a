"""``make bench-aer``: alignment error rate on the WPT 2003 English-French gold set (447 sentences)
of a Hansards-trained RNNsearch's attention, beside eflomal trained on the same Hansards pairs
with its default settings, in one run; then variants of the attention's links.

    python experiments/aer.py --checkpoint runs/hansards/rnnsearch50/best.pt [--pairs 200000] [--out F.md]
        [--reverse-checkpoint FR_EN_CKPT] [--readings '--natural,--natural --posterior'] [--no-eflomal]

eflomal reads the first --pairs training pairs, Moses-tokenised and lowercased like the gold set,
with the 447 test pairs appended (an unsupervised aligner aligns its test data with its training
data); its forward and reverse links, their intersection, union and grow-diag-final-and are scored.

The variants are `rnnsearch align` flags. ``--natural``: the model reads the gold sentences as
Hansards writes them (first word capitalised, French elisions and contractions restored:
``rnnsearch.analysis.gold_text``), the form it was trained on, with the links put back on the gold
set's words. ``--shift``: which step's attention links y_i (0, the step that emits it; 1, the step
where y_i is the decoder's input, Shift-Att; 2; -1). ``--posterior``: the posterior of y_i's
alignment, alpha_ij times the model's probability of y_i given h_j alone, normalised (the attention
as a latent alignment, read once y_i is known). ``--head``: the checkpoint's alignment head
(`rnnsearch train-align-head`), when it has one; ``--head --posterior``: their mean. ``--extract``:
links read by rows (each target word to its most attended source word), by columns (each source word
to the target word that attends to it most) or both symmetrised; ``--balance``: from the soft
alignment balanced by Sinkhorn iterations (every source word given the same total weight);
``--threshold``: rows plus every weight at least that; ``--extract threshold``: those weights alone.
With a Fr->En model, that model's own links of each variant (``Fr->En alone``: `rnnsearch align FR_EN
--flip`), and each variant combined with that model's same variant: the two
directions' links symmetrised, or links read from the product of the two soft alignments
(``--symmetrize soft``). Held out: the variant is chosen by its AER on WPT sentences 1-223 and
reported on 224-447.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
WPT = DATA / "alignment" / "hansards_enfr"
DEFAULT = "argmax of alpha_i (default: no flags)"
HALF = 223  # variants and thresholds are chosen on WPT sentences 1-223; AER reported on 224-447
HALVES = (lambda xs: xs, lambda xs: xs[:HALF], lambda xs: xs[HALF:])  # all, the choosing half, the held-out half

from rnnsearch.analysis.force_align import EXTRACTIONS, combine, force_align, hard_links, turned  # noqa: E402
from rnnsearch.analysis.gold_text import natural_forms  # noqa: E402
from rnnsearch.analysis.links import (alignment_error_rate, grow_diag_final_and, link_misses,  # noqa: E402
                                      parse_pharaoh, read_wpt_gold)
from rnnsearch.data.io import read_lines  # noqa: E402
from rnnsearch.data.tokenize import pretokenize  # noqa: E402
from guided_links import eflomal_binary  # noqa: E402  (experiments/, this script's folder)
from rnnsearch.decoding.translator import Translator  # noqa: E402


def say(message: str) -> None:
    print(f"[aer {time.strftime('%H:%M:%S')}] {message}", flush=True)


def wpt_pairs() -> list[tuple[str, str]]:
    pairs = []
    for line in read_lines(WPT / "test.en-fr"):
        src, tgt = line.split(" ||| ")
        pairs.append((" ".join(src.split()), " ".join(tgt.split())))
    return pairs


def eflomal_links(pairs: int, test: list[tuple[str, str]], work: Path, reuse: bool,
                  binary: str = "eflomal-align") -> tuple[dict, float]:
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
    start = time.monotonic()
    subprocess.run([eflomal_binary(binary), "-i", str(work / "eflomal.in"), "-f", str(work / "fwd"), "-r", str(work / "rev"),
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


def settings_of(translator) -> dict[str, dict]:
    """force_align's readings to score, as written and in natural form, by flag string ("" for the
    default): alpha at every shift (-1 to 2; 1 is Shift-Att's step), the alignment posterior, and
    the alignment head when the checkpoint has one."""
    natural = natural_forms(translator.src_codec, translator.tgt_codec)
    readings = ["posterior"] + (["head", "head+posterior"] if translator.align_head is not None else [])
    settings = {}
    for forms in (None, natural):
        for extra, kwargs in [(f"--shift {shift}" if shift else "", {"shift": shift}) for shift in (0, 1, 2, -1)] + \
                             [(" ".join(f"--{x}" for x in r.split("+")), {"reading": r}) for r in readings]:
            settings[" ".join(f for f in ("--natural" if forms else "", extra) if f)] = {"forms": forms, **kwargs}
    return settings


THRESHOLDS = (0.1, 0.125, 0.15, 0.175, 0.2, 0.3, 0.4, 0.5)  # for --extract threshold (a product of two: lower)


def extractions() -> list[tuple[str, float | None, int]]:
    """How links are read from a soft alignment (extract, threshold, balance): every argmax
    extraction, as it is and balanced by 3 and 10 Sinkhorn iterations, the rows' argmax with
    thresholds, and the weights at or above each of THRESHOLDS alone."""
    argmaxes = [e for e in EXTRACTIONS if e != "threshold"]
    return ([(e, None, b) for b in (0, 3, 10) for e in argmaxes] + [("rows", 0.3, 0), ("rows", 0.2, 0)]
            + [("threshold", t, 0) for t in THRESHOLDS])


ALONE = "Fr->En alone: "  # a variant of the Fr->En model's own links: `rnnsearch align FR_EN --flip FLAGS`


def variant_name(flags: str, extract: str, threshold: float | None, balance: int, method: str | None = None) -> str:
    """The `rnnsearch align` flags of one variant (the default: plain argmax of alpha_i)."""
    flags = " ".join(f for f in (flags, f"--extract {extract}" if extract != "rows" else "",
                                 f"--threshold {threshold}" if threshold else "",
                                 f"--balance {balance}" if balance else "",
                                 f"--reverse-model FR_EN --symmetrize {method}" if method else "") if f)
    return f"`{flags}`" if flags else DEFAULT


def chosen_settings(translator, only: list[str] | None) -> dict[str, dict]:
    """``settings_of``, or only the readings named in ``only`` (their flags, "" for the default);
    a name the checkpoint has no reading for is an error that lists those it has."""
    settings = settings_of(translator)
    if only is None:
        return settings
    unknown = [name for name in only if name not in settings]
    if unknown:
        raise SystemExit(f"error: --readings: no reading {', '.join(map(repr, unknown))} for this checkpoint; "
                         f"it has: {', '.join(repr(k) for k in settings)}")
    return {name: settings[name] for name in only}


def attention_links(checkpoint: Path, test: list[tuple[str, str]], device: str = "cpu",
                    reverse: Path | None = None, only: list[str] | None = None) -> tuple[dict, float]:
    """Links of every variant (reading x extraction), or of the readings named in ``only``; with
    ``reverse`` (a Fr->En checkpoint), also each variant combined with the reverse model's same
    variant (``force_align.combine``: the intersection, grow-diag, grow-diag-final-and of the two
    directions' links, or their soft product), and the reverse model's own links (named ALONE + flags)."""
    translator = Translator.from_pretrained(str(checkpoint), device=device)
    back = Translator.from_pretrained(str(reverse), device=device) if reverse is not None else None
    flipped = [(t, s_) for s_, t in test]
    back_settings = settings_of(back) if back is not None else {}
    out, start, readings = {}, time.monotonic(), 0
    for flags, kwargs in chosen_settings(translator, only).items():
        forward = force_align(translator, test, **kwargs)
        readings += 1
        backward = None
        if flags in back_settings:  # a reading the Fr->En model has too (a head only if it has one)
            backward = force_align(back, flipped, **back_settings[flags])
            readings += 1
        for extract, threshold, balance in extractions():
            ours = [replace(a, links=hard_links(a.soft, threshold, extract, balance)) for a in forward]
            out[variant_name(flags, extract, threshold, balance)] = [a.links for a in ours]
            if backward is None:
                continue
            theirs = [replace(a, links=hard_links(a.soft, threshold, extract, balance)) for a in backward]
            out[ALONE + variant_name(flags, extract, threshold, balance)] = [turned(a).links for a in theirs]
            for method in ("intersection", "grow-diag", "grow-diag-final-and", "soft"):
                both = combine(ours, theirs, method, threshold, extract, balance)
                out[variant_name(flags, extract, threshold, balance, method)] = [a.links for a in both]
    return out, (time.monotonic() - start) / readings


def family(name: str) -> str:
    """A variant's kind, for the summary: its extraction and, with a Fr->En model, its combination."""
    words = name.strip("`").split()
    extract = words[words.index("--extract") + 1] if "--extract" in words else "rows"
    threshold = " + threshold" if "--threshold" in words and extract != "threshold" else ""
    threshold += ", balanced" if "--balance" in words else ""
    method = f", with Fr->En: {words[words.index('--symmetrize') + 1]}" if "--symmetrize" in words else ""
    method += ", Fr->En alone" if name.startswith(ALONE) else ""
    reading = "+".join(r for r in ("head", "posterior") if f"--{r}" in words) or "alpha"
    reading += ": "
    return f"{reading}{extract}{threshold}{method}"


def summary(rows: list) -> list:
    """The default, then each kind of attention links (``family``) by its variant with the lowest AER
    on the first half, best first, then every eflomal row."""
    attention = [r for r in rows if r[0].startswith("rnnsearch")]
    best: dict[str, tuple] = {}
    for r in attention:
        kind = family(r[1])
        if kind not in best or r[3]["aer"] < best[kind][3]["aer"]:
            best[kind] = r
    ranked = sorted(best.values(), key=lambda r: r[3]["aer"])
    default = [r for r in attention if r[1] == DEFAULT]
    return default + [r for r in ranked if r[1] != DEFAULT] + [r for r in rows if not r[0].startswith("rnnsearch")]


def table(rows: list) -> str:
    lines = ["| aligner | links | AER | precision | recall | AER 1-223 | AER 224-447 |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for who, name, r, first, second in rows:
        lines.append(f"| {who} | {name} | {r['aer']:.4f} | {r['precision']:.4f} | {r['recall']:.4f} | "
                     f"{first['aer']:.4f} | {second['aer']:.4f} |")
    return "\n".join(lines)


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


def _eflomal_version(reused: bool, work: Path, binary: str) -> str:
    """eflomal's version: of this Python's package, else of the Python beside --eflomal's binary;
    with --reuse on a machine without eflomal, where its links came from."""
    from importlib import metadata
    try:
        return metadata.version("eflomal")
    except metadata.PackageNotFoundError:
        pass
    found = Path(binary) if Path(binary).is_file() else None
    if found is not None and (found.parent / "python").exists():
        return subprocess.run([str(found.parent / "python"), "-c", "import importlib.metadata as m; "
                               "print(m.version('eflomal'))"], check=True, capture_output=True,
                              text=True).stdout.strip() + f" ({binary})"
    if not reused:
        raise SystemExit(f"error: eflomal's version: no eflomal package here or beside {binary}")
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
    parser.add_argument("--eflomal", default="eflomal-align", help="eflomal's binary: a path, or a name looked "
                        "up beside this Python, then on PATH")
    parser.add_argument("--readings", help="only these readings, comma-separated, each named by its flags as in the "
                        "table, e.g. '--natural,--natural --posterior' ('default' for plain alpha_i); default: all")
    parser.add_argument("--no-eflomal", action="store_true", help="score the attention only (no eflomal rows)")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    test, gold = wpt_pairs(), read_wpt_gold(WPT / "test.gold")
    reverse = Path(args.reverse_checkpoint) if args.reverse_checkpoint else None
    only = None if args.readings is None else \
        ["" if r.strip() == "default" else " ".join(r.split()) for r in args.readings.split(",")]
    ours, ours_s = attention_links(Path(args.checkpoint), test, args.device, reverse, only)
    found = [("rnnsearch attention", ours)]
    eflomal_text = ""
    if not args.no_eflomal:
        theirs, eflomal_s = eflomal_links(args.pairs, test, work, args.reuse, args.eflomal)
        found.append((f"eflomal ({args.pairs:,} pairs)", theirs))
        eflomal_text = f"; eflomal {_eflomal_version(args.reuse, work, args.eflomal)}: {eflomal_s:.0f} s"
    rows = [(who, name, *(alignment_error_rate(part(links), part(gold)) for part in HALVES))
            for who, links_of in found for name, links in links_of.items()]
    misses = "\n\n" + misses_text(ours[DEFAULT], gold, test) if DEFAULT in ours else ""
    text = (f"WPT 2003 En-Fr gold ({len(test)} sentences; AER, precision, recall summed over the corpus, "
            f"Och & Ney 2003), {date.today().isoformat()}. Command: `python experiments/aer.py "
            f"{' '.join(shlex.quote(a) for a in sys.argv[1:])}`. Attention: {ours_s:.1f} s per reading of the "
            f"{len(test)} pairs by a model{eflomal_text}.\n\n"
            f"Each kind of links by its variant with the lowest AER on sentences 1-{HALF} (variants: "
            f"`rnnsearch align` flags){'' if args.no_eflomal else ', and eflomal'}:\n\n" + table(summary(rows))
            + "\n\n" + held_out(rows) + misses + f"\n\n<details><summary>All {len(rows)} "
            f"variants</summary>\n\n" + table(rows) + "\n\n</details>\n")
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
