"""``rnnsearch report``, ``align``, ``lexicon`` and ``aer``: the paper's analyses."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from rnnsearch.cli.common import MODEL_HELP, add_device_arg, progress_bar, write_text
from rnnsearch.errors import UsageError


def register(sub) -> None:
    p = sub.add_parser("report", help="the paper's Table 1, Figures 2 and 3, long sentences, training curves")
    p.add_argument("--model", action="append", required=True, metavar="NAME=CKPT",
                   help="a model to include (repeat); the first one's alignments make Figure 3")
    p.add_argument("--output", action="append", default=[], metavar="NAME=FILE",
                   help="a system given by its test output, one line per test sentence (repeat; e.g. "
                        "Moses=docs/results/hansards/moses/test.hyp.fr): a row of every table and a curve of Figure 2")
    p.add_argument("--src", required=True, help="the test set's source sentences (raw text)")
    p.add_argument("--ref", required=True, help="its reference translations, line i for source line i")
    p.add_argument("--out", required=True, help="directory for report.md, report.html and the PNGs")
    p.add_argument("--beam", type=int, default=None, help="beam size (1 = greedy; default: each model's "
                   "decode.beam)")
    p.add_argument("--sentence", help="Figure 3's given sentence (default: the first test sentence)")
    p.add_argument("--seed", type=int, default=1, help="seed of Figure 3's and the long examples' samples")
    p.add_argument("--long", type=int, default=5, help="long-sentence examples to show")
    p.add_argument("--keep-unk", action="store_true", help="count each <unk> as written, as the paper's Table 1 "
                   "does (default: as each model writes it; a release replaces it by its aligned source word)")
    p.add_argument("--figure3", metavar="NAME", help="the model whose alignments Figure 3 shows "
                   "(default: the first model with attention)")
    p.add_argument("--notes", metavar="FILE", help="Markdown placed near the top of the report (how the "
                   "models were trained, and why)")
    add_device_arg(p, "the models translate")
    p.set_defaults(func=report, tune=True)

    _register_align(sub)

    p = sub.add_parser("lexicon", help="lexical table for --replace-unk dict and --shortlist, from forced alignments")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", required=True, help="training source sentences (raw text)")
    p.add_argument("--tgt", required=True, help="training target sentences")
    p.add_argument("--out", required=True, help="TSV: source, target, p(target | source), links")
    p.add_argument("--max-pairs", type=int, default=0, help="use the first N pairs (0 = all)")
    p.add_argument("--max-len", type=int, default=80, help="leave out pairs with more words than this")
    p.add_argument("--min-count", type=int, default=1, help="keep entries seen at least this often")
    p.add_argument("--links", metavar="PHARAOH", help="count these links of the pairs (another aligner's, e.g. "
                   "eflomal's: i-j, source first, 0-based, one line per pair) instead of the model's forced alignments")
    p.add_argument("--per-source", type=int, default=1, help="target words kept per source word, most "
                   "frequent first (1 is all --replace-unk dict reads; a --shortlist reads more)")
    add_device_arg(p)
    p.set_defaults(func=lexicon)

    p = sub.add_parser("aer", help="alignment error rate of Pharaoh links against WPT 2003 gold links")
    p.add_argument("--pred", required=True, help="Pharaoh file: i-j, 0-based, source (English) first")
    p.add_argument("--gold", required=True, help="WPT gold: i-j sure, ipj possible, 1-based, English first")
    p.add_argument("--reverse", action="store_true", help="--pred is target-first (e.g. a Fr->En model)")
    p.add_argument("--json", action="store_true", help='print {"aer": .., "precision": .., "recall": ..}')
    p.set_defaults(func=aer)


def _register_align(sub) -> None:
    p = sub.add_parser("align", help="forced alignment of sentence pairs from the model's attention")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--src", help="source sentences (whitespace-separated words)")
    p.add_argument("--tgt", help="target sentences, line i pairs with source line i")
    p.add_argument("--pairs", help="or one file of 'source ||| target' lines (the WPT test.en-fr)")
    p.add_argument("--format", choices=["pharaoh", "json", "npz"], default="pharaoh",
                   help="pharaoh: s-t links per line; json: links and the soft alignment per line; npz: the matrices")
    p.add_argument("--out", help="output file (default: standard output; npz needs one)")
    p.add_argument("--gold", help="WPT gold links: also print AER, precision, recall")
    p.add_argument("--shift", type=int, default=0, choices=[-1, 0, 1, 2],
                   help="link y_i with the attention of step i + shift (0: the step that emits y_i; 1: the step "
                        "where y_i is the decoder's input, Shift-Att; 2: the first whose query has read y_i)")
    p.add_argument("--reverse-model", metavar="CKPT",
                   help="a model of the other direction (e.g. Fr->En): align both ways and symmetrise")
    p.add_argument("--symmetrize", choices=["intersection", "union", "grow-diag", "grow-diag-final",
                                            "grow-diag-final-and", "soft"], default="grow-diag-final-and",
                   help="how the two directions' links are combined (with --reverse-model); soft: multiply "
                        "the two models' soft alignments and read links from the product (--extract)")
    p.add_argument("--extract", choices=["rows", "columns", "intersection", "union", "grow-diag", "grow-diag-final",
                                         "grow-diag-final-and", "threshold"], default="rows",
                   help="how links are read from a soft alignment: rows, each target word to its most attended "
                        "source word; columns, each source word to the target word attending to it most; those "
                        "two symmetrised; or threshold, every weight at or above --threshold and nothing else "
                        "(with --symmetrize soft: the product's, a link both directions agree on)")
    p.add_argument("--balance", type=int, default=0, metavar="N",
                   help="read links from the soft alignment balanced by N Sinkhorn iterations (every source "
                        "word given the same total weight as every target word); 0: as it is")
    p.add_argument("--posterior", action="store_true",
                   help="read the posterior of each target word's alignment, alpha_ij times the model's "
                        "probability of the word given h_j alone (normalised over j), instead of alpha_ij")
    p.add_argument("--head", action="store_true",
                   help="read the checkpoint's alignment head (`rnnsearch train-align-head`) instead of "
                        "alpha_ij: a layer trained on word links that reads each target word's source once the "
                        "word is known; with --posterior, the mean of the two")
    p.add_argument("--natural", action="store_true",
                   help="WPT 2003 En-Fr gold text: the model reads it in natural form (first word "
                        "capitalised, French elisions and contractions restored); links stay on the given words")
    p.add_argument("--flip", action="store_true",
                   help="the pairs (and --gold) run the other way from the model, 'target ||| source' (WPT's "
                        "En-Fr set for a Fr->En model): the model reads each pair turned round; links, soft "
                        "weights and AER come out in the files' order")
    p.add_argument("--threshold", type=float, default=None,
                   help="also link every source word with at least this weight (beside the argmax); with "
                        "--extract threshold, only those")
    p.add_argument("--record", action="store_true",
                   help="with --gold and a released model: add the AER, with these flags, to its release.json "
                        "and model card (README.md); the weights are not touched")
    add_device_arg(p)
    p.set_defaults(func=align, reading_defaults={name: p.get_default(name) for name in READING_FLAGS})


def report(args) -> int:
    from rnnsearch.extras import require
    require("plot", "rnnsearch report")
    from rnnsearch.analysis.report import build_report
    models, outputs = _named(args.model, "--model", "CHECKPOINT"), _named(args.output, "--output", "FILE")
    names = [name for name, _ in models + outputs]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise UsageError(f"{twice!r} names two rows of the report: give each --model and --output its own name")
    for name, path in outputs:
        if not Path(path).is_file():
            raise UsageError(f"--output {name}={path}: no such file")
    notes = Path(args.notes).read_text(encoding="utf-8") if args.notes else None
    build_report(models, args.src, args.ref, args.out, _settings(args.beam), sentence=args.sentence,
                 seed=args.seed, n_long=args.long, figure3=args.figure3, notes=notes, device=args.device,
                 progress=progress_bar, outputs=outputs, keep_unk=args.keep_unk)
    print(f"report: {Path(args.out) / 'report.md'} and {Path(args.out) / 'report.html'}")
    return 0


def _named(specs: list[str], flag: str, what: str) -> list[tuple[str, str]]:
    """``NAME=VALUE`` flags -> (NAME, VALUE)."""
    pairs = []
    for spec in specs:
        if "=" not in spec:
            raise UsageError(f"{flag} {spec!r}: expected NAME={what}")
        pairs.append(tuple(spec.split("=", 1)))
    return pairs


def _settings(beam: int | None):
    """The report's SearchSettings: --beam, checked before any model is loaded; the rest each model's own."""
    from rnnsearch.cli.common import flag
    from rnnsearch.decoding.settings import SearchSettings
    settings = SearchSettings(beam=beam)
    settings.resolve(name=flag)  # a bad --beam is refused here, naming the flag
    return settings


def _pairs(args) -> list[tuple[str, str]]:
    from rnnsearch.data.io import read_pair_file, read_parallel
    if args.pairs:
        return list(zip(*read_pair_file(args.pairs)))
    if not (args.src and args.tgt):
        raise UsageError("give --src F --tgt F, or --pairs F ('source ||| target' lines)")
    return list(zip(*read_parallel(args.src, args.tgt)))


def align(args) -> int:
    from rnnsearch.analysis.force_align import alignment_json, check_reading, force_align, turned
    from rnnsearch.analysis.gold_text import natural_forms
    from rnnsearch.analysis.links import alignment_error_rate, format_pharaoh, read_wpt_gold
    from rnnsearch.decoding.translator import Translator
    if args.format == "npz" and not args.out:
        raise UsageError("--format npz needs --out FILE")
    if args.out:
        from rnnsearch.files import writable_file
        writable_file(args.out, [args.src, args.tgt, args.pairs, args.gold])
    if args.record and not args.gold:
        raise UsageError("--record needs --gold: it records the AER against those links")
    check_reading(args.extract, args.balance, args.threshold)
    translator = Translator.from_pretrained(args.checkpoint, device=args.device)
    _check_head(translator, args.checkpoint, args)
    forms = natural_forms(translator.src_codec, translator.tgt_codec) if args.natural else None
    pairs = [(t, s) if args.flip else (s, t) for s, t in _pairs(args)]  # in the model's direction
    alignments = force_align(translator, pairs, shift=args.shift, threshold=args.threshold, forms=forms,
                             extract=args.extract, balance=args.balance, reading=reading_of(args))
    if args.reverse_model:
        alignments = symmetrized(alignments, args, pairs)
    if args.flip:
        alignments = [turned(a) for a in alignments]  # in the files' order
    if args.format == "npz":
        import numpy as np
        np.savez_compressed(args.out, **{f"soft_{i}": a.soft for i, a in enumerate(alignments)})
    elif args.format == "pharaoh":
        write_text(args.out, "".join(format_pharaoh(a.links) + "\n" for a in alignments))
    else:
        write_text(args.out, "".join(json.dumps(alignment_json(a)) + "\n" for a in alignments))
    if args.gold:
        result = alignment_error_rate([a.links for a in alignments], read_wpt_gold(args.gold))
        print(json.dumps({k: result[k] for k in ("aer", "precision", "recall")}),
              file=sys.stdout if args.out else sys.stderr)
        if args.record:
            record(args, result)
    return 0


READING_FLAGS = ("flip", "natural", "head", "posterior", "shift", "extract", "balance", "threshold", "reverse_model",
                 "symmetrize")  # in the order the docs write them


def record(args, result: dict) -> None:
    """--record: the AER in the release's manifest and card, with the flags that chose the reading."""
    import datetime
    from rnnsearch.analysis.release import record_alignment
    from rnnsearch.decoding import pretrained
    if "://" in str(args.checkpoint):
        raise UsageError(f"{args.checkpoint}: --record writes into a release folder, not a download")
    flags = []
    for name, default in args.reading_defaults.items():  # the flags given, other than their defaults
        value = getattr(args, name)
        if value != default and (name != "symmetrize" or args.reverse_model):
            flags.append(f"--{name.replace('_', '-')}" + ("" if value is True else f" {value}"))
    entry = {"gold": args.gold, "pairs": args.pairs or f"{args.src} {args.tgt}", "sentences": result["sentences"],
             "flags": " ".join(flags), **{k: result[k] for k in ("aer", "precision", "recall")},
             "date": datetime.date.today().isoformat()}
    folder = pretrained.resolve(args.checkpoint).parent
    record_alignment(folder, entry)
    print(f"recorded in {folder / 'README.md'} and {folder / pretrained.RELEASE_FILE}", file=sys.stderr)


