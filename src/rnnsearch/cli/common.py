"""Flags and helpers shared by several subcommands."""
from __future__ import annotations

import argparse

import contextlib
import sys
import typing
from pathlib import Path

from rnnsearch.errors import UsageError, flag  # noqa: F401 (flag: the subcommands' name for a settings field)


def add_settings_flags(p, settings, flags: dict[str, str] | None = None) -> None:
    """One flag per field of the pydantic model ``settings``, with its default and description
    (``flags``: fields whose flag is not --field-name); a true boolean becomes --no-field."""
    for name, field in settings.model_fields.items():
        option = (flags or {}).get(name, flag(name))
        if field.annotation is bool:
            p.add_argument(option if not field.default else "--no-" + option[2:], dest=name, default=field.default,
                           action="store_false" if field.default else "store_true",
                           help=("do not " + field.description + " (done by default)") if field.default
                           else field.description)
        else:
            kind = next((t for t in typing.get_args(field.annotation) if t is not type(None)), field.annotation)
            p.add_argument(option, dest=name, type=kind, default=field.default,
                           help=f"{field.description} (default: {field.default})")


def settings_from_flags(settings, args, flags: dict[str, str] | None = None):
    """The pydantic model ``settings`` made from the flags of ``add_settings_flags``; a bad value
    is one line naming its flag."""
    from pydantic import ValidationError
    from rnnsearch.config import error_message
    try:
        return settings(**{name: getattr(args, name) for name in settings.model_fields})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0])
        raise UsageError(error_message(error, key=(flags or {}).get(field, flag(field)))) from None


MODEL_HELP = "a released model's name (models/NAME), a release folder, a checkpoint file or a URL"


def add_config_args(p) -> None:
    p.add_argument("config", help="a YAML config (configs/*.yaml; every key: rnnsearch/config.py)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value")


def add_search_args(p, n_best: bool = True) -> None:
    """The search flags; each default is the model's (its decode section), so none is written here."""
    p.add_argument("--beam", type=int, default=None, help="beam size (1 = greedy; default: the model's decode.beam)")
    if n_best:
        p.add_argument("--n-best", type=int, default=None, help="hypotheses per sentence, written as "
                       "'i ||| text ||| score' (default: the model's decode.n_best); with --sample, draws")
    p.add_argument("--length-penalty", type=float, default=None, help="GNMT length penalty alpha (0 = off; "
                   "default: the model's)")
    p.add_argument("--coverage-penalty", type=float, default=None, help="GNMT coverage penalty beta: finished "
                   "hypotheses ranked with beta x sum_j log min(attention source word j got, 1) added (0 = off; "
                   "default: the model's)")
    p.add_argument("--max-len-ratio", type=float, default=None, help="output length limit: ratio x source + 5 "
                   "(default: the model's)")
    p.add_argument("--batch-size", type=int, default=None, help="sentences decoded at once (default: the model's)")
    p.add_argument("--sample", action="store_true", help="draw outputs from the model's distribution instead "
                   "of searching (no --beam" + ("; --n-best N draws N per sentence)" if n_best else ")"))
    p.add_argument("--sampling-topk", type=int, default=None, help="with --sample: draw among the k most "
                   "probable tokens (default: all)")
    p.add_argument("--temperature", type=float, default=None, help="with --sample: p^(1/T) (default: 1)")
    p.add_argument("--seed", type=int, default=None, help="with --sample: the draws' seed (same seed, input "
                   "and batch size: same outputs)")


def explicit_keys(sets: list[str]) -> frozenset[str]:
    """The dotted keys that ``--set`` gives (which ``--init`` refuses to see contradict the parent)."""
    from rnnsearch.config import parse_override
    return frozenset(".".join(parse_override(text)[0]) for text in sets)


def add_unk_args(p) -> None:
    p.add_argument("--replace-unk", choices=["copy", "dict"], default=None,
                   help="replace each <unk> by its aligned source word (copy) or that word's translation in "
                        "--lexicon (dict, falling back to copy); aligned by the model's alignment head where it has "
                        "one, else by the attention")
    p.add_argument("--lexicon", help="lexical table from `rnnsearch lexicon` (for --replace-unk dict)")
    p.add_argument("--keep-unk", action="store_true", help="keep each <unk> as the model wrote it (a released "
                   "model replaces them by default: copy, or dict with its lexicon.tsv)")


