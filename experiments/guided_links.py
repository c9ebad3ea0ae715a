"""Word alignments of a config's training pairs for ``train.guided_alignment``, from eflomal.

    python experiments/guided_links.py CONFIG --out DIR [--set KEY=VALUE ...] [--reuse] [--symmetrize METHOD]

The training files are read and split into units as the trainer reads them (the same repairs, the
config's tokenizer and data.token_cache; with ``vocab.mode: sentencepiece``, the pieces of its fixed
``vocab.sp_model``, and the slots of ``data.slot_rate``), so that the links index the units the model reads. The
units go to eflomal lowercased (the indices do not change), one line per training line; eflomal
aligns both directions with its defaults, and the two are symmetrised with grow-diag-final-and.
Written to DIR: train.tok.{src,tgt}, train.fwd, train.rev and train.links, the file for
``--set train.guided_alignment=DIR/train.links``. ``--reuse`` keeps an earlier run's train.fwd and
train.rev; ``--symmetrize METHOD`` (intersection, grow-diag, ...) writes DIR/train.METHOD.links
instead of train.links (with ``--reuse``, the same eflomal links combined otherwise). eflomal comes
from ``pip install "eflomal>=2"`` (``make bench-aer`` installs it); the binary is looked up beside
this Python, then on PATH (``--eflomal`` names another).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rnnsearch.analysis.links import SYMMETRIZATIONS, format_pharaoh, symmetrize
from rnnsearch.config import ConfigError, load
from rnnsearch.data.guided import parse_pharaoh
from rnnsearch.data.io import corpus_file, read_parallel
from rnnsearch.data.slotting import slotted_lines
from rnnsearch.data.tokenize import load_sentencepiece, pretokenize_lines, sentencepiece_codec


def say(message: str) -> None:
    print(f"[guided-links {time.strftime('%H:%M:%S')}] {message}", flush=True)


def write_tokens(cfg, out: Path) -> tuple[Path, Path, int]:
    d = cfg.data
    src_lines, tgt_lines = read_parallel(corpus_file(d.dir, d.train, d.src_lang), corpus_file(d.dir, d.train, d.tgt_lang))
    paths = out / f"train.tok.{d.src_lang}", out / f"train.tok.{d.tgt_lang}"
    proto = load_sentencepiece(cfg.vocab.sp_model) if cfg.vocab.mode == "sentencepiece" else None
    if d.slot_rate:  # the pairs with slots, as the trainer reads them (data/slotting.py)
        src_lines, tgt_lines, _ = slotted_lines(src_lines, tgt_lines, 1, d.slot_rate)
    for lines, lang, path in ((src_lines, d.src_lang, paths[0]), (tgt_lines, d.tgt_lang, paths[1])):
        if proto is None:
            tokens = pretokenize_lines(lines, d.tokenizer, lang, d.token_cache, say)
        else:
            tokens = sentencepiece_codec(lang, d.tokenizer, proto).units_of(lines)
        path.write_text("".join(" ".join(t).lower() + "\n" for t in tokens), encoding="utf-8")
    return *paths, len(src_lines)


def eflomal_binary(name: str) -> str:
    """``name`` itself when it is a file, else beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / name
    found = name if Path(name).is_file() else str(beside) if beside.exists() else shutil.which(name)
    if not found:
        sys.exit(f"error: {name} not found beside {sys.executable} or on PATH: pip install 'eflomal>=2'")
    return found


def symmetrise(fwd: Path, rev: Path, out: Path, lines: int, method: str = "grow-diag-final-and") -> int:
    forward, reverse = fwd.read_text().split("\n")[:lines], rev.read_text().split("\n")[:lines]
    if len(forward) != lines or len(reverse) != lines:
        sys.exit(f"error: {fwd} has {len(forward)} lines, {rev} {len(reverse)}, the corpus {lines}")
    total = 0
    with out.open("w", encoding="utf-8") as f:
        for number, (a, b) in enumerate(zip(forward, reverse), start=1):
            links = symmetrize(parse_pharaoh(a, f"{fwd}:{number}"), parse_pharaoh(b, f"{rev}:{number}"), method)
            total += len(links)
            f.write(format_pharaoh(links) + "\n")
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--reuse", action="store_true", help="keep DIR/train.fwd and train.rev of an earlier run")
    ap.add_argument("--eflomal", default="eflomal-align")
    ap.add_argument("--symmetrize", choices=SYMMETRIZATIONS, default="grow-diag-final-and",
                    help="how the two directions are combined (other than the default: DIR/train.METHOD.links)")
    args = ap.parse_args()
    try:  # the config's own rules for train.guided_alignment: attention, and units the links can index
        cfg = load(args.config, [*args.set, f"train.guided_alignment={args.out / 'train.links'}"])
    except ConfigError as error:
        sys.exit(f"error: {error}")
    args.out.mkdir(parents=True, exist_ok=True)
    fwd, rev = args.out / "train.fwd", args.out / "train.rev"
    src, tgt, lines = write_tokens(cfg, args.out)
    say(f"{lines:,} training pairs pre-tokenised into {src} and {tgt}")
    if not (args.reuse and fwd.exists() and rev.exists()):
        start = time.monotonic()
        partial = [path.with_name(f".{path.name}.partial") for path in (fwd, rev)]  # whole files or none
        subprocess.run([eflomal_binary(args.eflomal), "-s", str(src), "-t", str(tgt), "-f", str(partial[0]),
                        "-r", str(partial[1]), "--overwrite"], check=True)
        for done, path in zip(partial, (fwd, rev)):
            done.replace(path)
        say(f"eflomal: {time.monotonic() - start:.0f} s")
    name = "train.links" if args.symmetrize == "grow-diag-final-and" else f"train.{args.symmetrize}.links"
    links, partial_links = args.out / name, args.out / f".{name}.partial"
    total = symmetrise(fwd, rev, partial_links, lines, args.symmetrize)
    partial_links.replace(links)  # a -guided trainer never reads half the links
    say(f"{links}: {total:,} links ({args.symmetrize}) on {lines:,} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
