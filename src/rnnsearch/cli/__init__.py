"""Command line: ``rnnsearch SUBCOMMAND``. Each module of this package holds a group of subcommands,
their flags and the call into the library side by side; the library does the work.

Errors a user can fix (rnnsearch.errors.UserError: a bad config, corpus, checkpoint or argument)
and failures to read or write a file print one line and exit 2; anything else is a bug and keeps
its traceback."""
from __future__ import annotations

import argparse
import gc
import sys

from rnnsearch import __version__
from rnnsearch.cli import analysis, data, deploy, files, scoring, serve, train, translate
from rnnsearch.errors import UserError

GROUPS = (train, translate, files, scoring, deploy, analysis, data, serve)


class HelpWithDefaults(argparse.HelpFormatter):
    """Each flag's help ends with its default, unless it has none (None, off, empty) or says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (action.option_strings and "default" not in text and default not in (None, False, [], argparse.SUPPRESS)
                and not isinstance(action, (argparse._StoreFalseAction, argparse._VersionAction))):
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnnsearch", description="Neural machine translation by jointly learning to "
                                     "align and translate (Bahdanau et al. 2014): train, translate, evaluate, serve.")
    parser.add_argument("--version", action="version", version=f"rnnsearch {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    for command in commands(parser).values():
        command.formatter_class = HelpWithDefaults
    return parser


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its name ("translate", "data check", ...)."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found[prefix + name] = command
                found.update(commands(command, prefix + name + " "))
    return found


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "tune", False):  # malloc, denormals, oneDNN caches: before torch's first use
        from rnnsearch.runtime import tune_process
        tune_process()
    try:
        return args.func(args)
    except (UserError, OSError) as exc:
        print(f"rnnsearch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rnnsearch {args.command}: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The ``rnnsearch`` program (and ``python -m rnnsearch``): :func:`main` in a process of its own.
    Python's cyclic garbage collector stays off while torch is imported (every command imports it:
    build_parser does), and the objects the import made are then frozen (``gc.freeze``), so that no
    collection walks them again, at exit neither: 0.45 s of the 2.4 s that translating one sentence
    with the released RNNsearch-50 took, whole process (BENCHMARKS.md). Not in :func:`main`, which
    tests and Python callers run in their own processes, where frozen objects would never be freed."""
    gc.disable()
    try:
        import torch  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()
    code = main()
    gc.freeze()  # what the command made: the last collection, at exit, need not walk it
    sys.exit(code)