def reading_of(args) -> str:
    """force_align's reading for --posterior and --head (both: their mean)."""
    return "+".join(r for r, on in (("head", args.head), ("posterior", args.posterior)) if on) or "attention"


def _check_head(translator, path: str, args) -> None:
    if args.head and translator.align_head is None:
        raise UsageError(f"{path}: this model has no alignment head (--head): train one with "
                         "`rnnsearch train-align-head CKPT --links FILE --out NEW.pt`")


def symmetrized(forward: list, args, pairs: list[tuple[str, str]]) -> list:
    """The forward alignments combined with those of --reverse-model (``force_align.combine``)."""
    from rnnsearch.analysis.force_align import combine, force_align
    from rnnsearch.analysis.gold_text import natural_forms
    from rnnsearch.decoding.translator import Translator
    reverse = Translator.from_pretrained(args.reverse_model, device=args.device)
    _check_head(reverse, args.reverse_model, args)
    forms = natural_forms(reverse.src_codec, reverse.tgt_codec) if args.natural else None
    backward = force_align(reverse, [(t, s) for s, t in pairs], shift=args.shift, threshold=args.threshold,
                           forms=forms, extract=args.extract, balance=args.balance, reading=reading_of(args))
    return combine(forward, backward, args.symmetrize, args.threshold, args.extract, args.balance)


