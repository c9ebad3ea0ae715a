"""``rnnsearch train``, ``train-align-head``, ``status`` and ``describe``."""
from __future__ import annotations

import json
from pathlib import Path

from rnnsearch.cli.common import add_config_args, add_settings_flags, explicit_keys, settings_from_flags
from rnnsearch.errors import UsageError, UserError


HEAD_FLAGS = {"att": "--size"}  # HeadSettings' fields whose flag is not --field-name


def register(sub) -> None:
    from rnnsearch.training.align_head import HeadSettings
    p = sub.add_parser("train", help="train a model from a YAML config")
    add_config_args(p)
    p.add_argument("--out", required=True, help="run directory (best.pt, last.pt, log.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from last.pt")
    p.add_argument("--init", metavar="MODEL", help="start a new run from a trained model (release name, folder or "
                   "checkpoint): its weights, architecture and vocabularies, the config's data, optimiser and "
                   "schedule (adapting it to new data)")
    p.set_defaults(func=train, tune=True)

    p = sub.add_parser("train-align-head", help="train an alignment head on word links over a trained "
                       "RNNsearch (its translation weights stay as they are)")
    p.add_argument("checkpoint", help="a checkpoint or release of an rnnsearch model with a word vocabulary "
                   "or a fixed vocab.sp_model")
    p.add_argument("--links", required=True, help="Pharaoh links (i-j, 0-based, source unit first: words, or "
                   "pieces), one line per line of the checkpoint's training files, as for train.guided_alignment "
                   "(e.g. eflomal's, experiments/guided_links.py)")
    p.add_argument("--out", required=True, help="the new checkpoint: the model and its head")
    add_settings_flags(p, HeadSettings, HEAD_FLAGS)
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override the checkpoint's config for reading the corpus (e.g. data.dir=...)")
    p.set_defaults(func=train_align_head, tune=True)

    p = sub.add_parser("snapshot", help="a run's state, small enough to commit, that `restore` brings back on "
                       "another machine (bf16 weights, no optimiser moments)")
    p.add_argument("run", help="a training run directory (with last.pt)")
    p.add_argument("--out", required=True, help="the snapshot folder (replaced whole)")
    p.set_defaults(func=snapshot)

    p = sub.add_parser("restore", help="a run directory from a snapshot, for `rnnsearch train --resume`")
    p.add_argument("snapshot", help="a folder written by `rnnsearch snapshot`")
    p.add_argument("--out", required=True, help="the run directory to write (must hold no last.pt)")
    p.set_defaults(func=restore)

    p = sub.add_parser("status", help="where training runs stand: updates, core-hours, dev BLEU, projection")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run directories (with log.jsonl)")
    p.add_argument("--target", type=float, default=None, help="dev BLEU to project the core-hours to")
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    p.set_defaults(func=status)

    p = sub.add_parser("describe", help="a config's model (built) or a trained model's (read): its sizes, "
                       "vocabularies and parameter count")
    p.add_argument("config", help="a YAML config (configs/*.yaml), or a trained model: a checkpoint, a run's "
                   "folder or a release's name")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config "
                   "value (a config only)")
    p.set_defaults(func=describe)


def train(args) -> int:
    from rnnsearch.config import load
    from rnnsearch.training import distributed
    from rnnsearch.training.trainer import train as run_training
    cfg = load(args.config, args.set)
    explicit = explicit_keys(args.set)
    ctx = distributed.setup(cfg.train.device)
    finished, fresh = False, not Path(args.out).exists()
    try:
        run_training(cfg, args.out, resume=args.resume, ctx=ctx, init=args.init, explicit=explicit)
        finished = True
    except UserError:
        if fresh and ctx.is_main:
            _remove_unstarted(Path(args.out))
        raise
    finally:
        distributed.teardown(ctx, wait=finished)
    distributed.exit_rank(ctx, 0)
    return 0


UNSTARTED = {"config.yaml", ".lock", "log.jsonl"}  # what a run writes before its data is read


def _remove_unstarted(out: Path) -> None:
    """The run directory this invocation made, where it failed before training began (a bad corpus, a
    vocabulary SentencePiece could not make): no config.yaml of a run that never was is left behind."""
    if out.is_dir() and all(p.name in UNSTARTED for p in out.iterdir()):
        for p in out.iterdir():
            p.unlink()
        out.rmdir()


def train_align_head(args) -> int:
    from rnnsearch.training.align_head import HeadSettings, train_alignment_head
    settings = settings_from_flags(HeadSettings, args, HEAD_FLAGS)
    train_alignment_head(args.checkpoint, args.links, args.out, settings, args.set)
    return 0


def snapshot(args) -> int:
    from rnnsearch.training.snapshot import write_snapshot
    write_snapshot(args.run, args.out)
    return 0


def restore(args) -> int:
    from rnnsearch.training.snapshot import restore_snapshot
    restore_snapshot(args.snapshot, args.out)
    return 0


def status(args) -> int:
    from rnnsearch.analysis.status import format_status, run_status
    for i, run in enumerate(args.runs):
        result = run_status(run, args.target)
        print(json.dumps(result) if args.json else ("\n" if i else "") + format_status(result))
    return 0


def describe(args) -> int:
    """A config's model as its config says (a word vocabulary: at most its size, the corpus may have fewer
    words), or a trained model's as it is: the sizes a recipe's --set gave it, its vocabularies' real sizes."""
    from rnnsearch.config import load
    from rnnsearch.model import build_model
    from rnnsearch.training.optim import count_parameters
    if not str(args.config).endswith((".yaml", ".yml")):
        return _describe_trained(args)
    cfg = load(args.config, args.set)
    model = build_model(cfg.model, cfg.vocab.size, cfg.vocab.size)
    m, most = cfg.model, "at most " if cfg.vocab.mode == "word" else ""
    print(f"{cfg.name}: {m.arch}, emb {m.emb}, encoder {m.enc_hidden}, decoder {m.dec_hidden}, "
          f"{_attention(m)}maxout {m.maxout}, vocabulary {most}{cfg.vocab.size} x 2"
          + (" (the corpus's most frequent words: fewer where it has fewer)" if most else ""))
    print(f"parameters: {most}{count_parameters(model):,}" + (" (a trained model's: rnnsearch describe CHECKPOINT)"
                                                              if most else ""))
    return 0


def _attention(m) -> str:
    """The attention's size where the model has one (RNNencdec has none: its ``att`` is unused)."""
    return f"attention {m.att}, " if m.arch == "rnnsearch" else ""


def _describe_trained(args) -> int:
    from rnnsearch import checkpoint
    from rnnsearch.config import from_dict
    from rnnsearch.decoding.pretrained import resolve
    if args.set:
        raise UsageError("--set changes a config, not a trained model: give a YAML config with it")
    path = Path(args.config) / "best.pt" if (Path(args.config) / "best.pt").is_file() else resolve(args.config)
    payload = checkpoint.load(path)
    cfg, weights = from_dict(payload["config"]), payload["model"]
    m = cfg.model
    sizes = [weights[f"{side}.embed.weight"].shape[0] for side in ("encoder", "decoder")]
    print(f"{path}: {m.arch}, emb {m.emb}, encoder {m.enc_hidden}, decoder {m.dec_hidden}, {_attention(m)}"
          f"maxout {m.maxout}, vocabulary {sizes[0]} source, {sizes[1]} target ({cfg.vocab.mode})")
    print(f"parameters: {sum(w.numel() for w in weights.values()):,}")
    return 0
