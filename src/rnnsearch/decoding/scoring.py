"""Scores of given translations: log p(y | x) of each target sentence under the model, read with
teacher forcing (``rnnsearch score``, ``Translator.score``): to rerank candidates that came from
elsewhere, to filter a corpus by the model's belief in its pairs, or to measure a test set's
perplexity. The score is the one beam search reports for its own outputs, sum_i log p(y_i | y_<i, x)
with </s> counted as the last y_i (tests/property/test_scoring.py checks the two agree).

With ``details`` each score also keeps its terms, log p(y_i | y_<i, x) per target unit, and (for
RNNsearch) the attention alpha_ij of the steps that emitted them: the model's alignment of a given
translation, the one its search would report had it chosen that output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from rnnsearch.config import DecodeConfig
from rnnsearch.data.batching import make_batch
from rnnsearch.data.vocab import PAD, UNK


@dataclass(frozen=True)
class Score:
    logprob: float  # log p(y_1 .. y_T, </s> | x), natural logarithm
    units: int      # target units scored, </s> included
    unknown: int    # target units outside the model's vocabulary (read as <unk>)
    # with details: log p(y_i | y_<i, x) per unit, </s> last (they sum to logprob), and alpha_ij,
    # (units, source units + </s>), None for RNNencdec; ``Translator.score`` adds the unit strings
    unit_logprobs: tuple[float, ...] | None = None
    attention: np.ndarray | None = field(default=None, compare=False, repr=False)
    tokens: tuple[str, ...] | None = None          # the target units, </s> excluded
    source_tokens: tuple[str, ...] | None = None   # the source units, </s> last

    @property
    def per_unit(self) -> float:
        """The log-probability per target unit."""
        return self.logprob / self.units


@torch.no_grad()
def score_ids(model, src_ids: list[list[int]], tgt_ids: list[list[int]], device,
              batch_size: int = DecodeConfig().batch_size, details: bool = False) -> list[Score]:
    """The scores of pairs given as ids (no <s> or </s>), in their order; the pairs are read in
    batches of similar target lengths. ``model`` is a Seq2Seq in eval mode. ``details``: keep
    each score's terms and attention (see ``Score``)."""
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"{len(src_ids)} sources for {len(tgt_ids)} targets")
    order = sorted(range(len(tgt_ids)), key=lambda i: (len(tgt_ids[i]), len(src_ids[i])))
    scores: list[Score | None] = [None] * len(order)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        batch = make_batch([src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk]).to(device)
        logits, alphas = model(batch.src, batch.src_mask, batch.tgt_in)  # (B, T, V), (B, T, S)
        logp = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
        picked = logp.gather(2, batch.tgt_out.unsqueeze(2)).squeeze(2)  # (B, T)
        picked = picked.masked_fill(batch.tgt_out == PAD, 0.0)  # (B, T)
        sums = picked.sum(1).tolist()  # (B,)
        for b, (i, total) in enumerate(zip(chunk, sums)):
            units, unknown = len(tgt_ids[i]) + 1, sum(1 for t in tgt_ids[i] if t == UNK)
            terms = tuple(picked[b, :units].tolist()) if details else None
            attention = None
            if details and alphas is not None:
                attention = alphas[b, :units, :len(src_ids[i]) + 1].float().cpu().numpy()  # (units, S)
            scores[i] = Score(total, units, unknown, terms, attention)
    return scores


def score_texts(translator, sources: list[str], targets: list[str], batch_size: int, details: bool = False) -> list:
    """``Translator.score``: raw sentence pairs through the translator's codecs and model. Every source
    is read whole (no decode.max_src_len); a blank target scores p(</s> | source). ``details``: each
    score also gives its units, their log-probabilities and (RNNsearch) the attention alpha_ij."""
    from dataclasses import replace

    from rnnsearch.data.vocab import EOS_TOKEN
    from rnnsearch.errors import UsageError
    if len(sources) != len(targets):
        raise UsageError(f"{len(sources)} source sentences for {len(targets)} target sentences")
    src_units = [translator.source_units(s) for s in sources]
    tgt_units = [translator.tgt_codec.units(t) if t.strip() else [] for t in targets]
    src = [translator.src_codec.vocab.encode(u) for u in src_units]
    tgt = [translator.tgt_codec.vocab.encode(u) for u in tgt_units]
    scores = score_ids(translator.model, src, tgt, translator.device, batch_size, details)
    if not details:
        return scores
    return [replace(s, tokens=tuple(t), source_tokens=(*u, EOS_TOKEN)) for s, t, u in zip(scores, tgt_units, src_units)]
