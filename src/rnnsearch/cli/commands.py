"""The work behind each subcommand: read the parsed arguments, call the library, print."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def train(args) -> int:
    from rnnsearch.training import distributed
    from rnnsearch.config import load
    from rnnsearch.training.trainer import train
    cfg = load(args.config, args.set)
    ctx = distributed.setup(cfg.train.device)
    finished = False
    try:
        train(cfg, args.out, resume=args.resume, ctx=ctx)
        finished = True
    finally:
        distributed.teardown(ctx, wait=finished)
    return 0


def status(args) -> int:
    from rnnsearch.analysis.status import format_status, run_status
    for i, run in enumerate(args.runs):
        result = run_status(run, args.target)
        if args.json:
            print(json.dumps(result))
        else:
            print(("\n" if i else "") + format_status(result))
    return 0


def describe(args) -> int:
    from rnnsearch.config import load
    from rnnsearch.model import build_model
    from rnnsearch.training.trainer import count_parameters
    cfg = load(args.config, args.set)
    model = build_model(cfg.model, cfg.vocab.size, cfg.vocab.size)
    m = cfg.model
    print(f"{cfg.name}: {m.arch}, emb {m.emb}, encoder {m.enc_hidden}, decoder {m.dec_hidden}, "
          f"attention {m.att}, maxout {m.maxout}, vocabulary {cfg.vocab.size} x 2")
    print(f"parameters: {count_parameters(model):,}")
    return 0


def _read_input(path: str | None) -> list[str]:
    from rnnsearch.data.io import read_lines, split_lines
    if path in (None, "-"):
        return split_lines(sys.stdin.buffer.read(), "<stdin>")
    return read_lines(path)


def _search_kwargs(args) -> dict:
    return {"length_penalty": args.length_penalty, "max_len_ratio": args.max_len_ratio,
            "batch_size": args.batch_size}


def _load_translator(args, path: str):
    """A Translator for ``path`` with the [UNK] replacement the arguments ask for."""
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.decoding.unk import read_lexicon
    translator = Translator.from_checkpoint(path)
    if args.lexicon and args.replace_unk != "dict":
        raise ValueError("--lexicon goes with --replace-unk dict")
    translator.set_unk_replacement(args.replace_unk, read_lexicon(args.lexicon) if args.lexicon else None)
    return translator


def translate(args) -> int:
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


def evaluate(args) -> int:
    from rnnsearch.data.io import read_parallel
    from rnnsearch.analysis.evaluate import evaluate, format_table
    from rnnsearch.analysis.plot import plot_bleu_by_length
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


def plot_alignment(args) -> int:
    from rnnsearch.data.io import read_lines
    from rnnsearch.analysis.plot import plot_alignment
    from rnnsearch.decoding.translator import Translator
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


def data(args) -> int:
    from rnnsearch.data.download import prepare
    for line in prepare(args.corpus, args.out):
        print(line)
    return 0


def data_check(args) -> int:
    from rnnsearch.data.check import check_corpus
    from rnnsearch.data.io import DataError
    result = check_corpus(args.src, args.tgt, max_len=args.max_len, tokenizer=args.tokenizer)
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.text())
    if not result.usable:
        raise DataError(result.problem)
    return 0


def _read_pairs(args) -> list[tuple[str, str]]:
    from rnnsearch.data.io import DataError, read_lines, read_parallel
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


def align(args) -> int:
    from rnnsearch.analysis.force_align import force_align
    from rnnsearch.analysis.links import alignment_error_rate, format_pharaoh, read_wpt_gold
    from rnnsearch.decoding.translator import Translator
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


def report(args) -> int:
    from rnnsearch.analysis.report import build_report
    models = []
    for spec in args.model:
        if "=" not in spec:
            raise ValueError(f"--model {spec!r}: expected NAME=CHECKPOINT")
        name, path = spec.split("=", 1)
        models.append((name, path))
    notes = Path(args.notes).read_text(encoding="utf-8") if args.notes else None
    build_report(models, args.src, args.ref, args.out, beam=args.beam, sentence=args.sentence,
                 seed=args.seed, n_long=args.long, figure3=args.figure3, notes=notes)
    print(f"report: {Path(args.out) / 'report.md'} and {Path(args.out) / 'report.html'}")
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


def serve(args) -> int:
    import uvicorn
    from rnnsearch.serve import ServeSettings, create_app
    from rnnsearch.decoding.translator import Translator
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


def synth(args) -> int:
    from rnnsearch.data.synthetic import generate
    counts = generate(args.out, n_train=args.train, seed=args.seed)
    print(f"wrote the demo corpus to {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def lexicon(args) -> int:
    from rnnsearch.data.io import read_parallel
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.decoding.unk import lexicon_from_corpus, write_lexicon
    translator = Translator.from_checkpoint(args.checkpoint)
    srcs, tgts = read_parallel(args.src, args.tgt)
    n = args.max_pairs or len(srcs)
    table, used, dropped = lexicon_from_corpus(translator, srcs[:n], tgts[:n], args.max_len, args.min_count)
    write_lexicon(table, args.out)
    print(f"lexicon: {len(table)} source words from {used} pairs ({dropped} empty or over "
          f"{args.max_len} words left out) -> {args.out}")
    return 0
