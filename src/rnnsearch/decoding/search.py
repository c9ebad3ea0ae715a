"""Greedy and beam search: pure functions over ``model.step``, batched over sentences
and beams. Finished sentences leave the batch.

The beam is the paper's (Groundhog's): each step keeps the K - f best extensions of a
sentence that already has f finished hypotheses, and a hypothesis that emits </s> is
finished; a sentence is done when it has K finished hypotheses. Hypotheses reaching the
length limit are ended with </s>. One rule the paper does not state: </s> is not a first token, so
no output is empty (an empty best hypothesis, which the search can find for a source far from the
training data, translates nothing; fairseq's and Sockeye's minimum length of 1 does the same).
Scores are log p(y, </s> | x); with a length penalty alpha > 0 the finished hypotheses are ranked
by score / ((5 + |y|) / 6)^alpha (Wu et al. 2016), and with a coverage penalty beta > 0 that score
gets beta * sum_j log min(sum_i alpha_ij, 1) added (Wu et al. 2016 too: a hypothesis that leaves a
source word unread ranks lower; only the ranking of finished hypotheses changes, not the beam).

A ``prefix`` (B, P) of output ids (PAD past each sentence's own) forces each output to begin with
those tokens, which keep their log-probabilities; the search continues from there (interactive
translation: complete what a translator has typed). The length limit makes room for the prefix.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rnnsearch.data.vocab import BOS, EOS, PAD
from rnnsearch.decoding.constraints import Tracker


@dataclass
class Hypothesis:
    tokens: list[int]               # output ids, </s> excluded
    score: float                    # log p(tokens + </s> | x)
    norm_score: float               # ranking score (== score without length or coverage penalty)
    attention: np.ndarray | None     # (len(tokens) + 1, source length incl. </s>), rows sum to 1
    complete: bool = True            # False: ended at the length limit before meeting its constraints


def max_lengths(src_mask: torch.Tensor, ratio: float) -> torch.Tensor:
    """Output length limit per sentence (</s> included): ratio * source length + 5."""
    return (src_mask.sum(1).float() * ratio).long() + 5  # (B,)


def length_normalise(score: float, length: int, alpha: float) -> float:
    return score if alpha == 0 else score / (((5.0 + length) / 6.0) ** alpha)


def _force_eos(logp: torch.Tensor, rows: torch.Tensor, t: int) -> torch.Tensor:
    """In place: never <pad> or <s>, never </s> at the first step t = 0 (an output is never empty);
    only </s> (with its own log-probability) in the given rows (B, V) -> (B, V)."""
    logp[:, PAD] = float("-inf")
    logp[:, BOS] = float("-inf")
    if t == 0:
        logp[:, EOS] = float("-inf")
    if rows.any():
        eos = logp[:, EOS].clone()  # (B,)
        logp.masked_fill_(rows[:, None], float("-inf"))
        logp[:, EOS] = eos
    return logp


def _force_prefix(logp: torch.Tensor, prefix: torch.Tensor | None, t: int, rows: torch.Tensor,
                  k: int = 1) -> torch.Tensor:
    """Rows whose sentence's prefix has a token at step t may emit only that token, with its own
    log-probability: (N, V) -> (N, V). ``prefix`` (B, P) holds the batch's prefixes, ``rows`` (N / k,)
    the sentence of each group of k rows of ``logp``. Past the longest prefix: nothing to do."""
    if prefix is None or t >= prefix.size(1):
        return logp
    token = prefix[rows, t].repeat_interleave(k)[:, None]  # (N, 1)
    forced = torch.full_like(logp, float("-inf")).scatter_(1, token, logp.gather(1, token))  # (N, V)
    return torch.where(token != PAD, forced, logp)  # (N, V)


def _limits(src_mask: torch.Tensor, ratio: float, prefix: torch.Tensor | None) -> torch.Tensor:
    """max_lengths, at least the prefix and </s>: (B,)."""
    limits = max_lengths(src_mask, ratio)  # (B,)
    return limits if prefix is None else torch.maximum(limits, (prefix != PAD).sum(1) + 1)


def coverage_penalty(matrix: np.ndarray | None, beta: float) -> float:
    """GNMT's cp = beta * sum_j log min(sum_i alpha_ij, 1) over the source words j (</s> left out), i
    over every output step: 0 where each word got a whole unit of attention, very negative where one
    got none (a dropped word); 0 where beta is 0 or there is no attention."""
    if beta == 0 or matrix is None:
        return 0.0
    mass = matrix[:, :-1].sum(0)  # (S - 1,)
    return beta * float(np.log(np.clip(mass, 1e-6, 1.0)).sum())


def _hypothesis(tokens: torch.Tensor | list[int], score: float, attn: torch.Tensor | None, src_len: int,
                alpha: float, beta: float = 0.0) -> Hypothesis:
    toks = [int(t) for t in tokens]
    matrix = None if attn is None else attn[: len(toks) + 1, :src_len].float().cpu().numpy()
    rank = length_normalise(score, len(toks) + 1, alpha) + coverage_penalty(matrix, beta)
    return Hypothesis(toks, score, rank, matrix)


def most_probable(logp: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
    """Greedy's choice: the most probable token of each row, (N, V) -> (N,) (``rows``: each row's sentence)."""
    return logp.argmax(1)


@torch.no_grad()
def greedy(model, src: torch.Tensor, src_mask: torch.Tensor, settings, prefix: torch.Tensor | None = None,
           pick=most_probable) -> list[Hypothesis]:
    """Most probable next token at each step; one hypothesis per sentence. Finished sentences
    leave the batch. ``settings``: resolved SearchSettings (decoding/settings.py; its length
    limit and penalty). ``pick`` chooses each step's tokens from the log-probabilities (N, V)
    and each row's sentence (N,) -> (N,) (decoding/sampling.py draws them); the scores are the model's
    log-probabilities of the choices. ``prefix``: see the module's docstring."""
    settings = settings.require_resolved()
    batch, device = src.size(0), src.device
    enc = model.encode(src, src_mask)
    state = model.init_state(enc)
    limits = _limits(src_mask, settings.max_len_ratio, prefix)  # (B,)
    src_lens = src_mask.sum(1).tolist()
    alive = torch.arange(batch, device=device)  # (N,) original index of each active row
    y = torch.full((batch,), BOS, dtype=torch.long, device=device)  # (N,)
    scores = torch.zeros(batch, device=device)  # (N,)
    tokens, attns = [], []  # per step: (N,) ids and (N, S) alphas of the rows alive then
    rows_at = []  # per step: alive (N,)
    ended = [None] * batch
    t = 0
    while alive.numel():
        logp, state, alpha = model.step(y, state, enc)  # (N, V)
        logp = _force_prefix(_force_eos(logp, t + 1 >= limits[alive], t), prefix, t, alive)
        y = pick(logp, alive)  # (N,)
        scores += logp.gather(1, y[:, None]).squeeze(1)
        tokens.append(y)
        rows_at.append(alive)
        if alpha is not None:
            attns.append(alpha)
        t += 1
        done = y == EOS  # (N,); every row ends by its length limit
        if done.any():
            for sent, score in zip(alive[done].tolist(), scores[done].tolist()):
                ended[sent] = (t, score)
            keep = (~done).nonzero().squeeze(1)  # (N',)
            alive, y, scores = alive[keep], y[keep], scores[keep]
            state, enc = state.select(keep), enc.select(keep)
    return _collect_greedy(batch, tokens, attns, rows_at, ended, src_lens, settings.length_penalty)


