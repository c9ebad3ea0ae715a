"""Validation: the dev loss (teacher forcing) and the dev BLEU of the model's own translations,
each split over the ranks of a distributed run and gathered."""
from __future__ import annotations

import math

import numpy as np
import torch

from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.data.batching import make_batch
from rnnsearch.data.corpus import Corpus
from rnnsearch.model import evaluating
from rnnsearch.training import distributed


def dev_loss(model, corpus: Corpus, batch_size: int = 64, ctx=None) -> tuple[float, int]:
    """Mean per-token negative log-likelihood on ``corpus`` (teacher forcing), summed over ranks."""
    ctx = ctx or distributed.Context()
    order = distributed.shard(np.argsort(corpus.tgt_lens, kind="stable"), ctx)
    total, tokens = 0.0, 0
    with torch.no_grad(), evaluating(model):
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            b = make_batch([corpus.src_ids[i] for i in idx], [corpus.tgt_ids[i] for i in idx]).to(ctx.device)
            nll, n = model.loss(b.src, b.src_mask, b.tgt_in, b.tgt_out)
            total, tokens = total + float(nll), tokens + n
    total, tokens = distributed.all_sum([total, tokens], ctx)
    return total / max(tokens, 1), int(tokens)


def dev_bleu(translator, sources: list[str], references: list[str], beam: int, ctx=None) -> float:
    """sacreBLEU of ``translator``'s translations of ``sources``; rank r translates every
    world-th sentence from r, and all ranks get the same score."""
    ctx = ctx or distributed.Context()
    n = len(sources)
    mine = range(ctx.rank, n, ctx.world) if ctx.enabled else range(n)
    local = [h.text for h in translator.translate([sources[i] for i in mine], translator.search_settings(beam=beam))]
    hyps = [""] * n
    for rank, texts in enumerate(distributed.all_gather(local, ctx)):
        for i, text in zip(range(rank, n, ctx.world), texts):
            hyps[i] = text
    return corpus_bleu(hyps, references[:n])[0]


def validate(model, translator, dev_corpus: Corpus, dev_text: tuple[list[str], list[str]], beam: int,
             max_sentences: int = 0, ctx=None) -> dict:
    """Dev loss and perplexity (whole dev set), dev BLEU (its first ``max_sentences``; 0 = all)."""
    loss, _ = dev_loss(model, dev_corpus, ctx=ctx)
    n = max_sentences or len(dev_text[0])
    bleu = dev_bleu(translator, dev_text[0][:n], dev_text[1][:n], beam, ctx)
    return {"dev_loss": loss, "dev_ppl": math.exp(min(loss, 50.0)), "dev_bleu": bleu}