def add_device_arg(p, what: str = "the model runs") -> None:
    p.add_argument("--device", default="cpu", type=device_name, help=f"cpu, cuda or cuda:N: where {what} (default: cpu)")


def device_name(text: str) -> str:
    """--device's value, refused by argparse in one line before a model loads where this PyTorch cannot run
    there (``cuda`` on a CPU build was an AssertionError traceback after the model had loaded)."""
    import torch
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r}: expected cpu, cuda or cuda:N") from None
    if device.type not in ("cpu", "cuda"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected cpu, cuda or cuda:N")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise argparse.ArgumentTypeError(f"{text!r}: this PyTorch sees no CUDA device (a CPU build, or no GPU): "
                                         "use cpu")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise argparse.ArgumentTypeError(f"{text!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return text


def add_backend_args(p, ensemble: bool = True) -> None:
    p.add_argument("--backend", choices=["torch", "onnx"], default="torch",
                   help="torch, or the ONNX graphs of `rnnsearch export` under onnxruntime (made on the fly from "
                        "a checkpoint; CKPT may also be an export directory)")
    p.add_argument("--quantize", choices=["int8"], default=None, help="int8 weights for the decoding step")
    p.add_argument("--dtype", choices=["float32", "bf16"], default="float32",
                   help="bf16: products in bfloat16 (torch backend; fast on CPUs with AVX512-BF16 or AMX)")
    add_shortlist_args(p)
    if ensemble:
        p.add_argument("--ensemble", nargs="+", metavar="CKPT", default=[],
                       help="more checkpoints with the same vocabularies: their probabilities are averaged at "
                            "every step of one beam search")


def add_shortlist_args(p) -> None:
    from rnnsearch.decoding.shortlist import BEST, FREQUENT
    p.add_argument("--shortlist", metavar="LEXICON", help="translate each sentence over its candidate words only: "
                   "the --shortlist-frequent most frequent target words and each source word's --shortlist-best "
                   "translations in LEXICON (`rnnsearch lexicon ... --per-source N`); torch backend")
    p.add_argument("--shortlist-frequent", type=int, default=FREQUENT, metavar="N",
                   help="with --shortlist: the most frequent target words every sentence may write")
    p.add_argument("--shortlist-best", type=int, default=BEST, metavar="N",
                   help="with --shortlist: translations per source word, most frequent first")


def no_shortlist_on_onnx(args) -> None:
    """A UsageError before any model loads: a shortlist narrows the torch backend's output layer."""
    if getattr(args, "shortlist", None) and getattr(args, "backend", "torch") == "onnx":
        raise UsageError("--shortlist narrows the torch backend's output layer: not with --backend onnx")


def set_shortlist(args, translator) -> None:
    """The --shortlist the flags ask for, if any, on ``translator``."""
    from rnnsearch.decoding.shortlist import FREQUENT, BEST, ShortlistTable
    if args.shortlist is None:
        if (args.shortlist_frequent, args.shortlist_best) != (FREQUENT, BEST):
            raise UsageError("--shortlist-frequent and --shortlist-best go with --shortlist LEXICON")
        return
    translator.set_shortlist(ShortlistTable.read(args.shortlist, translator.src_codec.vocab, translator.tgt_codec.vocab,
                                                 args.shortlist_frequent, args.shortlist_best))


def add_decoding_args(p, n_best: bool = True) -> None:
    """The search, back end and [UNK] flags of translate and evaluate."""
    add_search_args(p, n_best)
    add_backend_args(p)
    add_device_arg(p)
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="N processes search batches side by side, one thread each (as Marian's --cpu-threads): "
                        "on N cores, faster than N threads in one search (decoding/workers.py)")
    add_unk_args(p)


@contextlib.contextmanager
def progress_bar(total: int, what: str):
    """A tqdm bar of sentences on standard error while a file is translated (none when standard error
    is not a terminal); yields the callback the Translator calls after each batch."""
    from tqdm import tqdm
    with tqdm(total=total, desc=what, unit=" sentences", file=sys.stderr, disable=None, dynamic_ncols=True,
              leave=False) as bar:
        yield bar.update