def _collect_greedy(batch, tokens, attns, rows_at, ended, src_lens, alpha) -> list[Hypothesis]:
    """Rebuild each sentence's tokens and attention rows from the per-step (shrinking) batches."""
    position = [[] for _ in range(batch)]  # per sentence: its row at each step
    for rows in rows_at:
        for j, sent in enumerate(rows.tolist()):
            position[sent].append(j)
    token_lists = [step.tolist() for step in tokens]
    hyps = []
    for sent in range(batch):
        length, score = ended[sent]
        toks = [token_lists[i][position[sent][i]] for i in range(length)]  # </s> last
        attn = None if not attns else torch.stack([attns[i][position[sent][i]] for i in range(length)])  # (L, S)
        hyps.append(_hypothesis(toks[:-1], score, attn, src_lens[sent], alpha))
    return hyps


GROUP = 16  # row_topk: elements per group


def row_topk(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest values of each row and their columns, as ``x.topk(k, dim=1)`` gives them
    (the order of equal values aside): (R, V) -> (R, k), (R, k).

    ``topk`` reads each row element by element. Here the columns are split into G groups of 16
    strided columns ({g, g + G, g + 2G, ...}); the maxima of all groups come from one vectorised
    pass, and only the k groups with the largest maxima are searched. That is exact: each of a
    row's k largest values lies in one of those groups (a group left out has a maximum no larger
    than k other groups' maxima, each a distinct value). Columns past 16 G are added as they are."""
    rows, vocab = x.shape
    groups = vocab // GROUP
    if groups < 4 * k:
        return x.topk(k, dim=1)
    main = x[:, : GROUP * groups].view(rows, GROUP, groups)  # (R, 16, G); column = member * G + group
    _, best = main.amax(1).topk(k, dim=1)  # (R, k) groups with the largest maxima
    cand = main.gather(2, best[:, None, :].expand(rows, GROUP, k))  # (R, 16, k)
    columns = torch.arange(GROUP, device=x.device)[None, :, None] * groups + best[:, None, :]  # (R, 16, k)
    cand, columns = cand.reshape(rows, GROUP * k), columns.reshape(rows, GROUP * k)  # (R, 16k)
    if vocab > GROUP * groups:  # the remaining < 16 columns
        tail = torch.arange(GROUP * groups, vocab, device=x.device).expand(rows, -1)  # (R, V - 16G)
        cand, columns = torch.cat([cand, x[:, GROUP * groups:]], 1), torch.cat([columns, tail], 1)
    top, pos = cand.topk(k, dim=1)  # (R, k)
    return top, columns.gather(1, pos)


def _best_extensions(scores: torch.Tensor, logp: torch.Tensor, k: int):
    """The K best extensions of each sentence's K hypotheses: scores (N, K), logp (N, K, V) ->
    their scores, tokens and hypothesis indices, (N, K) each. The K best of all K x V candidates
    are among each hypothesis's own K best tokens, so only K x K candidates are compared: no
    (N, K, V) sum is made (with a large vocabulary and many sentences, each one was a fresh
    allocation, page-faulted at every step)."""
    n, _, vocab = logp.shape
    kk = min(k, vocab)
    row_top, row_token = row_topk(logp.view(n * k, vocab), kk)  # (N*K, kk)
    cand = (scores.unsqueeze(2) + row_top.view(n, k, kk)).view(n, k * kk)  # (N, K*kk)
    top, pos = cand.topk(k, dim=1)  # (N, K)
    return top, row_token.view(n, k * kk).gather(1, pos), pos // kk


def _finish(finished, n_done, ended, alive, top, history, attn_history, src_lens, rank, tracker=None) -> None:
    """The hypotheses that emitted </s> this step, ended (N, K), go to their sentences' finished
    lists (in place, as n_done): each tensor is read once for all of them, not once per hypothesis.
    ``rank``: (length penalty, coverage penalty); ``tracker``: the constraints' (decoding/constraints.py),
    which says which met theirs."""
    k = ended.size(1)
    where = ended.nonzero()  # (F, 2): sentence slot, beam slot, in row-major order as top[ended]
    rows = where[:, 0] * k + where[:, 1]  # (F,)
    sents = alive.index_select(0, where[:, 0])  # (F,)
    n_done.index_add_(0, sents, torch.ones_like(sents))
    tokens = history.index_select(0, rows)[:, :-1].tolist()  # F x t, </s> dropped
    attn = None if attn_history is None else attn_history.index_select(0, rows)  # (F, t+1, S)
    for f, (row, sent, score) in enumerate(zip(rows.tolist(), sents.tolist(), top[ended].tolist())):
        hyp = _hypothesis(tokens[f], score, None if attn is None else attn[f], src_lens[sent], *rank)
        if tracker is not None:
            hyp.complete = tracker.met_all(row, sent)
        finished[sent].append(hyp)


@torch.no_grad()
def beam_search(model, src: torch.Tensor, src_mask: torch.Tensor, settings,
                prefix: torch.Tensor | None = None, constraints: list | None = None) -> list[list[Hypothesis]]:
    """Batched beam search with resolved SearchSettings (decoding/settings.py): for each sentence
    its ``settings.n_best`` best finished hypotheses. ``prefix``: see the module's docstring.
    ``constraints``: one decoding.constraints.Constraints (or None) per sentence: the beam is then
    allocated as that module says (any beam size, 1 included)."""
    settings = settings.require_resolved()
    batch, k, rank = src.size(0), settings.beam, (settings.length_penalty, settings.coverage_penalty)
    tracker = Tracker(constraints, k) if constraints and any(c and (c.include or c.avoid) for c in constraints) else None
    device = src.device
    src_lens = src_mask.sum(1).tolist()
    limits = _limits(src_mask, settings.max_len_ratio, prefix)  # (B,)
    enc = model.encode(src, src_mask)  # one row per sentence; the model reads it for the K hypotheses
    state = model.init_state(enc).select(torch.arange(batch, device=device).repeat_interleave(k))  # (B*K, D)
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
        at_limit = (t + 1 >= limits[alive]).repeat_interleave(k)  # (N*K,)
        logp = _force_prefix(_force_eos(logp, at_limit, t), prefix, t, alive, k)  # (N*K, V)
        if tracker is not None:
            tracker.restrict(logp, alive.tolist(), history, at_limit)
        best = _best_extensions(scores, logp.view(n, k, vocab), k)  # (N, K) scores, tokens, hypotheses
        top, token, beam_of = best if tracker is None else tracker.extend(
            scores, logp.view(n, k, vocab), k - n_done[alive], alive.tolist(), best)
        live = slots[None, :] < (k - n_done[alive])[:, None]  # (N, K): K - f slots stay open
        top = top.masked_fill(~live, float("-inf"))
        rows = ((torch.arange(n, device=device) * k)[:, None] + beam_of).view(-1)  # (N*K,)
        history = torch.cat([history[rows], token.view(-1, 1)], 1)  # (N*K, t+1)
        if alpha is not None:
            step_attn = alpha[rows].unsqueeze(1)  # (N*K, 1, S)
            attn_history = step_attn if attn_history is None else torch.cat([attn_history[rows], step_attn], 1)
        ended = (token == EOS) & (top > float("-inf"))  # (N, K)
        if ended.any():
            _finish(finished, n_done, ended, alive, top, history, attn_history, src_lens, rank, tracker)
        scores = top.masked_fill(ended, float("-inf"))  # (N, K)
        y = token.view(-1)  # (N*K,)
        state = state.select(rows)
        done = (n_done[alive] >= k) | torch.isinf(scores).all(1)  # (N,)
        if done.any():
            keep = (~done).nonzero().squeeze(1)  # (N',)
            keep_rows = (keep[:, None] * k + slots[None, :]).view(-1)  # (N'*K,)
            alive, scores, y = alive[keep], scores[keep], y[keep_rows]
            history, state, enc = history[keep_rows], state.select(keep_rows), enc.select(keep)
            if tracker is not None:
                tracker.select(keep_rows.tolist())
            if attn_history is not None:
                attn_history = attn_history[keep_rows]
        t += 1
    return [sorted(f, key=lambda h: (not h.complete, -h.norm_score))[:settings.n_best] for f in finished]
