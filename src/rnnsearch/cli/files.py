"""``rnnsearch translate-file IN OUT``: a document in its own format (text/files.py); ``rnnsearch
transfer-tags``: a source's tags into a translation the model did not write (analysis/transfer_tags.py)."""
from __future__ import annotations

import sys

from rnnsearch.cli.common import (MODEL_HELP, add_decoding_args, add_settings_flags, load_translator, progress_bar,
                                  read_glossary_entries, search_settings, settings_from_flags)
from rnnsearch.files import writable_file

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
                   "targets, PO msgstrs); by default they are left as they are; a target signed off (XLIFF state final or "
                   "signed-off) is left alone even so")
    p.add_argument("--glossary", metavar="TSV", help="terms each unit's translation must use, one 'source<TAB>target' "
                   "a line, as translate --glossary")
    p.add_argument("--any-language", action="store_true", help="translate a file even where its text surely reads "
                   "as another language than the model's source (refused by default: translated already, or the "
                   "other direction's file?)")
    add_settings_flags(p, TextSettings)
    add_decoding_args(p, n_best=False)
    p.set_defaults(func=translate_file, tune=True)
    _register_transfer(sub)


def _register_transfer(sub) -> None:
    p = sub.add_parser("transfer-tags", help="place a tagged source's tags into its given translation (a "
                       "translator's post-edit) through the alignment head")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="the tagged sources, one a line (XML, or HTML with --markup html)")
    p.add_argument("--tgt", required=True, help="their translations without tags, line i translating source line i")
    p.add_argument("--out", required=True, help="where to write the translations with the tags, whole or not at all")
    p.add_argument("--reverse-model", metavar="CKPT", help="a model of the other direction (e.g. Fr->En): place "
                   "the tags by both directions' alignment heads, symmetrised")
    p.add_argument("--links", metavar="PHARAOH", help="place by another aligner's links (e.g. eflomal's): 's-t' per "
                   "line, 0-based, over the whitespace-separated words of the source without its tags and of the "
                   "translation")
    p.add_argument("--reading", choices=["head", "attention", "symmetrised"], default=None,
                   help="the alignment to place by (default: the links where given, else symmetrised with "
                   "--reverse-model, else the alignment head where the model has one, else the attention)")
    p.add_argument("--markup", choices=["xml", "html"], default="xml", help="how the sources' tags are read")
    p.set_defaults(func=transfer_tags, tune=True)


def translate_file(args) -> int:
    from rnnsearch.extras import require
    require("files", "rnnsearch translate-file")
    from rnnsearch.text.files import check_paths, translate_file as run
    from rnnsearch.text.settings import TextSettings
    check_paths(args.input, args.output)  # refused before the model is loaded
    if args.glossary:
        writable_file(args.output, [args.glossary])
    text_settings = settings_from_flags(TextSettings, args)
    translator = load_translator(args, args.checkpoint)
    translator.warn = lambda message: print(f"rnnsearch translate-file: warning: {args.input} {message}",
                                            file=sys.stderr)
    settings = search_settings(args, translator)
    glossary = read_glossary_entries(args.glossary, translator) if args.glossary else None
    with progress_bar(0, "translate-file") as advance:
        report = run(translator, args.input, args.output, settings, text_settings, args.retranslate, advance,
                     any_language=args.any_language, glossary=glossary,
                     warn=lambda message: print(f"rnnsearch translate-file: warning: {message}", file=sys.stderr))
    done = report.units - len(report.failed)
    if report.units == 0 and not report.skipped:  # as `translate` says of an empty input
        print(f"rnnsearch translate-file: warning: {args.input} holds nothing to translate", file=sys.stderr)
    print(f"rnnsearch translate-file: {args.output}: {done} of {_count(report.units, 'unit')} translated"
          + (f"; {_count(report.skipped, 'unit')} already translated left as "
             f"{'it was' if report.skipped == 1 else 'they were'}" if report.skipped else "")
          + (f"; {_count(report.other_language, 'unit')} in another language left as "
             f"{'it was' if report.other_language == 1 else 'they were'} (--any-language translates "
             f"{'it' if report.other_language == 1 else 'them'})" if report.other_language else ""), file=sys.stderr)
    if report.failed:
        print(f"rnnsearch translate-file: {len(report.failed)} of {_count(report.units, 'unit')} not translated; see "
              f"the warnings above (exit status {NOT_TRANSLATED})", file=sys.stderr)
        return NOT_TRANSLATED
    return 0


def transfer_tags(args) -> int:
    from pathlib import Path

    from rnnsearch.analysis.links import read_pharaoh
    from rnnsearch.analysis.transfer_tags import transfer_tags as run
    from rnnsearch.data.io import read_lines
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.errors import UsageError
    from rnnsearch.files import writable_file, write_whole
    if Path(args.out).resolve() in (Path(args.src).resolve(), Path(args.tgt).resolve()):
        raise UsageError(f"{args.out}: the output would overwrite an input; name another file")
    writable_file(args.out)
    sources, translations = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(translations):
        raise UsageError(f"{args.src} has {len(sources)} lines and {args.tgt} {len(translations)}: give each source "
                         "line its translation on the same line")
    links = read_pharaoh(args.links) if args.links else None
    if links is not None and args.reading:
        raise UsageError("--links places the tags by the links given: leave --reading out")
    translator = Translator.from_pretrained(args.checkpoint)
    reverse = Translator.from_pretrained(args.reverse_model) if args.reverse_model else None
    done = run(translator, sources, translations, args.markup, args.reading, reverse, links, "words")
    write_whole(args.out, "".join(d.text + "\n" for d in done))
    failed = [(n, d.error) for n, d in enumerate(done, 1) if d.error]
    for n, why in failed:
        print(f"rnnsearch transfer-tags: warning: {args.src}:{n}: tags not placed (the translation written without "
              f"them): {why}", file=sys.stderr)
    lines = sum(1 for s in sources if s.strip())
    print(f"rnnsearch transfer-tags: {args.out}: tags placed in {lines - len(failed)} of {_count(lines, 'line')}",
          file=sys.stderr)
    return NOT_TRANSLATED if failed else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
