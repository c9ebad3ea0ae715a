"""Flags and helpers shared by several subcommands."""
from __future__ import annotations

import contextlib
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
    p.add_argument("--sample", action="store_true", help="draw outputs from the model's distribution instead "
                   "of searching (no --beam; --n-best N draws N per sentence)")
    p.add_argument("--sampling-topk", type=int, default=None, help="with --sample: draw among the k most "
                   "probable tokens (default 0: all)")
    p.add_argument("--temperature", type=float, default=None, help="with --sample: p^(1/T) (default 1)")
    p.add_argument("--seed", type=int, default=None, help="with --sample: the draws' seed (same seed, input "
                   "and batch size: same outputs)")


def add_unk_args(p) -> None:
    p.add_argument("--replace-unk", choices=["copy", "dict"], default=None,
                   help="replace each <unk> by its most attended source word (copy) or that word's "
                        "translation in --lexicon (dict, falling back to copy)")
    p.add_argument("--lexicon", help="lexical table from `rnnsearch lexicon` (for --replace-unk dict)")


def add_backend_args(p, ensemble: bool = True) -> None:
    p.add_argument("--backend", choices=["torch", "onnx"], default="torch",
                   help="torch, or the ONNX graphs of `rnnsearch export` under onnxruntime (made on the fly from "
                        "a checkpoint; CKPT may also be an export directory)")
    p.add_argument("--quantize", choices=["int8"], default=None, help="int8 weights for the decoding step")
    p.add_argument("--dtype", choices=["float32", "bf16"], default="float32",
                   help="bf16: products in bfloat16 (torch backend; fast on CPUs with AVX512-BF16 or AMX)")
    if ensemble:
        p.add_argument("--ensemble", nargs="+", metavar="CKPT", default=[],
                       help="more checkpoints with the same vocabularies: their probabilities are averaged at "
                            "every step of one beam search")


def add_decoding_args(p) -> None:
    """The search, back end and [UNK] flags of translate and evaluate."""
    add_search_args(p)
    add_backend_args(p)
    add_unk_args(p)


@contextlib.contextmanager
def progress_bar(total: int, what: str):
    """A tqdm bar of sentences on standard error while a file is translated (none when standard error
    is not a terminal); yields the callback the Translator calls after each batch."""
    from tqdm import tqdm
    with tqdm(total=total, desc=what, unit=" sentences", file=sys.stderr, disable=None, dynamic_ncols=True,
              leave=False) as bar:
        yield bar.update


def search_kwargs(args) -> dict:
    return {"length_penalty": args.length_penalty, "max_len_ratio": args.max_len_ratio,
            "batch_size": args.batch_size, "sampling": _sampling(args)}


def _sampling(args):
    from rnnsearch.decoding.sampling import Sampling
    given = [f for f, v in (("--sampling-topk", args.sampling_topk), ("--temperature", args.temperature),
                            ("--seed", args.seed)) if v is not None]
    if not args.sample:
        if given:
            raise UsageError(f"{', '.join(given)}: only with --sample")
        return None
    return Sampling(topk=args.sampling_topk or 0, temperature=1.0 if args.temperature is None else args.temperature,
                    seed=args.seed)


def load_translator(args, path: str):
    """A Translator for ``path`` with the [UNK] replacement the arguments ask for."""
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.decoding.unk import read_lexicon
    translator = Translator.from_pretrained(path, backend=args.backend, quantize=args.quantize, dtype=args.dtype)
    if getattr(args, "ensemble", None):
        translator.add_ensemble(args.ensemble)
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
