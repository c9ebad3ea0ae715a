"""``rnnsearch data multi30k|wmt14|check``, ``prepare`` and ``synth``: corpora. ``data check``'s defaults are
those of the ``data`` config section (config.DataConfig)."""
from __future__ import annotations

import argparse
import json
import os
from typing import get_args

from rnnsearch.cli.common import add_config_args, explicit_keys


def register(sub) -> None:
    from rnnsearch.config import DataConfig
    fields = DataConfig.model_fields
    p = sub.add_parser("data", help="prepare a public corpus, or check a parallel corpus")
    data_sub = p.add_subparsers(dest="data_command", required=True)
    for corpus in ("multi30k", "wmt14"):
        q = data_sub.add_parser(corpus, help=f"download and prepare {corpus} (needs a network)")
        q.add_argument("--out", required=True, help="the folder to write {split}.{lang} files into")
        q.set_defaults(func=download, corpus=corpus)
    q = data_sub.add_parser("check", help="read a corpus as training does and report what is filtered")
    q.add_argument("--src", required=True, help="source side, one sentence per line (plain or .gz)")
    q.add_argument("--tgt", required=True, help="target side, line i pairs with source line i")
    q.add_argument("--max-len", type=_positive, default=fields["max_len"].default,
                   help="longest pair kept, in words as the tokenizer reads them (as data.max_len with a word "
                        "vocabulary; a SentencePiece one counts pieces, which are more)")
    q.add_argument("--tokenizer", choices=get_args(fields["tokenizer"].annotation),
                   default=fields["tokenizer"].default, help="how tokens are counted (as data.tokenizer)")
    q.add_argument("--json", action="store_true", help="print the report as JSON")
    q.set_defaults(func=check)

    q = data_sub.add_parser("import", help="a translation memory or bilingual file (TMX, XLIFF, PO) as a corpus "
                            "for `train --init` and `prepare`")
    q.add_argument("file", help="the .tmx, .xliff/.xlf or .po file")
    q.add_argument("--out", required=True, help="the folder to write {train,dev,test}.{lang} into (train.en, ...)")
    q.add_argument("--dev", type=_count, default=0, help="the last units but --test held out for validation")
    q.add_argument("--test", type=_count, default=0, help="the last units held out for testing")
    q.add_argument("--src-lang", help="the source language, where the file does not say it")
    q.add_argument("--tgt-lang", help="the target language, where the file does not say it (or holds several)")
    q.add_argument("--fuzzy", action="store_true", help="take fuzzy and unreviewed translations too")
    q.add_argument("--keep-tags", action="store_true", help="keep inline tags as written (by default they are "
                   "taken out, as the markup path gives the model plain text)")
    q.set_defaults(func=import_memory)

    p = sub.add_parser("prepare", help="tokenise a config's training corpus once into a memory-mapped dataset "
                       "(data.prepared): for corpora too large to read as text")
    add_config_args(p)
    p.add_argument("--out", required=True, help="the dataset folder to write (whole or not at all)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="tokenising processes (default: one per core)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--init", metavar="MODEL", help="encode with this trained model's vocabularies and tokeniser "
                   "(release name, folder or checkpoint), for `train CONFIG --init MODEL --set data.prepared=OUT`")
    p.set_defaults(func=prepare)

    p = sub.add_parser("synth", help="write the built-in synthetic demo corpus")
    p.add_argument("--out", required=True, help="the folder to write {train,dev,test}.{en,fr} into")
    p.add_argument("--train", type=int, default=6000, help="training pairs to generate")
    p.add_argument("--seed", type=int, default=1, help="the generator's seed (same seed: same corpus)")
    p.set_defaults(func=synth)


def download(args) -> int:
    from rnnsearch.data.download import prepare
    for line in prepare(args.corpus, args.out):
        print(line)
    return 0


def check(args) -> int:
    from rnnsearch.data.check import check_corpus
    from rnnsearch.data.io import DataError
    result = check_corpus(args.src, args.tgt, max_len=args.max_len, tokenizer=args.tokenizer)
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.text())
    if not result.usable:
        raise DataError(result.problem)
    return 0


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a length of 1 or more (as data.max_len)")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: give a count of 0 or more")
    return int(text)


def import_memory(args) -> int:
    from rnnsearch.data.memories import read_memory, write_corpus
    from rnnsearch.extras import require
    require("files", "rnnsearch data import")
    memory = read_memory(args.file, args.src_lang, args.tgt_lang, args.fuzzy, args.keep_tags)
    counts = write_corpus(memory, args.out, args.dev, args.test)
    left = "; ".join(f"{n} left out: {why}" for why, n in memory.left_out.items())
    print(f"{args.out}: {memory.src_lang}->{memory.tgt_lang}, " + ", ".join(f"{k} {v}" for k, v in counts.items())
          + (f" ({left})" if left else ""))
    sets = f"--set data.dir={args.out} --set data.src_lang={memory.src_lang} --set data.tgt_lang={memory.tgt_lang}"
    sets += " --set data.dev=dev" if "dev" in counts else ""
    print(f"train on it: rnnsearch train CONFIG --init MODEL {sets} --out RUN"
          + ("" if "dev" in counts else "\n(no dev split: give --dev N to validate on)"))
    return 0


def prepare(args) -> int:
    from rnnsearch.config import load
    from rnnsearch.data.prepare import prepare as run
    cfg, codecs, init = load(args.config, args.set), None, None
    if args.init:  # the parent's vocabularies, and the config keys that depend on them, as `train --init` takes them
        from rnnsearch.training.adapt import parent_codecs, parent_record, start_from
        parent, cfg = start_from(args.init, False, cfg, explicit_keys(args.set), print)
        codecs, init = parent_codecs(parent), parent_record(parent)
    run(cfg, args.out, workers=args.workers, force=args.force, codecs=codecs, init=init)
    return 0


def synth(args) -> int:
    from rnnsearch.data.synthetic import generate
    counts = generate(args.out, n_train=args.train, seed=args.seed)
    print(f"wrote the demo corpus to {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0
