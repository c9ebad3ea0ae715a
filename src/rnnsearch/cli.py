"""Command line: each subcommand parses its arguments and calls the library."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__


def _train(args) -> int:
    from . import distributed
    from .config import load
    from .train import train
    cfg = load(args.config, args.set)
    ctx = distributed.setup(cfg.train.device)
    finished = False
    try:
        train(cfg, args.out, resume=args.resume, ctx=ctx)
        finished = True
    finally:
        distributed.teardown(ctx, wait=finished)
    return 0


def _describe(args) -> int:
    from .config import load
    from .model import build_model
    from .train import count_parameters
    cfg = load(args.config, args.set)
    model = build_model(cfg.model, cfg.vocab.size, cfg.vocab.size)
    m = cfg.model
    print(f"{cfg.name}: {m.arch}, emb {m.emb}, encoder {m.enc_hidden}, decoder {m.dec_hidden}, "
          f"attention {m.att}, maxout {m.maxout}, vocabulary {cfg.vocab.size} x 2")
    print(f"parameters: {count_parameters(model):,}")
    return 0


def _read_input(path: str | None) -> list[str]:
    from .data import read_lines, split_lines
    if path in (None, "-"):
        return split_lines(sys.stdin.buffer.read(), "<stdin>")
    return read_lines(path)


def _search_kwargs(args) -> dict:
    return {"length_penalty": args.length_penalty, "max_len_ratio": args.max_len_ratio,
            "batch_size": args.batch_size}


def _load_translator(args, path: str):
    """A Translator for ``path`` with the [UNK] replacement the arguments ask for."""
    from .translator import Translator
    from .unk import read_lexicon
    translator = Translator.from_checkpoint(path)
    if args.lexicon and args.replace_unk != "dict":
        raise ValueError("--lexicon goes with --replace-unk dict")
    translator.set_unk_replacement(args.replace_unk, read_lexicon(args.lexicon) if args.lexicon else None)
    return translator


def _translate(args) -> int:
    translator = _load_translator(args, args.checkpoint)
    where = args.input if args.input not in (None, "-") else "<stdin>"
    translator.warn = lambda message: print(f"rnnsearch translate: warning: {where} {message}", file=sys.stderr)
    lines = _read_input(args.input)
    results = translator.translate(lines, beam=args.beam, n_best=args.n_best, **_search_kwargs(args))
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for i, r in enumerate(results):
            if args.n_best > 1:
                for h in r.nbest or [r]:
                    out.write(f"{i} ||| {h.text} ||| {h.score:.4f}\n")
            else:
                out.write(r.text + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _evaluate(args) -> int:
    from .data import read_parallel
    from .evaluate import evaluate, format_table
    from .plot import plot_bleu_by_length
    srcs, refs = read_parallel(args.src, args.ref)
    paths = [args.checkpoint] + (args.compare or [])
    names = args.names.split(",") if args.names else [Path(p).parent.name + "/" + Path(p).name for p in paths]
    if len(names) != len(paths):
        raise ValueError(f"--names gives {len(names)} names for {len(paths)} checkpoints")
    results = {}
    for name, path in zip(names, paths):
        translator = _load_translator(args, path)
        results[name] = evaluate(translator, srcs, refs, beam=args.beam, **_search_kwargs(args))
        if args.hyp_out and len(paths) == 1:
            Path(args.hyp_out).write_text("".join(h + "\n" for h in results[name]["hypotheses"]), encoding="utf-8")
    for r in results.values():
        r.pop("hypotheses")
    if args.plot:
        plot_bleu_by_length({n: r["by_length"] for n, r in results.items()}, args.plot)
    if args.json:
        print(json.dumps(results[names[0]] if len(paths) == 1 else results, indent=None))
    else:
        print(format_table(results))
        print(f"\nsacreBLEU signature: {results[names[0]]['signature']}")
        if args.plot:
            print(f"plot: {args.plot}")
    return 0


def _plot_alignment(args) -> int:
    from .data import read_lines
    from .plot import plot_alignment
    from .translator import Translator
    if (args.sentence is None) == (args.input is None):
        raise ValueError("give either --sentence TEXT or --input FILE --line N")
    text = args.sentence if args.sentence is not None else read_lines(args.input)[args.line - 1]
    translator = Translator.from_checkpoint(args.checkpoint)
    result = translator.translate([text], beam=args.beam)[0]
    if result.attention is None:
        raise ValueError("this model has no attention (arch: rnnencdec): nothing to plot")
    plot_alignment(result.attention, result.source_tokens, result.tokens + ["</s>"], args.out,
                   title=result.text)
    print(f"{text}\n-> {result.text}\nalignment: {args.out}")
    return 0


def _data(args) -> int:
    from .prepare import prepare
    for line in prepare(args.corpus, args.out):
        print(line)
    return 0


def _data_check(args) -> int:
    from .datacheck import check_corpus
    from .data import DataError
    result = check_corpus(args.src, args.tgt, max_len=args.max_len, tokenizer=args.tokenizer)
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.text())
    if not result.usable:
        raise DataError(result.problem)
    return 0


def _read_pairs(args) -> list[tuple[str, str]]:
    from .data import DataError, read_lines, read_parallel
    if args.pairs:
        pairs = []
        for number, line in enumerate(read_lines(args.pairs), start=1):
            if line.count(" ||| ") != 1:
                raise DataError(f"{args.pairs}:{number}: expected 'source ||| target'")
            src, tgt = line.split(" ||| ")
            pairs.append((src, tgt))
        return pairs
    if not (args.src and args.tgt):
        raise ValueError("give --src F --tgt F, or --pairs F ('source ||| target' lines)")
    return list(zip(*read_parallel(args.src, args.tgt)))


def _align(args) -> int:
    from .align import force_align
    from .alignment import alignment_error_rate, format_pharaoh, read_wpt_gold
    from .translator import Translator
    pairs = _read_pairs(args)
    alignments = force_align(Translator.from_checkpoint(args.checkpoint), pairs, shift=args.shift,
                             threshold=args.threshold)
    if args.format == "npz":
        if not args.out:
            raise ValueError("--format npz needs --out FILE")
        import numpy as np
        np.savez_compressed(args.out, **{f"soft_{i}": a.soft for i, a in enumerate(alignments)})
    else:
        if args.format == "pharaoh":
            text = "".join(format_pharaoh(a.links) + "\n" for a in alignments)
        else:
            text = "".join(json.dumps({"source": a.source_words, "target": a.target_words,
                                       "soft": [[round(float(x), 5) for x in row] for row in a.soft],
                                       "links": sorted(a.links)}) + "\n" for a in alignments)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    if args.gold:
        result = alignment_error_rate([a.links for a in alignments], read_wpt_gold(args.gold))
        print(json.dumps({k: result[k] for k in ("aer", "precision", "recall")}),
              file=sys.stdout if args.out else sys.stderr)
    return 0


def _report(args) -> int:
    from .report import build_report
    models = []
    for spec in args.model:
        if "=" not in spec:
            raise ValueError(f"--model {spec!r}: expected NAME=CHECKPOINT")
        name, path = spec.split("=", 1)
        models.append((name, path))
    build_report(models, args.src, args.ref, args.out, beam=args.beam, sentence=args.sentence,
                 seed=args.seed, n_long=args.long)
    print(f"report: {Path(args.out) / 'report.md'} and {Path(args.out) / 'report.html'}")
    return 0


def _aer(args) -> int:
    from .alignment import alignment_error_rate, read_pharaoh, read_wpt_gold
    result = alignment_error_rate(read_pharaoh(args.pred, reverse=args.reverse), read_wpt_gold(args.gold))
    if args.json:
        print(json.dumps({k: result[k] for k in ("aer", "precision", "recall")}))
    else:
        print(f"AER {result['aer']:.4f}  precision {result['precision']:.4f}  recall {result['recall']:.4f}  "
              f"({result['sentences']} sentences, {result['predicted_links']} predicted links, "
              f"{result['sure_links']} sure gold links)")
    return 0


def _serve(args) -> int:
    import uvicorn
    from .serve import ServeSettings, create_app
    from .translator import Translator
    settings = ServeSettings(batching=not args.no_batching, max_batch=args.max_batch, window_ms=args.window_ms,
                             max_chars=args.max_chars, max_texts=args.max_texts,
                             max_body_bytes=args.max_body_bytes, max_queue=args.max_queue,
                             timeout_s=args.timeout, max_beam=args.max_beam, threads=args.threads)
    translator = Translator.from_checkpoint(args.checkpoint, device=args.device)
    app = create_app(translator, settings, checkpoint=args.checkpoint)
    print(f"rnnsearch serve: {translator.config.name} on http://{args.host}:{args.port}/ "
          f"(API docs at /docs; batching {'on' if settings.batching else 'off'})", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _synth(args) -> int:
    from .synthetic import generate
    counts = generate(args.out, n_train=args.train, seed=args.seed)
    print(f"wrote the demo corpus to {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def _lexicon(args) -> int:
    from .data import read_parallel
    from .translator import Translator
    from .unk import lexicon_from_corpus, write_lexicon
    translator = Translator.from_checkpoint(args.checkpoint)
    srcs, tgts = read_parallel(args.src, args.tgt)
    n = args.max_pairs or len(srcs)
    table, used, dropped = lexicon_from_corpus(translator, srcs[:n], tgts[:n], args.max_len, args.min_count)
    write_lexicon(table, args.out)
    print(f"lexicon: {len(table)} source words from {used} pairs ({dropped} empty or over "
          f"{args.max_len} words left out) -> {args.out}")
    return 0


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
    p.set_defaults(func=_train)

    p = sub.add_parser("describe", help="build a config's model and print its parameter count")
    p.add_argument("config")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    p.set_defaults(func=_describe)

    p = sub.add_parser("translate", help="translate raw text, one sentence per line")
    p.add_argument("checkpoint")
    p.add_argument("--input", help="input file (default: standard input)")
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--n-best", type=int, default=1, help="write the n best as 'i ||| text ||| score'")
    _add_search_args(p)
    _add_unk_args(p)
    p.set_defaults(func=_translate)

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
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("plot-alignment", help="the paper's Figure 3 for one sentence")
    p.add_argument("checkpoint")
    p.add_argument("--sentence", help="the source sentence")
    p.add_argument("--input", help="a file of source sentences (with --line)")
    p.add_argument("--line", type=int, default=1, help="1-based line of --input")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--beam", type=int, default=None)
    p.set_defaults(func=_plot_alignment)

    p = sub.add_parser("data", help="prepare a public corpus, or check a parallel corpus")
    data_sub = p.add_subparsers(dest="data_command", required=True)
    for corpus in ("multi30k", "wmt14"):
        q = data_sub.add_parser(corpus, help=f"download and prepare {corpus} (needs a network)")
        q.add_argument("--out", required=True)
        q.set_defaults(func=_data, corpus=corpus)
    q = data_sub.add_parser("check", help="read a corpus as training does and report what is filtered")
    q.add_argument("--src", required=True, help="source side, one sentence per line (plain or .gz)")
    q.add_argument("--tgt", required=True, help="target side, line i pairs with source line i")
    q.add_argument("--max-len", type=int, default=50, help="longest pair kept, in tokens (as data.max_len)")
    q.add_argument("--tokenizer", choices=["moses", "space"], default="moses",
                   help="how tokens are counted (as data.tokenizer)")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.set_defaults(func=_data_check)

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
    p.set_defaults(func=_report)

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
    p.set_defaults(func=_align)

    p = sub.add_parser("lexicon", help="lexical table for --replace-unk dict, from forced alignments")
    p.add_argument("checkpoint")
    p.add_argument("--src", required=True, help="training source sentences (raw text)")
    p.add_argument("--tgt", required=True, help="training target sentences")
    p.add_argument("--out", required=True, help="TSV: source, target, p(target | source), links")
    p.add_argument("--max-pairs", type=int, default=0, help="use the first N pairs (0 = all)")
    p.add_argument("--max-len", type=int, default=80, help="leave out pairs with more words than this")
    p.add_argument("--min-count", type=int, default=1, help="keep entries seen at least this often")
    p.set_defaults(func=_lexicon)

    p = sub.add_parser("aer", help="alignment error rate of Pharaoh links against WPT 2003 gold links")
    p.add_argument("--pred", required=True, help="Pharaoh file: i-j, 0-based, source (English) first")
    p.add_argument("--gold", required=True, help="WPT gold: i-j sure, ipj possible, 1-based, English first")
    p.add_argument("--reverse", action="store_true", help="--pred is target-first (e.g. a Fr->En model)")
    p.add_argument("--json", action="store_true", help='print {"aer": .., "precision": .., "recall": ..}')
    p.set_defaults(func=_aer)

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
    p.set_defaults(func=_serve)

    p = sub.add_parser("synth", help="write the built-in synthetic demo corpus")
    p.add_argument("--out", required=True)
    p.add_argument("--train", type=int, default=6000)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=_synth)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .checkpoint import CheckpointError
    from .config import ConfigError
    from .data import DataError
    from .train import TrainError
    args = build_parser().parse_args(argv)
    if args.command in ("train", "translate", "evaluate", "serve"):
        from .runtime import tune_malloc
        tune_malloc()
    try:
        return args.func(args)
    except (ConfigError, DataError, CheckpointError, TrainError, ValueError, OSError) as exc:
        print(f"rnnsearch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rnnsearch {args.command}: interrupted", file=sys.stderr)
        return 130
