"""Sampling: outputs drawn from the model's distribution instead of searched for, token by token,
p(y_i | y_<i, x) sharpened or flattened by a temperature and optionally restricted to its k most
probable tokens (top-k sampling). What back-translation with sampled sources (Edunov et al. 2018)
and minimum-risk or MBR decoding need: several different plausible outputs per sentence.

Each output's score is the model's own log p(y, </s> | x) (untempered, unrestricted), as beam
search reports it, so scores of sampled and searched outputs compare. With ``Sampling.seed``, each
draw has a generator of its own, seeded by the seed, the sentence's units and the draw's number, and
picks by the Gumbel-max trick (the argmax of log p / T plus Gumbel noise is a draw from softmax(log p /
T)): a sentence's draws are the same whatever is translated beside it, in whatever batches (they
depended on the batch before), and two copies of a sentence draw alike. Without a seed, torch's global
generator draws (``torch.multinomial``). ``search_or_sample`` runs what a translation's settings ask for:
a draw, or a search.
"""
from __future__ import annotations

import torch
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from rnnsearch.decoding.search import Hypothesis, beam_search, greedy


class Sampling(BaseModel):
    """How outputs are drawn; the HTTP API's ``sample`` object is this model."""
    model_config = ConfigDict(frozen=True, extra="forbid")

    topk: StrictInt = Field(0, ge=0, description="draw among the k most probable tokens (0: all of them)")
    temperature: StrictFloat | StrictInt = Field(1.0, gt=0, description="p^(1/T), renormalised: < 1 sharper, "
                                                 "> 1 flatter")
    seed: StrictInt | None = Field(None, description="the draws' seed (None: torch's global generator); with "
                                   "one, a sentence's draws depend on the seed and the sentence alone")

    def generator(self, device) -> torch.Generator | None:
        return None if self.seed is None else torch.Generator(device).manual_seed(self.seed)


def _picker(sampling: Sampling, generator: torch.Generator | None, seeds: list[int] | None = None):
    """``pick(logp, rows)``: one token per row drawn from softmax(logp / T) over the row's top k, (N, V) -> (N,);
    ``seeds``: a generator for each draw (``rows`` index them), else ``generator`` draws for all rows."""
    own = None if seeds is None else [torch.Generator().manual_seed(s) for s in seeds]

    def pick(logp: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        scaled = logp.float() / sampling.temperature  # (N, V)
        if sampling.topk:
            scaled, columns = scaled.topk(min(sampling.topk, scaled.size(1)), dim=1)  # (N, k) each
        if own is None:
            drawn = torch.multinomial(torch.softmax(scaled, dim=1), 1, generator=generator)  # (N, 1)
        else:  # Gumbel-max, each row's noise from its own draw's generator
            uniform = torch.stack([torch.rand(scaled.size(1), generator=own[r]) for r in rows.tolist()])  # (N, V|k)
            gumbel = -torch.log(-torch.log(uniform.clamp(1e-20, 1 - 1e-7))).to(scaled.device)  # (N, V|k)
            drawn = (scaled + gumbel).argmax(1, keepdim=True)  # (N, 1)
        return (columns.gather(1, drawn) if sampling.topk else drawn).squeeze(1)  # (N,)
    return pick


def draw_seeds(seed: int, src: torch.Tensor, src_mask: torch.Tensor, n: int) -> list[int]:
    """A seed for each of ``n`` draws of each sentence, (B*n,): from the seed, the sentence's units and the draw's
    number alone (blake2b), so that a draw does not depend on the sentences beside it."""
    import hashlib
    out = []
    for ids, mask in zip(src.tolist(), src_mask.tolist()):
        units = ",".join(str(i) for i, m in zip(ids, mask) if m)
        for j in range(n):
            digest = hashlib.blake2b(f"{seed}|{units}|{j}".encode(), digest_size=8).digest()
            out.append(int.from_bytes(digest, "little") & (2**63 - 1))
    return out


@torch.no_grad()
def sample(model, src: torch.Tensor, src_mask: torch.Tensor, settings, generator: torch.Generator | None = None,
           prefix: torch.Tensor | None = None) -> list[list[Hypothesis]]:
    """``settings.n_best`` outputs drawn for each sentence as ``settings.sampling`` says (resolved
    SearchSettings, decoding/settings.py), each sentence's best-scored first. ``generator``: the
    draws' (default: a new one from the sampling seed; a caller decoding several batches passes
    one, so that the batches do not repeat each other's draws). ``prefix`` (B, P): each output
    begins with it (decoding/search.py)."""
    sampling, n = settings.sampling, settings.n_best
    rows = torch.arange(src.size(0), device=src.device).repeat_interleave(n)  # (B*n,)
    seeds = None if sampling.seed is None else draw_seeds(sampling.seed, src, src_mask, n)
    pick = _picker(sampling, generator if generator is not None else sampling.generator(src.device), seeds)
    drawn = greedy(model, src.index_select(0, rows), src_mask.index_select(0, rows), settings,
                   None if prefix is None else prefix.index_select(0, rows), pick)
    return [sorted(drawn[b * n:(b + 1) * n], key=lambda h: -h.norm_score) for b in range(src.size(0))]


def search_or_sample(model, prefix, constraints, src, mask, settings, generator) -> list[list[Hypothesis]]:
    """The search ``settings`` ask for over ``model``: sampling, beam search (constrained: at any beam), greedy."""
    if settings.sampling is not None:
        return sample(model, src, mask, settings, generator, prefix)
    if constraints is not None and any(constraints):
        return beam_search(model, src, mask, settings, prefix, constraints)  # beam 1 too
    if settings.beam == 1:
        return [[h] for h in greedy(model, src, mask, settings, prefix)]
    return beam_search(model, src, mask, settings, prefix)
