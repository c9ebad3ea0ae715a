"""Adapting a released model to a new domain, at equal compute (#60): the Hansards RNNsearch-50
(parliamentary debates) on Multi30k En->Fr (image captions).

(a) the release as it is; (b) the release adapted with ``train --init``; (c) the same vocabulary and
sizes from fresh weights (``--init`` from a copy of the release whose weights are initialised anew:
``fresh``); (d) configs/multi30k_rnnsearch.yaml from nothing; (b)-(d) for the same budget of
core-hours (1 below). Each trains on one thread; the budget is CPU time (train.max_core_hours), so runs beside
each other compare. Then ``table`` translates test_2016_flickr with each at beam 5 (BLEU, chrF) and
the Hansards test with (b) at beam 12 (what adaptation forgets), and writes the table.

    python experiments/adapt_multi30k.py fresh --out runs/adapt/fresh.pt
    S="--set train.max_core_hours=1 --set train.max_minutes=0 --set train.threads=1 --set train.valid_every=500"
    rnnsearch train configs/multi30k_rnnsearch.yaml --init hansards_enfr_rnnsearch50 $S --out runs/adapt/b
    rnnsearch train configs/multi30k_rnnsearch.yaml --init runs/adapt/fresh.pt $S --out runs/adapt/c
    rnnsearch train configs/multi30k_rnnsearch.yaml $S --out runs/adapt/d
    python experiments/adapt_multi30k.py table --runs runs/adapt --out docs/results/adapt_multi30k.md
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rnnsearch import checkpoint
from rnnsearch.analysis.evaluate import evaluate
from rnnsearch.config import from_dict
from rnnsearch.data.io import read_parallel
from rnnsearch.decoding import pretrained
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.translator import Translator
from rnnsearch.model import build_model

RELEASE = "hansards_enfr_rnnsearch50"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROWS = {"a": "(a) the release as it is", "b": "(b) the release adapted (`train --init`)",
        "c": "(c) same vocabulary and sizes, fresh weights", "d": "(d) configs/multi30k_rnnsearch.yaml from nothing"}


def fresh(out: Path, seed: int) -> None:
    """The release with its weights initialised anew (the config's own initialisation)."""
    payload = checkpoint.load(pretrained.resolve(RELEASE))
    cfg = from_dict(payload["config"])
    model = build_model(cfg.model, len(payload["src_codec"]["itos"]), len(payload["tgt_codec"]["itos"]), seed=seed)
    keep = {k: payload[k] for k in ("config", "src_codec", "tgt_codec")}
    checkpoint.save(out, {**keep, "model": model.state_dict(), "train_state": {"step": 0}})
    print(f"wrote {out}: {RELEASE}'s config and vocabularies, fresh weights (seed {seed})")


def _row(model: str, test: tuple[Path, Path], beam: int) -> dict:
    translator = Translator.from_pretrained(model)
    translator.set_unk_replacement(None)  # every row as the model writes it (a release would replace <unk>)
    srcs, refs = read_parallel(*test)
    start = time.process_time()
    result = evaluate(translator, srcs, refs, SearchSettings(beam=beam))
    return {"bleu": round(result["bleu"], 2), "chrf": round(result["chrf"], 2), "cpu_s": round(time.process_time() - start),
            "updates": (translator.train_state or {}).get("step"),
            "core_hours": round((translator.train_state or {}).get("cpu_s", 0) / 3600, 2)}


def table(runs: Path, out: Path, beam: int) -> None:
    flickr = (DATA / "multi30k" / "test_2016_flickr.en", DATA / "multi30k" / "test_2016_flickr.fr")
    hansards = (DATA / "hansards" / "test.en", DATA / "hansards" / "test.fr")
    models = {"a": RELEASE, **{k: str(runs / k / "best.pt") for k in "bcd"}}
    results = {k: _row(m, flickr, beam) for k, m in models.items()}
    forgetting = _row(models["b"], hansards, 12)
    lines = [f"test_2016_flickr (1,000 captions), beam {beam}; sacreBLEU BLEU and chrF; compute = CPU time of the "
             "training loop (`train.max_core_hours`; (a): its own 12 core-hours on the Hansards).", "",
             "| model | updates | core-hours | BLEU | chrF |", "|---|---:|---:|---:|---:|"]
    for k, r in results.items():
        lines.append(f"| {ROWS[k]} | {r['updates'] or 0:,} | {r['core_hours']} | {r['bleu']:.2f} | {r['chrf']:.2f} |")
    card = json.loads((pretrained.resolve(RELEASE).parent / "release.json").read_text())["test"]
    kept = card.get("unk_replaced", {}).get("bleu_keep_unk", card["bleu"])
    lines += ["", f"Hansards test (3,003 sentences, beam 12, <unk> kept) with (b): BLEU {forgetting['bleu']:.2f} "
              f"(chrF {forgetting['chrf']:.2f}); the release itself: {kept:.2f} (its release.json)."]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out.with_suffix(".json")).write_text(json.dumps({**results, "b_hansards": forgetting}, indent=1) + "\n")
    print("\n".join(lines))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fresh", help="the release's config and vocabularies with fresh weights, for (c)")
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--seed", type=int, default=1234)
    t = sub.add_parser("table", help="translate the test sets with (a)-(d) and write the table")
    t.add_argument("--runs", type=Path, required=True, help="the folder holding the runs b, c and d")
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--beam", type=int, default=5)
    args = p.parse_args()
    if args.what == "fresh":
        fresh(args.out, args.seed)
    else:
        table(args.runs, args.out, args.beam)


if __name__ == "__main__":
    main()
