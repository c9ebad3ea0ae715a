"""Flags and helpers shared by several subcommands."""
from __future__ import annotations

import sys
from pathlib import Path

from rnnsearch.errors import UsageError


def add_config_args(p) -> None:
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value")


def add_search_args(p, beam_default=None) -> None:
    p.add_argument("--beam", type=int, default=beam_default, help="beam size (1 = greedy; default: the config's)")
    p.add_argument("--length-penalty", type=float, default=None, help="GNMT length penalty alpha (0 = off)")
    p.add_argument("--max-len-ratio", type=float, default=None, help="output length limit: ratio x source + 5")
    p.add_argument("--batch-size", type=int, default=None, help="sentences decoded at once")


def add_unk_args(p) -> None:
    p.add_argument("--replace-unk", choices=["copy", "dict"], default=None,
                   help="replace each <unk> by its most attended source word (copy) or that word's "
                        "translation in --lexicon (dict, falling back to copy)")
    p.add_argument("--lexicon", help="lexical table from `rnnsearch lexicon` (for --replace-unk dict)")


def search_kwargs(args) -> dict:
    return {"length_penalty": args.length_penalty, "max_len_ratio": args.max_len_ratio,
            "batch_size": args.batch_size}


def load_translator(args, path: str):
    """A Translator for ``path`` with the [UNK] replacement the arguments ask for."""
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.decoding.unk import read_lexicon
    translator = Translator.from_checkpoint(path)
    if args.lexicon and args.replace_unk != "dict":
        raise UsageError("--lexicon goes with --replace-unk dict")
    translator.set_unk_replacement(args.replace_unk, read_lexicon(args.lexicon) if args.lexicon else None)
    return translator


def read_input(path: str | None) -> list[str]:
    """The lines of ``path``, or of standard input for None or '-'."""
    from rnnsearch.data.io import read_lines, split_lines
    if path in (None, "-"):
        return split_lines(sys.stdin.buffer.read(), "<stdin>")
    return read_lines(path)


def write_text(path: str | None, text: str) -> None:
    """``text`` to ``path``, or to standard output for None."""
    if path:
        Path(path).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
