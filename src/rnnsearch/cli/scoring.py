"""``rnnsearch score``, ``evaluate`` and ``plot-alignment``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from rnnsearch.cli.common import (MODEL_HELP, add_decoding_args, add_device_arg, load_translator, progress_bar,
                                  search_settings, warn_language)
from rnnsearch.errors import UsageError
from rnnsearch.data.vocab import EOS_TOKEN


def register(sub) -> None:
    p = sub.add_parser("score", help="log p(target | source) of given sentence pairs, one line per pair")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="source sentences (raw text)")
    p.add_argument("--tgt", required=True, help="target sentences, line i pairs with source line i")
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--normalize", action="store_true",
                   help="write the log-probability per target unit (with --json: a per_unit field beside logprob)")
    p.add_argument("--json", action="store_true", help="one JSON object per pair: logprob, units, unknown")
    p.add_argument("--units", action="store_true", help="with --json, also each target unit and its "
                   "log-probability (tokens, unit_logprobs: </s> last)")
    p.add_argument("--batch-size", type=int, default=None, help="pairs read at once")
    p.add_argument("--dtype", choices=["float32", "bf16"], default="float32", help="bf16: products in bfloat16")
    add_device_arg(p)
    p.set_defaults(func=score, tune=True)

    p = sub.add_parser("evaluate", help="sacreBLEU, the paper's Table 1 columns and BLEU by length (each line translated "
                       "as one sentence, as the paper did: no sentence splitting or slots)")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="the test set's source sentences (raw text)")
    p.add_argument("--ref", required=True, help="its reference translations, line i for source line i")
    p.add_argument("--compare", nargs="+", metavar="CKPT", help="more checkpoints for one table and plot")
    p.add_argument("--names", help="comma-separated model names for the table and plot")
    p.add_argument("--plot", help="write BLEU by source length as a PNG here")
    p.add_argument("--hyp-out", help="write the translations here (one model only)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--record", metavar="SET", help="a release only: record BLEU and chrF on this set (text unlike "
                   "its training data, named SET) in its model card's \"Intended use and limitations\"")
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


def score(args) -> int:
    import math
    from rnnsearch.data.io import read_parallel
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.files import writable_file
    if args.units and not args.json:
        raise UsageError("--units adds fields to the JSON lines: give --json too")
    if args.output:
        writable_file(args.output, [args.src, args.tgt])
    srcs, tgts = read_parallel(args.src, args.tgt)
    translator = Translator.from_pretrained(args.checkpoint, device=args.device, dtype=args.dtype)
    scores = translator.score(srcs, tgts, batch_size=args.batch_size, details=args.units)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for s in scores:
            if args.json:
                row = {"logprob": s.logprob, "units": s.units, "unknown": s.unknown}
                if args.normalize:
                    row["per_unit"] = s.per_unit
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
    if not srcs:
        raise UsageError(f"{args.src} is empty: no sentences to evaluate")
    paths = [args.checkpoint] + (args.compare or [])
    names = args.names.split(",") if args.names else [_label(p) for p in paths]
    if len(names) != len(paths):
        raise UsageError(f"--names gives {len(names)} names for {len(paths)} checkpoints")
    results = {}
    for name, path in zip(names, paths):
        with progress_bar(len(srcs), name) as advance:
            translator = load_translator(args, path)
            warn_language(srcs, False, translator, lambda said, model=name: print(
                f"rnnsearch evaluate: warning: {args.src} {said} ({model}'s BLEU below means little)", file=sys.stderr))
            results[name] = score(translator, srcs, refs, search_settings(args, translator), advance)
        if args.hyp_out and len(paths) == 1:
            Path(args.hyp_out).write_text("".join(h + "\n" for h in results[name]["hypotheses"]), encoding="utf-8")
    for r in results.values():
        r.pop("hypotheses")
    if args.record:
        _record_domain(args, results[names[0]])
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


def _label(path: str) -> str:
    """A model's name in the table: a release by its name, a file with its folder (``tiny/best.pt``)."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def _record_domain(args, result: dict) -> None:
    """evaluate --record SET: the scores in the release's manifest and card, with the command."""
    import datetime
    from rnnsearch.analysis.release import record_domain
    from rnnsearch.decoding import pretrained
    if args.compare or "://" in str(args.checkpoint):
        raise UsageError("--record writes one release's scores into its folder: one checkpoint, not a download")
    folder = pretrained.resolve(args.checkpoint).parent
    beam = f" --beam {args.beam}" if args.beam else ""
    beam += " --keep-unk" if args.keep_unk else f" --replace-unk {args.replace_unk}" if args.replace_unk else ""
    entry = {"set": args.record, "scores": {"BLEU": round(result["bleu"], 2), "chrF": round(result["chrf"], 2)},
             "sentences": result["n"], "beam": result.get("beam"),
             "command": f"rnnsearch evaluate models/{folder.name} --src {args.src} --ref {args.ref}{beam}",
             "date": datetime.date.today().isoformat()}
    record_domain(folder, entry)
    print(f"recorded in {folder / 'README.md'} and {folder / pretrained.RELEASE_FILE}", file=sys.stderr)


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
            raise UsageError(f"--line {args.line}: {args.input} has {len(lines)} lines (the first is line 1)")
        text = lines[args.line - 1]
    if not text.strip():
        raise UsageError("the sentence is empty: nothing to translate and plot")
    from rnnsearch.cli.common import flag
    translator = Translator.from_pretrained(args.checkpoint, device=args.device)
    result = translator.translate([text], translator.search_settings(name=flag, beam=args.beam))[0]
    if result.attention is None:
        raise UsageError("this model has no attention (arch: rnnencdec): nothing to plot")
    plot(result.attention, result.source_tokens, result.tokens + [EOS_TOKEN], args.out, title=result.text)
    print(f"{text}\n-> {result.text}\nalignment: {args.out}")
    return 0
