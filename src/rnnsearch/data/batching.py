"""Minibatches: the paper's scheme (fetch 20 x 80 pairs, sort by length, split into 20
minibatches) or batches by token count; deterministic per (seed, epoch) so that a
resumed run sees exactly the batches an uninterrupted run would."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rnnsearch.data.vocab import BOS, EOS, PAD


@dataclass
class Batch:
    src: torch.Tensor       # (B, S) source ids, </s>-terminated, PAD-padded
    src_mask: torch.Tensor  # (B, S) True = real token
    tgt_in: torch.Tensor    # (B, T) <s> y_1 .. y_{T-1}
    tgt_out: torch.Tensor   # (B, T) y_1 .. y_T </s>
    n_tokens: int           # real target tokens (</s> included)

    def to(self, device) -> "Batch":
        return Batch(self.src.to(device), self.src_mask.to(device), self.tgt_in.to(device),
                     self.tgt_out.to(device), self.n_tokens)


def pad(seqs: list[list[int]]) -> torch.Tensor:
    """Right-pad with PAD: list of N id lists -> (N, max len)."""
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), PAD, dtype=torch.long)  # (N, L)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


def source_batch(src_ids: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Source id lists (without </s>) -> src (B, S) with </s> appended, mask (B, S)."""
    src = pad([list(s) + [EOS] for s in src_ids])  # (B, S)
    return src, src != PAD


def make_batch(src_ids: list[list[int]], tgt_ids: list[list[int]]) -> Batch:
    src, src_mask = source_batch(src_ids)
    tgt_in = pad([[BOS] + list(t) for t in tgt_ids])  # (B, T)
    tgt_out = pad([list(t) + [EOS] for t in tgt_ids])  # (B, T)
    return Batch(src, src_mask, tgt_in, tgt_out, int((tgt_out != PAD).sum()))


def epoch_plan(src_lens: np.ndarray, tgt_lens: np.ndarray, train_cfg, seed: int,
               epoch: int) -> list[np.ndarray]:
    """The list of minibatches (arrays of pair indices) for one epoch."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(src_lens))
    pool_size = train_cfg.batch_size * train_cfg.sort_pool
    batches: list[np.ndarray] = []
    for start in range(0, len(order), pool_size):
        pool = order[start:start + pool_size]
        pool = pool[np.lexsort((src_lens[pool], tgt_lens[pool]))]  # by target, then source length
        if train_cfg.batch_mode == "sentences":
            batches.extend(pool[i:i + train_cfg.batch_size]
                           for i in range(0, len(pool), train_cfg.batch_size))
        else:
            batches.extend(_split_by_tokens(pool, tgt_lens, train_cfg.batch_tokens))
    rng.shuffle(batches)
    return batches


def _split_by_tokens(pool: np.ndarray, tgt_lens: np.ndarray, budget: int) -> list[np.ndarray]:
    """Greedy split of a length-sorted pool so that padded target tokens stay within budget."""
    out, start, longest = [], 0, 0
    for i, idx in enumerate(pool):
        longest_next = max(longest, int(tgt_lens[idx]) + 1)
        if i > start and longest_next * (i - start + 1) > budget:
            out.append(pool[start:i])
            start, longest_next = i, int(tgt_lens[idx]) + 1
        longest = longest_next
    out.append(pool[start:])
    return out
