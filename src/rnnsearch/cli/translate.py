"""``rnnsearch translate``, ``score``, ``evaluate`` and ``plot-alignment``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from rnnsearch.cli.common import (MODEL_HELP, add_decoding_args, add_device_arg, add_settings_flags, load_translator,
                                  progress_bar, read_input, search_settings, settings_from_flags)
from rnnsearch.errors import UsageError
from rnnsearch.data.vocab import EOS_TOKEN


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
                        'output must contain], "avoid": [... it must not contain]} (decoding/constraints.py)')
    p.add_argument("--markup", choices=["xml", "html"],
                   help="the input has inline tags: they are taken out, the text translated, and each put back "
                        "around the target words aligned to its source words (decoding/markup.py)")
    p.add_argument("--glossary", metavar="TSV",
                   help="terminology: lines of 'source term<TAB>target term'; a sentence whose source contains a "
                        "source term (as the model tokenises it, any case) must contain its target term")
    from rnnsearch.text.pipeline import TextSettings
    add_settings_flags(p, TextSettings)
    add_decoding_args(p)
    p.set_defaults(func=translate, tune=True)

    p = sub.add_parser("score", help="log p(target | source) of given sentence pairs, one line per pair")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="source sentences (raw text)")
    p.add_argument("--tgt", required=True, help="target sentences, line i pairs with source line i")
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--normalize", action="store_true", help="write the log-probability per target unit")
    p.add_argument("--json", action="store_true", help="one JSON object per pair: logprob, units, unknown")
    p.add_argument("--units", action="store_true", help="with --json, also each target unit and its "
                   "log-probability (tokens, unit_logprobs: </s> last)")
    p.add_argument("--batch-size", type=int, default=None, help="pairs read at once")
    p.add_argument("--dtype", choices=["float32", "bf16"], default="float32", help="bf16: products in bfloat16")
    add_device_arg(p)
    p.set_defaults(func=score, tune=True)

    p = sub.add_parser("evaluate", help="sacreBLEU, the paper's Table 1 columns and BLEU by length")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="the test set's source sentences (raw text)")
    p.add_argument("--ref", required=True, help="its reference translations, line i for source line i")
    p.add_argument("--compare", nargs="+", metavar="CKPT", help="more checkpoints for one table and plot")
    p.add_argument("--names", help="comma-separated model names for the table and plot")
    p.add_argument("--plot", help="write BLEU by source length as a PNG here")
    p.add_argument("--hyp-out", help="write the translations here (one model only)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_decoding_args(p, n_best=False)
    p.set_defaults(func=evaluate, tune=True)

    p = sub.add_parser("plot-alignment", help="the paper's Figure 3 for one sentence")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--sentence", help="the source sentence")
    p.add_argument("--input", help="a file of source sentences (with --line)")
    p.add_argument("--line", type=int, default=1, help="1-based line of --input")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--beam", type=int, default=None, help="beam size (1 = greedy; default: the model's decode.beam)")
    add_device_arg(p)
    p.set_defaults(func=plot_alignment)


NOT_TRANSLATED = 3  # the exit status when some line was not translated (the others are written)


def translate(args) -> int:
    from rnnsearch.decoding.nbest import format_nbest
    from dataclasses import replace
    from rnnsearch.decoding.source import as_source
    from rnnsearch.text.pipeline import TextSettings
    text_settings = settings_from_flags(TextSettings, args)
    translator = load_translator(args, args.checkpoint)
    where = args.input if args.input not in (None, "-") else "<stdin>"
    translator.warn = lambda message: print(f"rnnsearch translate: warning: {where} {message}", file=sys.stderr)
    texts = read_input(args.input)
    refused: set[int] = set()  # lines not translated before the search (malformed JSON or markup)
    if args.json_input:
        texts = [_json_source(line, n, where, refused) for n, line in enumerate(texts, 1)]
    marked = None
    if args.markup:
        if args.prefix:
            raise UsageError("--markup places tags over the whole output: not with --prefix")
        from rnnsearch.text.documents import read_lines
        marked = read_lines([as_source(t).text for t in texts], args.markup, translator.warn)  # --json-input: "text"
        refused |= {n for n, m in enumerate(marked) if m.error}
    glossary = _read_glossary(args.glossary, translator) if args.glossary else None
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
    out, failed = None, len(refused)  # opened once the first part is translated: a refused request leaves no file behind
    try:
        with progress_bar(len(texts), "translate") as advance:
            done = 0
            for results in _parts(translator, sources, marked, glossary, (settings, text_settings), args, advance):
                out = out or (open(args.output, "w", encoding="utf-8") if args.output else sys.stdout)
                for i, r in enumerate(results, start=done):  # part by part, in input order
                    failed += i not in refused and _not_translated(i, r, sources[i], marked, translator.warn)
                    if settings.n_best > 1:
                        out.write("".join(line + "\n" for line in format_nbest(i, r)))
                    else:
                        out.write(r.text + "\n")
                done += len(results)
                out.flush()
        out = out or (open(args.output, "w", encoding="utf-8") if args.output else sys.stdout)  # empty input
    finally:
        if out not in (None, sys.stdout):
            out.close()
    if failed:
        print(f"rnnsearch translate: {failed} of {len(texts)} lines not translated; see the warnings above "
              f"(exit status {NOT_TRANSLATED})", file=sys.stderr)
        return NOT_TRANSLATED
    return 0


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
    return bool(r.error) or (not r.tokens and not blank)


def _json_source(line: str, n: int, where: str, refused: set[int]):
    """One line of --json-input as a Source; a malformed one is a blank Source (an empty output line),
    with a one-line warning naming the line, and its index in ``refused``."""
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
        print(f"rnnsearch translate: warning: {where} line {n}: not translated: not a --json-input line ({exc}): "
              'write {"text": "...", "constraints": ["..."], "avoid": ["..."]}', file=sys.stderr)
        refused.add(n - 1)
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


def _read_glossary(path: str, translator) -> list:
    """The glossary file's entries as the model reads them (``text/glossary.entries``)."""
    from rnnsearch.decoding.constraints import read_glossary
    from rnnsearch.text.glossary import entries
    return entries(translator, read_glossary(path))


