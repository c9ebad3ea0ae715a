"""Greedy and beam search: pure functions over ``model.step``, batched over sentences
and beams. Finished sentences leave the batch.

The beam is the paper's (Groundhog's): each step keeps the K - f best extensions of a
sentence that already has f finished hypotheses, and a hypothesis that emits </s> is
finished; a sentence is done when it has K finished hypotheses. Hypotheses reaching the
length limit are ended with </s>. Scores are log p(y, </s> | x); with a length penalty
alpha > 0 the finished hypotheses are ranked by score / ((5 + |y|) / 6)^alpha (Wu et al. 2016).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .vocab import BOS, EOS, PAD


@dataclass
class Hypothesis:
    tokens: list[int]               # output ids, </s> excluded
    score: float                    # log p(tokens + </s> | x)
    norm_score: float               # ranking score (== score without length penalty)
    attention: np.ndarray | None     # (len(tokens) + 1, source length incl. </s>), rows sum to 1


def max_lengths(src_mask: torch.Tensor, ratio: float) -> torch.Tensor:
    """Output length limit per sentence (</s> included): ratio * source length + 5."""
    return (src_mask.sum(1).float() * ratio).long() + 5  # (B,)


def length_normalise(score: float, length: int, alpha: float) -> float:
    return score if alpha == 0 else score / (((5.0 + length) / 6.0) ** alpha)


def _force_eos(logp: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Never <pad> or <s>; only </s> in the given rows (B, V) -> (B, V)."""
    logp = logp.index_fill(1, torch.tensor([PAD, BOS], device=logp.device), float("-inf"))
    if rows.any():
        eos_only = torch.full_like(logp[0], float("-inf"))  # (V,)
        eos_only[EOS] = 0.0
        logp = torch.where(rows[:, None], logp + eos_only, logp)
    return logp


def _hypothesis(tokens: torch.Tensor, score: float, attn: torch.Tensor | None, src_len: int,
                alpha: float) -> Hypothesis:
    toks = [int(t) for t in tokens]
    matrix = None if attn is None else attn[: len(toks) + 1, :src_len].float().cpu().numpy()
    return Hypothesis(toks, score, length_normalise(score, len(toks) + 1, alpha), matrix)


@torch.no_grad()
def greedy(model, src: torch.Tensor, src_mask: torch.Tensor, max_len_ratio: float = 2.0,
           length_penalty: float = 0.0) -> list[Hypothesis]:
    """Most probable next token at each step; one hypothesis per sentence."""
    batch = src.size(0)
    enc = model.encode(src, src_mask)
    state = model.init_state(enc)
    limits = max_lengths(src_mask, max_len_ratio)  # (B,)
    y = torch.full((batch,), BOS, dtype=torch.long, device=src.device)  # (B,)
    scores = torch.zeros(batch, device=src.device)  # (B,)
    done = torch.zeros(batch, dtype=torch.bool, device=src.device)  # (B,)
    out, attns = [], []
    for t in range(int(limits.max())):
        logp, state, alpha = model.step(y, state, enc)  # (B, V)
        logp = _force_eos(logp, t + 1 >= limits)
        y = logp.argmax(1)  # (B,)
        scores += torch.where(done, 0.0, logp.gather(1, y[:, None]).squeeze(1))
        out.append(y)
        if alpha is not None:
            attns.append(alpha)
        done |= y == EOS
        if done.all():
            break
    tokens = torch.stack(out, 1)  # (B, T)
    attn = torch.stack(attns, 1) if attns else None  # (B, T, S)
    src_lens = src_mask.sum(1).tolist()
    hyps = []
    for b in range(batch):
        row = tokens[b].tolist()
        length = row.index(EOS) if EOS in row else len(row)
        hyps.append(_hypothesis(tokens[b, :length], float(scores[b]),
                                None if attn is None else attn[b], src_lens[b], length_penalty))
    return hyps


@torch.no_grad()
def beam_search(model, src: torch.Tensor, src_mask: torch.Tensor, beam: int,
                max_len_ratio: float = 2.0, length_penalty: float = 0.0,
                n_best: int = 1) -> list[list[Hypothesis]]:
    """Batched beam search: for each sentence its ``n_best`` best finished hypotheses."""
    batch, k = src.size(0), beam
    device = src.device
    src_lens = src_mask.sum(1).tolist()
    limits = max_lengths(src_mask, max_len_ratio)  # (B,)
    enc = model.encode(src, src_mask)
    enc = enc.select(torch.arange(batch, device=device).repeat_interleave(k))  # (B*K, ...)
    state = model.init_state(enc)
    alive = torch.arange(batch, device=device)  # (N,) original index of each active sentence
    scores = torch.full((batch, k), float("-inf"), device=device)  # (N, K)
    scores[:, 0] = 0.0
    n_done = torch.zeros(batch, dtype=torch.long, device=device)  # (B,)
    y = torch.full((batch * k,), BOS, dtype=torch.long, device=device)  # (N*K,)
    history = torch.zeros(batch * k, 0, dtype=torch.long, device=device)  # (N*K, t)
    attn_history = None
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    slots = torch.arange(k, device=device)
    t = 0
    while alive.numel():
        n = alive.numel()
        logp, state, alpha = model.step(y, state, enc)  # (N*K, V)
        vocab = logp.size(1)
        logp = _force_eos(logp, (t + 1 >= limits[alive]).repeat_interleave(k))
        cand = scores.unsqueeze(2) + logp.view(n, k, vocab)  # (N, K, V)
        top, idx = cand.view(n, k * vocab).topk(k, dim=1)  # (N, K)
        live = slots[None, :] < (k - n_done[alive])[:, None]  # (N, K): K - f slots stay open
        top = top.masked_fill(~live, float("-inf"))
        token = idx % vocab  # (N, K)
        rows = ((torch.arange(n, device=device) * k)[:, None] + idx // vocab).view(-1)  # (N*K,)
        history = torch.cat([history[rows], token.view(-1, 1)], 1)  # (N*K, t+1)
        if alpha is not None:
            step_attn = alpha[rows].unsqueeze(1)  # (N*K, 1, S)
            attn_history = step_attn if attn_history is None else torch.cat([attn_history[rows], step_attn], 1)
        ended = (token == EOS) & (top > float("-inf"))  # (N, K)
        for i, j in ended.nonzero().tolist():
            sent = int(alive[i])
            row = i * k + j
            finished[sent].append(_hypothesis(
                history[row, :-1], float(top[i, j]),
                None if attn_history is None else attn_history[row], src_lens[sent], length_penalty))
            n_done[sent] += 1
        scores = top.masked_fill(ended, float("-inf"))  # (N, K)
        y = token.view(-1)  # (N*K,)
        state = state.select(rows)
        done = (n_done[alive] >= k) | torch.isinf(scores).all(1)  # (N,)
        if done.any():
            keep = (~done).nonzero().squeeze(1)  # (N',)
            keep_rows = (keep[:, None] * k + slots[None, :]).view(-1)  # (N'*K,)
            alive, scores, y = alive[keep], scores[keep], y[keep_rows]
            history, state, enc = history[keep_rows], state.select(keep_rows), enc.select(keep_rows)
            if attn_history is not None:
                attn_history = attn_history[keep_rows]
        t += 1
    return [sorted(f, key=lambda h: -h.norm_score)[:n_best] for f in finished]
