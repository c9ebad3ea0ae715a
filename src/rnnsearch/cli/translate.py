"""``rnnsearch translate`` (``score``, ``evaluate`` and ``plot-alignment``: cli/scoring.py)."""
from __future__ import annotations

import json
import signal
import sys
from contextlib import contextmanager

from rnnsearch.cli.common import (MODEL_HELP, add_decoding_args, add_settings_flags, load_translator,
                                  progress_bar, read_glossary_entries, read_input, search_settings,
                                  settings_from_flags, warn_language)
from rnnsearch.errors import UsageError


def register(sub) -> None:
    p = sub.add_parser("translate", help="translate raw text, one sentence per line")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--input", help="input file (default: standard input)")
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--buffer-size", type=int, default=10000, metavar="N",
                   help="translate and write N lines at a time (sorted by length within each part; default 10000)")
    p.add_argument("--prefix", metavar="F", help="a file of output prefixes, one per input line (blank: "
                   "none): each translation begins with its line's prefix, the model completes it")
    p.add_argument("--json-input", action="store_true",
                   help='each input line is a JSON object: {"text": ..., "constraints": [words or phrases the '
                        'output must contain], "avoid": [... it must not contain, nor with its first letter in the '
                        'other case]} (decoding/constraints.py)')
    p.add_argument("--markup", choices=["xml", "html"],
                   help="the input has inline tags: they are taken out, the text translated, and each put back "
                        "around the target words aligned to its source words (decoding/markup.py)")
    p.add_argument("--glossary", metavar="TSV",
                   help="terminology: lines of 'source term<TAB>target term'; a sentence whose source contains a "
                        "source term (as the model tokenises it, any case) must contain its target term")
    p.add_argument("--json-output", action="store_true",
                   help='each output line a JSON object: {"text", "score", "confidence": {"logprob" (per unit), '
                        '"unk_share", "low"} (null: not translated), "constraints_met", "error"} and, with '
                        '--n-best above 1, "nbest": [{"text", "score"}]')
    from rnnsearch.text.pipeline import TextSettings
    add_settings_flags(p, TextSettings)
    add_decoding_args(p)
    p.set_defaults(func=translate, tune=True)


NOT_TRANSLATED = 3  # the exit status when some line was not translated (the others are written)


def translate(args) -> int:
    from dataclasses import replace
    from rnnsearch.decoding.source import as_source
    from rnnsearch.files import writable_file
    from rnnsearch.text.pipeline import TextSettings
    text_settings = settings_from_flags(TextSettings, args)
    if args.output:
        inputs = [args.input, args.prefix, args.glossary, args.lexicon, args.shortlist]
        writable_file(args.output, inputs)  # before the model loads, in one line
    translator = load_translator(args, args.checkpoint)
    where = args.input if args.input not in (None, "-") else "<stdin>"
    translator.warn = lambda message: print(f"rnnsearch translate: warning: {where} {message}", file=sys.stderr)
    texts, newline = read_input(args.input)
    if args.markup and args.prefix:
        raise UsageError("--markup places tags over the whole output: not with --prefix")
    if text_settings.translate_attributes and args.markup != "html":
        raise UsageError("--translate-attributes translates HTML's attributes: give --markup html too")
    texts, marked, refused = _read_sources(texts, args, translator)
    glossary = read_glossary_entries(args.glossary, translator) if args.glossary else None
    if glossary and not marked:
        texts = _with_glossary(texts, glossary, translator)
    prefixes = _read_prefixes(args.prefix, where, len(texts)) if args.prefix else None
    if args.buffer_size < 1:
        raise UsageError(f"--buffer-size must be at least 1, got {args.buffer_size}")
    settings = search_settings(args, translator)
    if marked is not None and settings.n_best > 1:
        raise UsageError("--markup writes one translation per line: not with --n-best above 1")
    if not texts:
        print(f"rnnsearch translate: warning: {where} is empty: nothing to translate", file=sys.stderr)
    sources = [replace(as_source(t), prefix=prefixes[i]) for i, t in enumerate(texts)] if prefixes else texts
    failed = len(refused)
    with _output(args.output, newline) as out, progress_bar(len(texts), "translate") as advance:
        done = 0
        for results in _parts(translator, sources, marked, glossary, (settings, text_settings), args, advance):
            for i, r in enumerate(results, start=done):  # part by part, in input order
                failed += i not in refused and _not_translated(i, r, sources[i], marked, translator.warn)
                if i in refused:  # --json-output says why, as the warning did
                    r = replace(r, error=r.error or refused[i], constraints_met=False)
                out.write(_written(i, r, settings.n_best, args.json_output, text_settings, translator))
            done += len(results)
            out.flush()
    if failed:
        print(f"rnnsearch translate: {failed} of {len(texts)} lines not translated; see the warnings above "
              f"(exit status {NOT_TRANSLATED})", file=sys.stderr)
        return NOT_TRANSLATED
    return 0