def _with_glossary(texts: list, glossary: list, translator) -> list:
    """Each text as a Source with the glossary's terms its source holds (``text/glossary.apply``)."""
    from rnnsearch.text.glossary import apply
    return [apply(translator, glossary, t) for t in texts]


def _read_prefixes(path: str, where: str, count: int) -> list[str]:
    from rnnsearch.data.io import read_lines
    prefixes = read_lines(path)
    if len(prefixes) != count:
        raise UsageError(f"{path} has {len(prefixes)} prefixes but {where} has {count} lines: "
                         "give one per input line (blank for none)")
    return prefixes


def score(args) -> int:
    import math
    from rnnsearch.data.io import read_parallel
    from rnnsearch.decoding.translator import Translator
    if args.units and not args.json:
        raise UsageError("--units adds fields to the JSON lines: give --json too")
    srcs, tgts = read_parallel(args.src, args.tgt)
    translator = Translator.from_pretrained(args.checkpoint, device=args.device, dtype=args.dtype)
    scores = translator.score(srcs, tgts, batch_size=args.batch_size, details=args.units)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for s in scores:
            if args.json:
                row = {"logprob": s.logprob, "units": s.units, "unknown": s.unknown}
                if args.units:
                    row.update(tokens=list(s.tokens), unit_logprobs=[round(x, 6) for x in s.unit_logprobs])
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                out.write(f"{s.per_unit if args.normalize else s.logprob:.6f}\n")
    finally:
        if out is not sys.stdout:
            out.close()
    units, total = sum(s.units for s in scores), sum(s.logprob for s in scores)
    print(f"rnnsearch score: {len(scores)} pairs, {units} target units ({sum(s.unknown for s in scores)} <unk>), "
          f"log-prob {total:.2f}, perplexity {math.exp(-total / units) if units else float('nan'):.2f}",
          file=sys.stderr)
    return 0


def evaluate(args) -> int:
    from rnnsearch.analysis.evaluate import evaluate as score, format_table
    from rnnsearch.data.io import read_parallel
    from rnnsearch.extras import require
    if args.plot:
        require("plot", "evaluate --plot")
    srcs, refs = read_parallel(args.src, args.ref)
    paths = [args.checkpoint] + (args.compare or [])
    names = args.names.split(",") if args.names else [Path(p).parent.name + "/" + Path(p).name for p in paths]
    if len(names) != len(paths):
        raise UsageError(f"--names gives {len(names)} names for {len(paths)} checkpoints")
    results = {}
    for name, path in zip(names, paths):
        with progress_bar(len(srcs), name) as advance:
            translator = load_translator(args, path)
            results[name] = score(translator, srcs, refs, search_settings(args, translator), advance)
        if args.hyp_out and len(paths) == 1:
            Path(args.hyp_out).write_text("".join(h + "\n" for h in results[name]["hypotheses"]), encoding="utf-8")
    for r in results.values():
        r.pop("hypotheses")
    if args.plot:
        from rnnsearch.analysis.plot import plot_bleu_by_length
        plot_bleu_by_length({n: r["by_length"] for n, r in results.items()}, args.plot,
                            unit=results[names[0]]["length_unit"])
    if args.json:
        print(json.dumps(results[names[0]] if len(paths) == 1 else results, indent=None))
    else:
        print(format_table(results))
        print(f"\nsacreBLEU signature: {results[names[0]]['signature']}")
        print(f"chrF signature: {results[names[0]]['chrf_signature']}")
        if args.plot:
            print(f"plot: {args.plot}")
    return 0


def plot_alignment(args) -> int:
    from rnnsearch.extras import require
    require("plot", "rnnsearch plot-alignment")
    from rnnsearch.analysis.plot import plot_alignment as plot
    from rnnsearch.data.io import read_lines
    from rnnsearch.decoding.translator import Translator
    if (args.sentence is None) == (args.input is None):
        raise UsageError("give either --sentence TEXT or --input FILE --line N")
    if args.sentence is not None:
        text = args.sentence
    else:
        lines = read_lines(args.input)
        if not 1 <= args.line <= len(lines):
            raise UsageError(f"--line {args.line}: {args.input} has {len(lines)} lines")
        text = lines[args.line - 1]
    from rnnsearch.cli.common import flag
    translator = Translator.from_pretrained(args.checkpoint, device=args.device)
    result = translator.translate([text], translator.search_settings(flag, beam=args.beam))[0]
    if result.attention is None:
        raise UsageError("this model has no attention (arch: rnnencdec): nothing to plot")
    plot(result.attention, result.source_tokens, result.tokens + [EOS_TOKEN], args.out, title=result.text)
    print(f"{text}\n-> {result.text}\nalignment: {args.out}")
    return 0