def lexicon(args) -> int:
    from rnnsearch.data.io import DataError, read_lines, read_parallel
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.analysis.lexicon import lexicon_from_corpus, lexicon_from_links, write_lexicon
    if args.per_source < 1:
        raise UsageError(f"--per-source must be at least 1, got {args.per_source}")
    translator = Translator.from_pretrained(args.checkpoint, device=args.device)
    srcs, tgts = read_parallel(args.src, args.tgt)
    n = args.max_pairs or len(srcs)
    if args.links:
        links = read_lines(args.links)
        if len(links) != len(srcs):
            raise DataError(f"{args.links}: {len(links):,} lines of links for {len(srcs):,} sentence pairs: "
                            "give one line per pair")
        table = lexicon_from_links(translator, srcs[:n], tgts[:n], links[:n], args.links, args.min_count,
                                   args.per_source)
        write_lexicon(table, args.out)
        print(f"lexicon: {len(table)} source words from the links of {min(n, len(srcs))} pairs -> {args.out}")
        return 0
    table, used, dropped = lexicon_from_corpus(translator, srcs[:n], tgts[:n], args.max_len, args.min_count,
                                               args.per_source)
    write_lexicon(table, args.out)
    print(f"lexicon: {len(table)} source words from {used} pairs ({dropped} empty or over "
          f"{args.max_len} words left out) -> {args.out}")
    return 0


def aer(args) -> int:
    from rnnsearch.analysis.links import alignment_error_rate, read_pharaoh, read_wpt_gold
    result = alignment_error_rate(read_pharaoh(args.pred, reverse=args.reverse), read_wpt_gold(args.gold))
    if args.json:
        print(json.dumps({k: result[k] for k in ("aer", "precision", "recall")}))
    else:
        print(f"AER {result['aer']:.4f}  precision {result['precision']:.4f}  recall {result['recall']:.4f}  "
              f"({result['sentences']} sentences, {result['predicted_links']} predicted links, "
              f"{result['sure_links']} sure gold links)")
    return 0
