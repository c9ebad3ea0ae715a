"""Command line: each subcommand parses its arguments and calls the library."""
from __future__ import annotations

import argparse
import sys

from rnnsearch import __version__
from rnnsearch.cli import commands


def _add_unk_args(p) -> None:
    p.add_argument("--replace-unk", choices=["copy", "dict"], default=None,
                   help="replace each <unk> by its most attended source word (copy) or that word's "
                        "translation in --lexicon (dict, falling back to copy)")
    p.add_argument("--lexicon", help="lexical table from `rnnsearch lexicon` (for --replace-unk dict)")


def _add_search_args(p, beam_default=None) -> None:
    p.add_argument("--beam", type=int, default=beam_default, help="beam size (1 = greedy; default: the config's)")
    p.add_argument("--length-penalty", type=float, default=None, help="GNMT length penalty alpha (0 = off)")
    p.add_argument("--max-len-ratio", type=float, default=None, help="output length limit: ratio x source + 5")
    p.add_argument("--batch-size", type=int, default=None, help="sentences decoded at once")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnnsearch", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rnnsearch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train a model from a YAML config")
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value")
    p.add_argument("--out", required=True, help="run directory (best.pt, last.pt, log.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from last.pt")
    p.set_defaults(func=commands.train)

    p = sub.add_parser("status", help="where training runs stand: updates, core-hours, dev BLEU, projection")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run directories (with log.jsonl)")
    p.add_argument("--target", type=float, default=None, help="dev BLEU to project the core-hours to")
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    p.set_defaults(func=commands.status)

    p = sub.add_parser("describe", help="build a config's model and print its parameter count")
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    p.set_defaults(func=commands.describe)

    p = sub.add_parser("translate", help="translate raw text, one sentence per line")
    p.add_argument("checkpoint")
    p.add_argument("--input", help="input file (default: standard input)")
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--n-best", type=int, default=1, help="write the n best as 'i ||| text ||| score'")
    _add_search_args(p)
    _add_unk_args(p)
    p.set_defaults(func=commands.translate)

    p = sub.add_parser("evaluate", help="sacreBLEU, the paper's Table 1 columns and BLEU by length")
    p.add_argument("checkpoint")
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--compare", nargs="+", metavar="CKPT", help="more checkpoints for one table and plot")
    p.add_argument("--names", help="comma-separated model names for the table and plot")
    p.add_argument("--plot", help="write BLEU by source length as a PNG here")
    p.add_argument("--hyp-out", help="write the translations here (one model only)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_search_args(p)
    _add_unk_args(p)
    p.set_defaults(func=commands.evaluate)

    p = sub.add_parser("plot-alignment", help="the paper's Figure 3 for one sentence")
    p.add_argument("checkpoint")
    p.add_argument("--sentence", help="the source sentence")
    p.add_argument("--input", help="a file of source sentences (with --line)")
    p.add_argument("--line", type=int, default=1, help="1-based line of --input")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--beam", type=int, default=None)
    p.set_defaults(func=commands.plot_alignment)

    p = sub.add_parser("data", help="prepare a public corpus, or check a parallel corpus")
    data_sub = p.add_subparsers(dest="data_command", required=True)
    for corpus in ("multi30k", "wmt14"):
        q = data_sub.add_parser(corpus, help=f"download and prepare {corpus} (needs a network)")
        q.add_argument("--out", required=True)
        q.set_defaults(func=commands.data, corpus=corpus)
    q = data_sub.add_parser("check", help="read a corpus as training does and report what is filtered")
    q.add_argument("--src", required=True, help="source side, one sentence per line (plain or .gz)")
    q.add_argument("--tgt", required=True, help="target side, line i pairs with source line i")
    q.add_argument("--max-len", type=int, default=50, help="longest pair kept, in tokens (as data.max_len)")
    q.add_argument("--tokenizer", choices=["moses", "space"], default="moses",
                   help="how tokens are counted (as data.tokenizer)")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.set_defaults(func=commands.data_check)

    p = sub.add_parser("report", help="the paper's Table 1, Figures 2 and 3, long sentences, training curves")
    p.add_argument("--model", action="append", required=True, metavar="NAME=CKPT",
                   help="a model to include (repeat); the first one's alignments make Figure 3")
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--out", required=True, help="directory for report.md, report.html and the PNGs")
    p.add_argument("--beam", type=int, default=None)
    p.add_argument("--sentence", help="Figure 3's given sentence (default: the first test sentence)")
    p.add_argument("--seed", type=int, default=1, help="seed of Figure 3's and the long examples' samples")
    p.add_argument("--long", type=int, default=5, help="long-sentence examples to show")
    p.add_argument("--figure3", metavar="NAME", help="the model whose alignments Figure 3 shows "
                   "(default: the first model with attention)")
    p.add_argument("--notes", metavar="FILE", help="Markdown placed near the top of the report (how the "
                   "models were trained, and why)")
    p.set_defaults(func=commands.report)

    p = sub.add_parser("align", help="forced alignment of sentence pairs from the model's attention")
    p.add_argument("checkpoint")
    p.add_argument("--src", help="source sentences (whitespace-separated words)")
    p.add_argument("--tgt", help="target sentences, line i pairs with source line i")
    p.add_argument("--pairs", help="or one file of 'source ||| target' lines (the WPT test.en-fr)")
    p.add_argument("--format", choices=["pharaoh", "json", "npz"], default="pharaoh")
    p.add_argument("--out", help="output file (default: standard output; npz needs one)")
    p.add_argument("--gold", help="WPT gold links: also print AER, precision, recall")
    p.add_argument("--shift", type=int, default=0, choices=[-1, 0, 1],
                   help="link y_i with the attention of step i + shift (0: the step that emits y_i)")
    p.add_argument("--threshold", type=float, default=None,
                   help="also link every source word with at least this weight (beside the argmax)")
    p.set_defaults(func=commands.align)

    p = sub.add_parser("lexicon", help="lexical table for --replace-unk dict, from forced alignments")
    p.add_argument("checkpoint")
    p.add_argument("--src", required=True, help="training source sentences (raw text)")
    p.add_argument("--tgt", required=True, help="training target sentences")
    p.add_argument("--out", required=True, help="TSV: source, target, p(target | source), links")
    p.add_argument("--max-pairs", type=int, default=0, help="use the first N pairs (0 = all)")
    p.add_argument("--max-len", type=int, default=80, help="leave out pairs with more words than this")
    p.add_argument("--min-count", type=int, default=1, help="keep entries seen at least this often")
    p.set_defaults(func=commands.lexicon)

    p = sub.add_parser("aer", help="alignment error rate of Pharaoh links against WPT 2003 gold links")
    p.add_argument("--pred", required=True, help="Pharaoh file: i-j, 0-based, source (English) first")
    p.add_argument("--gold", required=True, help="WPT gold: i-j sure, ipj possible, 1-based, English first")
    p.add_argument("--reverse", action="store_true", help="--pred is target-first (e.g. a Fr->En model)")
    p.add_argument("--json", action="store_true", help='print {"aer": .., "precision": .., "recall": ..}')
    p.set_defaults(func=commands.aer)

    p = sub.add_parser("serve", help="HTTP API and web page: translations with their alignments")
    p.add_argument("checkpoint")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--no-batching", action="store_true", help="search each request on its own")
    p.add_argument("--max-batch", type=int, default=32, help="sentences per search when batching")
    p.add_argument("--window-ms", type=float, default=5.0, help="how long a request waits for company")
    p.add_argument("--max-chars", type=int, default=1000, help="characters per text")
    p.add_argument("--max-texts", type=int, default=64, help="texts per request")
    p.add_argument("--max-body-bytes", type=int, default=256 * 1024, help="request body size")
    p.add_argument("--max-queue", type=int, default=1024, help="sentences waiting; more are refused (503)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    p.add_argument("--max-beam", type=int, default=20, help="largest beam a request may ask for")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func=commands.serve)

    p = sub.add_parser("synth", help="write the built-in synthetic demo corpus")
    p.add_argument("--out", required=True)
    p.add_argument("--train", type=int, default=6000)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=commands.synth)
    return parser


def main(argv: list[str] | None = None) -> int:
    from rnnsearch.checkpoint import CheckpointError
    from rnnsearch.config import ConfigError
    from rnnsearch.data.io import DataError
    from rnnsearch.training.trainer import TrainError
    args = build_parser().parse_args(argv)
    if args.command in ("train", "translate", "evaluate", "serve"):
        from rnnsearch.training.runtime import tune_process
        tune_process()
    try:
        return args.func(args)
    except (ConfigError, DataError, CheckpointError, TrainError, ValueError, OSError) as exc:
        print(f"rnnsearch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rnnsearch {args.command}: interrupted", file=sys.stderr)
        return 130
