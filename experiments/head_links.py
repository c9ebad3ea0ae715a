"""Training links from the two directions' alignment heads, symmetrised: a teacher for a second
round of heads (self-training, #63).

    python experiments/head_links.py FORWARD REVERSE --pairs N --out FILE [--set KEY=VALUE ...]
        [--reading head+posterior] [--extract intersection] [--symmetrize soft] [--threshold W]

FORWARD is a model with a head (En->Fr), REVERSE one of the other direction (Fr->En). The
training pairs are read as FORWARD's trainer reads them (its config, with ``--set`` overrides such
as ``data.dir``), and the pairs ``train-align-head --pairs N`` samples for training (its seed, same
corpus: the same rows; not its held-out pairs, whose cost it then measures on </s> alone) are aligned
both ways and symmetrised as ``rnnsearch align --reverse-model`` does. Written: FILE, one line of
Pharaoh links per training line (empty for the lines not sampled), for ``train-align-head FORWARD
--links FILE --pairs N``, and FILE.flipped, the same links target-source, for REVERSE's head.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from rnnsearch import checkpoint
from rnnsearch.errors import UsageError
from rnnsearch.analysis.force_align import COMBINATIONS, EXTRACTIONS, check_reading, combine, force_align
from rnnsearch.analysis.links import format_pharaoh
from rnnsearch.config import apply_overrides, from_dict
from rnnsearch.data.io import corpus_file, filter_pairs, read_parallel
from rnnsearch.decoding import pretrained
from rnnsearch.decoding.translator import Translator
from rnnsearch.training.align_head import HeadSettings, _sample


def say(message: str) -> None:
    print(f"[head-links {time.strftime('%H:%M:%S')}] {message}", flush=True)


class _Rows:  # what _sample reads of a corpus: its number of pairs
    def __init__(self, n: int):
        self.src_ids = range(n)


def sampled_pairs(forward: Translator, source: str, overrides: list[str], pairs: int):
    """-> (number of training lines, sampled line indices, their (source, target) unit texts)."""
    cfg = from_dict(apply_overrides(checkpoint.load(pretrained.weights_path(source))["config"], overrides))
    d = cfg.data
    if d.prepared:
        raise SystemExit(f"error: data.prepared is {d.prepared!r}: read the text files instead (--set data.prepared=)")
    src_lines, tgt_lines = read_parallel(corpus_file(d.dir, d.train, d.src_lang), corpus_file(d.dir, d.train, d.tgt_lang))
    total = len(src_lines)
    if d.max_train_pairs:  # the trainer's first lines only, as corpus._read_train takes them
        src_lines, tgt_lines = src_lines[:d.max_train_pairs], tgt_lines[:d.max_train_pairs]
    src_units = forward.src_codec.units_of(src_lines, d.token_cache, say)
    tgt_units = forward.tgt_codec.units_of(tgt_lines, d.token_cache, say)
    keep, report = filter_pairs("train", src_units, tgt_units, d.max_len)
    say(report.summary())
    train_rows, _ = _sample(_Rows(len(keep)), HeadSettings(pairs=pairs))
    lines = sorted((keep[int(r)] for r in train_rows), key=lambda i: (len(tgt_units[i]), i))  # little padding
    return total, lines, [(" ".join(src_units[i]), " ".join(tgt_units[i])) for i in lines]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("forward")
    ap.add_argument("reverse")
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--reading", default="head+posterior", choices=["head", "head+posterior"])
    ap.add_argument("--extract", default="intersection", choices=EXTRACTIONS)
    ap.add_argument("--symmetrize", default="soft", choices=COMBINATIONS)
    ap.add_argument("--threshold", type=float, help="as `rnnsearch align --threshold` (--extract threshold needs one)")
    ap.add_argument("--batch-size", type=int, default=40)
    args = ap.parse_args(argv)
    try:
        check_reading(args.extract, 0, args.threshold)  # the library's check, before any model is read
    except UsageError as e:
        ap.error(str(e))
    forward, reverse = Translator.from_pretrained(args.forward), Translator.from_pretrained(args.reverse)
    total, lines, pairs = sampled_pairs(forward, args.forward, args.set, args.pairs)
    say(f"{len(pairs):,} pairs of {total:,} lines to align both ways ({args.reading}, {args.extract}, {args.symmetrize})")
    links: dict[int, set] = {}
    t0, step = time.time(), 2000
    read = {"extract": args.extract, "threshold": args.threshold, "reading": args.reading}
    for start in range(0, len(pairs), step):
        part = pairs[start:start + step]
        fwd = force_align(forward, part, args.batch_size, **read)
        rev = force_align(reverse, [(t, s) for s, t in part], args.batch_size, **read)
        both = combine(fwd, rev, args.symmetrize, args.threshold, args.extract)
        for line, a in zip(lines[start:start + step], both):
            links[line] = a.links
        say(f"{start + len(part):,} pairs, {time.time() - t0:.0f} s")
    for path, flip in ((args.out, False), (Path(f"{args.out}.flipped"), True)):
        tmp = path.with_suffix(path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for i in range(total):
                found = links.get(i, set())
                f.write(format_pharaoh({(t, s) for s, t in found} if flip else found) + "\n")
        tmp.replace(path)
    say(f"wrote {args.out} and {args.out}.flipped: links on {len(links):,} of {total:,} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