SAMPLING_FLAGS = {"topk": "--sampling-topk", "temperature": "--temperature", "seed": "--seed"}


def search_settings(args, translator):
    """The SearchSettings the flags ask for, resolved against ``translator``'s model; a bad value
    is one line naming its flag."""
    return translator.search_settings(name=flag, beam=args.beam, n_best=getattr(args, "n_best", None),
                                      length_penalty=args.length_penalty, max_len_ratio=args.max_len_ratio,
                                      coverage_penalty=getattr(args, "coverage_penalty", None),
                                      batch_size=args.batch_size, sampling=_sampling(args))


def _sampling(args):
    from pydantic import ValidationError
    from rnnsearch.config import error_message
    from rnnsearch.decoding.sampling import Sampling
    given = {field: value for field, name in SAMPLING_FLAGS.items()
             if (value := getattr(args, name[2:].replace("-", "_"))) is not None}
    if not args.sample:
        if given:
            raise UsageError(f"{', '.join(SAMPLING_FLAGS[f] for f in given)}: only with --sample")
        return None
    try:
        return Sampling(**given)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UsageError(error_message(error, key=SAMPLING_FLAGS[str(error["loc"][0])])) from None


def load_translator(args, path: str):
    """A Translator for ``path`` with the [UNK] replacement the arguments ask for."""
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.decoding.unk import read_lexicon
    if args.lexicon and args.replace_unk != "dict":
        raise UsageError("--lexicon goes with --replace-unk dict")
    if args.keep_unk and args.replace_unk:
        raise UsageError("--keep-unk and --replace-unk ask for opposite things: give one")
    no_shortlist_on_onnx(args)
    translator = Translator.from_pretrained(path, device=args.device, backend=args.backend, quantize=args.quantize,
                                            dtype=args.dtype)
    if getattr(args, "ensemble", None):
        translator.add_ensemble(args.ensemble)
    if args.keep_unk or args.replace_unk:  # else the model's default (a release replaces)
        translator.set_unk_replacement(args.replace_unk, read_lexicon(args.lexicon) if args.lexicon else None)
    set_shortlist(args, translator)
    translator.set_workers(getattr(args, "workers", 1))
    return translator


def read_input(path: str | None) -> tuple[list[str], str]:
    """The lines of ``path``, or of standard input for None or '-', and the line end to write them back with:
    ``"\r\n"`` where the input's first line ends so (a Windows file stays one), else ``"\n"``."""
    from rnnsearch.data.io import ReadNotes, read_lines, split_lines
    notes = ReadNotes()
    lines = split_lines(sys.stdin.buffer.read(), "<stdin>", notes) if path in (None, "-") else read_lines(path, notes)
    crlf = next(iter(notes.found.values()), {}).get("CRLF line ends", [])
    return lines, "\r\n" if crlf[:1] == [1] else "\n"


def write_text(path: str | None, text: str) -> None:
    """``text`` to ``path``, or to standard output for None."""
    if path:
        Path(path).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def read_glossary_entries(path: str, translator) -> list:
    """The glossary file's entries as the model reads them (``text/glossary.entries``)."""
    from rnnsearch.decoding.constraints import read_glossary
    from rnnsearch.text.glossary import entries
    return entries(translator, read_glossary(path))


def warn_language(lines: list[str], tagged: bool, translator, warn) -> None:
    """``warn`` once where the lines' text (tags left out where ``tagged``) surely reads as another language
    than the model's source (text/language.py): the other direction's model, or a translation given back. Without
    py3langid (the files and serve extras) there is no check: translate and evaluate need no extra."""
    try:
        import py3langid  # noqa: F401
    except ImportError:
        return
    from rnnsearch.text.language import SAMPLE, TAGS, not_the_source
    text = " ".join(lines[:SAMPLE])
    said = not_the_source(TAGS.sub(" ", text) if tagged else text, translator.src_codec.lang, translator.tgt_codec.lang)
    if said:
        warn(said)
