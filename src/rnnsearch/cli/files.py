"""``rnnsearch translate-file IN OUT``: a document in its own format (text/files.py)."""
from __future__ import annotations

import sys

from rnnsearch.cli.common import (MODEL_HELP, add_decoding_args, add_settings_flags, load_translator, progress_bar,
                                  search_settings, settings_from_flags)

NOT_TRANSLATED = 3  # as translate's: some piece was not translated (the others are written)


def register(sub) -> None:
    from rnnsearch.text.files import FORMATS
    from rnnsearch.text.settings import TextSettings
    p = sub.add_parser("translate-file", help="translate a document in its own format: "
                       + ", ".join(sorted(FORMATS)))
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("input", help="the file to translate (its suffix names its format)")
    p.add_argument("output", help="where to write the translation (the same format), whole or not at all")
    p.add_argument("--retranslate", action="store_true", help="translate units already translated too (XLIFF "
                   "targets, PO msgstrs); by default they are left as they are")
    add_settings_flags(p, TextSettings)
    add_decoding_args(p, n_best=False)
    p.set_defaults(func=translate_file, tune=True)


def translate_file(args) -> int:
    from rnnsearch.extras import require
    require("files", "rnnsearch translate-file")
    from rnnsearch.text.files import check_paths, translate_file as run
    from rnnsearch.text.settings import TextSettings
    check_paths(args.input, args.output)  # refused before the model is loaded
    text_settings = settings_from_flags(TextSettings, args)
    translator = load_translator(args, args.checkpoint)
    translator.warn = lambda message: print(f"rnnsearch translate-file: warning: {args.input} {message}",
                                            file=sys.stderr)
    settings = search_settings(args, translator)
    with progress_bar(0, "translate-file") as advance:
        report = run(translator, args.input, args.output, settings, text_settings, args.retranslate, advance,
                     warn=lambda message: print(f"rnnsearch translate-file: warning: {message}", file=sys.stderr))
    done = report.units - len(report.failed)
    print(f"rnnsearch translate-file: {args.output}: {done} of {_count(report.units, 'unit')} translated"
          + (f"; {_count(report.skipped, 'unit')} already translated left as "
             f"{'it was' if report.skipped == 1 else 'they were'}" if report.skipped else ""), file=sys.stderr)
    if report.failed:
        print(f"rnnsearch translate-file: {len(report.failed)} of {_count(report.units, 'unit')} not translated; see "
              f"the warnings above (exit status {NOT_TRANSLATED})", file=sys.stderr)
        return NOT_TRANSLATED
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
