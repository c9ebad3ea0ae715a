"""How far the alignment head's tag placement moves when the head learns WPT's own convention (#61):
the released head fine-tuned on the gold links of WPT 2003 sentences 1-223, then scored as
markup_wpt.py scores it (phrase pairs, exact target span against the sure and possible links).

The model stays frozen; Adam trains the head alone, on each French word's gold links (sure and
possible, shared equally; </s> on </s>) as guided alignment's ce, one update per 8 sentences.
``--train 1-180`` scores sentences 181-223 (to choose --lr and --epochs without the held-out half);
``--train 1-223`` scores the held-out half (224-447). The head as released is scored on the same
sentences first.

    python experiments/markup_head_wpt.py [--model hansards_enfr_rnnsearch50] [--train 1-223]
        [--lr 3e-3] [--epochs 15] [--seed 1]
"""
from __future__ import annotations

import argparse
import copy
import random

import numpy as np
import torch

from markup_wpt import HELD_OUT, WPT, score
from rnnsearch.analysis.force_align import group_units, merge
from rnnsearch.analysis.gold_text import natural_forms
from rnnsearch.analysis.links import read_wpt_gold
from rnnsearch.data.batching import make_batch
from rnnsearch.data.io import read_lines
from rnnsearch.data.vocab import PAD
from rnnsearch.decoding.translator import Translator
from rnnsearch.model.align_head import head_inputs


def read_pairs(translator, pairs, gold) -> list[dict]:
    """Per pair: the head's inputs from the frozen model, the gold links' target distribution over the
    model's units, and what ``merge`` needs to turn the head's rows into word rows."""
    forms, out = natural_forms(translator.src_codec, translator.tgt_codec), []
    for (src, tgt), (_, possible) in zip(pairs, gold):
        words, target = src.split(), tgt.split()
        (su, so), (tu, to) = group_units(translator.src_codec, forms[0](words)), group_units(translator.tgt_codec,
                                                                                              forms[1](target))
        batch = make_batch([translator.src_codec.vocab.encode(su)], [translator.tgt_codec.vocab.encode(tu)])
        inputs = head_inputs(translator.model, batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)
        guide = np.zeros(tuple(batch.tgt_out.shape[1:]) + (batch.src.shape[1],))  # (T, S)
        for i, french in enumerate(to):
            for j, english in enumerate(so):
                guide[i, j] = any((e, f) in possible for e in english for f in french)
        guide[-1, -1] = 1  # </s> on </s>
        out.append({"inputs": (*inputs, batch.src_mask, batch.tgt_out != PAD), "units": (len(su), len(tu)),
                    "owners": (so, to), "words": (len(words), len(target)),
                    "guide": torch.tensor(guide / np.maximum(guide.sum(1, keepdims=True), 1), dtype=torch.float32)})
    return out


def word_rows(head, items: list[dict]) -> list[np.ndarray]:
    """The head's rows over the given words (French words x English words), as force_align merges them."""
    head.eval()
    with torch.no_grad():
        rows = [head(*it["inputs"]).exp()[0].numpy() for it in items]
    return [merge(r[: it["units"][1], : it["units"][0]], *it["owners"], *it["words"]) for r, it in zip(rows, items)]


def fine_tune(head, items: list[dict], train: range, lr: float, epochs: int, seed: int, batch: int = 8):
    head, rng = copy.deepcopy(head), random.Random(seed)
    torch.manual_seed(seed)
    optimiser = torch.optim.Adam(head.parameters(), lr=lr)
    for _ in range(epochs):
        head.train()
        order = list(train)
        rng.shuffle(order)
        for start in range(0, len(order), batch):
            cost, rows = 0.0, 0
            for k in order[start:start + batch]:
                log_beta, guide = head(*items[k]["inputs"])[0], items[k]["guide"]  # (T, S)
                cost = cost - torch.where(guide > 0, guide * log_beta, torch.zeros_like(log_beta)).sum()
                rows += int((guide.sum(1) > 0).sum())
            optimiser.zero_grad()
            (cost / rows).backward()
            optimiser.step()
    return head


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="hansards_enfr_rnnsearch50")
    p.add_argument("--train", choices=["1-180", "1-223"], default="1-223")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--seed", type=int, default=1, help="the tagged spans' seed (markup_wpt.py's) and the training's")
    args = p.parse_args()
    translator = Translator.from_pretrained(args.model)
    if translator.align_head is None:
        raise SystemExit(f"{args.model} has no alignment head")
    pairs = [tuple(x.strip() for x in line.split("|||")) for line in read_lines(WPT / "test.en-fr")]
    gold = read_wpt_gold(WPT / "test.gold")
    items = read_pairs(translator, pairs, gold)
    train = range(180) if args.train == "1-180" else range(HELD_OUT.start)
    scored = {"181-223": range(180, HELD_OUT.start)} if args.train == "1-180" else {"224-447": HELD_OUT}
    name = next(iter(scored))
    before = score(word_rows(translator.align_head, items), pairs, gold, args.seed, True, scored)[name]
    tuned = fine_tune(translator.align_head, items, train, args.lr, args.epochs, args.seed)
    after = score(word_rows(tuned, items), pairs, gold, args.seed, True, scored)[name]
    print(f"| head | trained on | lr | epochs | {name}: exact | spans |\n|---|---|---:|---:|---:|---:|\n"
          f"| as released | - | - | - | {before['exact']:.1%} | {before['spans']} |\n"
          f"| fine-tuned | WPT {args.train} | {args.lr:g} | {args.epochs} | {after['exact']:.1%} | {after['spans']} |")


if __name__ == "__main__":
    main()
