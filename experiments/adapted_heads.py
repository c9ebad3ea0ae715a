"""Alignment heads for models adapted on a translation memory (#88): the head a release carries was
trained for the release's weights on Hansards links; a model adapted with ``train --init`` keeps it
unchanged. This trains a new head for the adapted model on eflomal's links of the memory's pairs
(repeated ``--repeat`` times) beside Hansards pairs, so that the head reads the memory's domain.

    python experiments/adapted_heads.py CKPT --memory DIR --out DIR [--hansards N] [--repeat R]
        [--epochs E] [--context C] [--init-head] [--lr LR]

CKPT: the adapted checkpoint (``runs/sfb/run/best.pt``, either direction); DIR: the corpus it was
adapted on (``rnnsearch data import``'s: train.en, train.fr, dev.en, dev.fr). Written to --out:
corpus/ (the memory's pairs, then the first N Hansards training pairs), links/
(experiments/guided_links.py: eflomal, grow-diag-final-and over the units the model reads) and
head.pt (the model with its new head: ``rnnsearch train-align-head``).
"""
from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
from pathlib import Path

import yaml

from rnnsearch.decoding import pretrained
from rnnsearch import checkpoint

ROOT = Path(__file__).resolve().parents[1]
HANSARDS = ROOT.parent / "shared" / "data" / "hansards"


def corpus(memory: Path, out: Path, hansards: int, repeat: int) -> None:
    """out/train.{en,fr}: the memory's training pairs ``repeat`` times, then ``hansards`` Hansards pairs;
    out/dev.{en,fr}: the memory's."""
    out.mkdir(parents=True, exist_ok=True)
    for lang in ("en", "fr"):
        mine = (memory / f"train.{lang}").read_text(encoding="utf-8").splitlines()
        with gzip.open(HANSARDS / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            theirs = [next(f).rstrip("\n") for _ in range(hansards)]
        (out / f"train.{lang}").write_text("".join(x + "\n" for x in mine * repeat + theirs), encoding="utf-8")
        (out / f"dev.{lang}").write_text((memory / f"dev.{lang}").read_text(encoding="utf-8"), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--memory", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--hansards", type=int, default=40000, help="Hansards pairs beside the memory's")
    ap.add_argument("--repeat", type=int, default=10, help="times each memory pair is given")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--init-head", action="store_true", help="start from the checkpoint's head (train-align-head "
                    "--init-head) rather than a new one")
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()
    data = args.out / "corpus"
    corpus(args.memory, data, args.hansards, args.repeat)
    config = args.out / "config.yaml"  # the checkpoint's own, as the head's training reads it
    config.write_text(yaml.safe_dump(checkpoint.load(pretrained.weights_path(args.checkpoint))["config"]))
    py = [sys.executable, str(ROOT / "experiments" / "guided_links.py")]
    subprocess.run([*py, str(config), "--out", str(args.out / "links"), "--set", f"data.dir={data}",
                    "--set", "data.token_cache="], check=True)
    subprocess.run([sys.executable, "-m", "rnnsearch", "train-align-head", args.checkpoint,
                    "--links", str(args.out / "links" / "train.links"), "--out", str(args.out / "head.pt"),
                    "--pairs", "0", "--held-out", "1000", "--epochs", str(args.epochs),
                    "--context", str(args.context), "--threads", str(args.threads), "--lr", str(args.lr),
                    *(["--init-head"] if args.init_head else []),
                    "--set", f"data.dir={data}", "--set", "data.token_cache="], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