@contextmanager
def _output(path: str | None, newline: str):
    """Standard output (each line ended by ``newline``), or the file ``path`` written whole or not at all: its
    old text stays until the last line is written, and a stop (an error, Ctrl-C, SIGTERM) leaves it as it was."""
    if not path:
        if newline != "\n" and hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(newline=newline)
        yield sys.stdout
        return
    from rnnsearch.files import file_whole_or_absent

    def stopped(signum, frame):
        print(f"rnnsearch translate: stopped by a signal: {path} left as it was", file=sys.stderr)
        raise SystemExit(128 + signum)
    previous = signal.signal(signal.SIGTERM, stopped)
    try:
        with file_whole_or_absent(path, newline) as fh:
            yield fh
    finally:
        signal.signal(signal.SIGTERM, previous)


def _written(i: int, r, n_best: int, as_json: bool, text_settings, translator) -> str:
    """What line i's translation writes: its text, its n best ('i ||| text ||| score'), or (``as_json``)
    one JSON object with its confidence; a warning where that is below ``--min-confidence`` and one
    naming the source words below ``--min-coverage`` (words it may have left out), and one where its length ratio
    is below ``--min-length-ratio``."""
    from rnnsearch.decoding.nbest import format_nbest
    from rnnsearch.text.confidence import doubts
    c, warnings = doubts(r, translator.src_codec, text_settings)
    for warning in warnings:
        translator.warn(f"line {i + 1}: {warning}")
    if as_json:
        row = {"text": r.text, "score": round(r.score, 4), "confidence": c.as_dict() if c else None,
               "constraints_met": r.constraints_met, "error": r.error}
        if n_best > 1:
            row["nbest"] = [{"text": h.text, "score": round(h.score, 4)} for h in r.nbest]
        return json.dumps(row, ensure_ascii=False) + "\n"
    if n_best > 1:
        return "".join(line + "\n" for line in format_nbest(i, r))
    return r.text + "\n"


def _not_translated(i: int, r, source, marked, warn) -> bool:
    """Whether line i (not refused before the search) was not translated, each such line named in a
    warning unless the search named it already."""
    from rnnsearch.decoding.source import as_source
    from rnnsearch.text.documents import NOTHING
    blank = marked is not None or not as_source(source).text.strip()  # markup: its error says
    if marked is not None and marked[i].error:  # found in the search (constraints over several blocks)
        warn(f"line {i + 1}: not translated: {marked[i].error}")
    elif (r.error or "").endswith(NOTHING) or (not r.error and not r.tokens and not blank):
        warn(f"line {i + 1}: not translated: {r.error or NOTHING}")  # the search warns of its own errors
    return bool(r.error) or (not r.tokens and not blank) or not r.constraints_met  # the search warned of the last


def _read_sources(texts: list[str], args, translator) -> tuple[list, list | None, dict[int, str]]:
    """The input lines as --json-input and --markup read them: the sources, each line's markup (None:
    no --markup), and the lines not translated before the search (malformed JSON or markup) with the
    reason of each, with the warnings of both readings in the order of their lines."""
    import re
    from rnnsearch.decoding.source import as_source
    early: list[str] = []
    refused: dict[int, str] = {}
    if args.json_input:
        texts = [_json_source(line, n, early.append, refused) for n, line in enumerate(texts, 1)]
    marked = None
    if args.markup:
        from rnnsearch.text.documents import read_lines
        marked = read_lines([as_source(t).text for t in texts], args.markup, early.append)  # --json-input: "text"
        refused |= {n: m.error for n, m in enumerate(marked) if m.error and n not in refused}
    else:
        from rnnsearch.text.documents import unmarked_tags
        tags = unmarked_tags([as_source(t).text for t in texts])
        early += [tags] if tags else []
    def line_of(message: str) -> int:
        found = re.match(r"line (\d+)", message)
        return int(found.group(1)) if found else 0
    for message in sorted(early, key=line_of):  # stable: one line's warnings keep their order
        translator.warn(message)
    warn_language([as_source(t).text for t in texts], bool(args.markup), translator, translator.warn)
    return texts, marked, refused


def _json_source(line: str, n: int, warn, refused: dict[int, str]):
    """One line of --json-input as a Source; a malformed one is a blank Source (an empty output line),
    with a one-line warning naming the line, and its index in ``refused`` with the reason."""
    from rnnsearch.decoding.source import Source
    if not line.strip():
        return Source("")  # a blank line: a blank output line, as in plain input
    try:
        row = json.loads(line)
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise ValueError('expected an object with a "text" string')
        unknown = set(row) - {"text", "constraints", "avoid"}
        if unknown:
            raise ValueError(f"unknown field {sorted(unknown)[0]!r} (fields: text, constraints, avoid)")
        lists = {k: row.get(k, []) for k in ("constraints", "avoid")}
        for k, v in lists.items():
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ValueError(f'"{k}" must be a list of strings')
        return Source(row["text"], constraints=tuple(lists["constraints"]), avoid=tuple(lists["avoid"]))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        refused[n - 1] = (f"not a --json-input line ({exc}): "
                          'write {"text": "...", "constraints": ["..."], "avoid": ["..."]}')
        warn(f"line {n}: not translated: {refused[n - 1]}")
        return Source("")


def _parts(translator, sources: list, marked: list | None, glossary: list | None, settings: tuple, args, advance):
    """The translations of the lines, part by part (``text/pipeline.translate_lines``; with --markup,
    ``text/documents.translate_marked``, the glossary matched unit by unit)."""
    from rnnsearch.decoding.source import as_source
    from rnnsearch.text.documents import translate_marked
    from rnnsearch.text.pipeline import translate_lines
    search, text_settings = settings
    if marked is None:
        return translate_lines(translator, sources, search, text_settings, args.buffer_size, advance)
    terms = (lambda units: _with_glossary(units, glossary, translator)) if glossary else None
    return translate_marked(translator, [as_source(t) for t in sources], marked, search, text_settings,
                            args.buffer_size, advance, terms)


def _with_glossary(texts: list, glossary: list, translator) -> list:
    """Each text as a Source with the glossary's terms its source holds (``text/glossary.apply``)."""
    from rnnsearch.text.glossary import apply
    return [apply(translator, glossary, t) for t in texts]


def _read_prefixes(path: str, where: str, count: int) -> list[str]:
    from rnnsearch.data.io import read_lines
    prefixes = read_lines(path)
    if len(prefixes) != count:
        raise UsageError(f"{path} has {len(prefixes)} prefix{'es' * (len(prefixes) != 1)} but {where} has {count} "
                         f"line{'s' * (count != 1)}: "
                         "give one per input line (blank for none)")
    return prefixes
