"""The output layer over candidate target words only, for decoding with a lexical shortlist
(decoding/shortlist.py chooses the words; Jean et al. 2015's candidate lists, Marian's --shortlist).

p(y_i | ...) = softmax(W_o t_i + b_o) over each sentence's own candidates: the rows of W_o and b_o
of the batch's candidates are taken once per batch, and each sentence's softmax is masked to its
own (so that a sentence's output does not depend on the sentences it is batched with). The step's
log-probabilities are then over the batch's candidates (V' columns, in vocabulary order), which the
search reads as its vocabulary (decoding/shortlist.py numbers the words so).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from rnnsearch.model.packed import Int8Linear, PackedLinear


@dataclass
class Shortlist:
    """W_o and b_o restricted to some rows (the batch's candidate words), shared by the batch;
    ``off`` says which of them each sentence may not write (one row per sentence, like the
    encoder's output). ``product``: t -> W_o t + b over those rows (float32, or an int8 product)."""
    product: Callable[[torch.Tensor], torch.Tensor]
    off: torch.Tensor  # (B, V') float32: -inf at the words not on that sentence's list, else 0

    def select(self, rows: torch.Tensor) -> Shortlist:
        """Rows (N,) of ``off`` (EncoderOutput.select: sentences leaving the batch)."""
        return dataclasses.replace(self, off=self.off.index_select(0, rows))

    def logits(self, t: torch.Tensor) -> torch.Tensor:
        """t_i (N, M), K = N / B rows per sentence, each sentence's together -> W_o t_i + b_o (N, V'),
        -inf at the words off its sentence's list (added: 0.14 ms a step where masked_fill_ took 1.8,
        beam 5, 32 sentences, 7,770 words)."""
        out = self.product(t)  # (N, V')
        out.view(self.off.size(0), -1, out.size(1)).add_(self.off[:, None])  # (B, K, V')
        return out


def _off(allowed: torch.Tensor, device) -> torch.Tensor:
    """(B, V') bool, True = a candidate -> (B, V') float32, 0 there and -inf elsewhere."""
    return torch.zeros(allowed.shape, device=device).masked_fill_(~allowed.to(device), float("-inf"))


def output_shortlist(output: nn.Module, ids: torch.Tensor, allowed: torch.Tensor) -> Shortlist:
    """The output layer W_o (``output``) over the vocabulary ids ``ids`` (V',), ``allowed`` (B, V'):
    its float weights' rows, or, under ``--quantize int8`` (model/packed.py's Int8Linear), its int8
    rows and their scales in the same int8 product (so that a list of every word gives the int8
    model's own logits); not bf16 weights packed for oneDNN. Float32 rows of a W_o packed for
    oneDNN (packed.float32_view) are packed again, once per batch."""
    if isinstance(output, nn.Linear) or isinstance(output, PackedLinear) and output.weight is not None:
        ids = ids.to(output.weight.device)
        weight, bias = output.weight.index_select(0, ids), output.bias.index_select(0, ids)  # (V', M), (V',)
        if isinstance(output, PackedLinear):
            return Shortlist(PackedLinear(weight, bias, torch.float32), _off(allowed, weight.device))
        return Shortlist(lambda t: F.linear(t, weight, bias), _off(allowed, weight.device))
    if isinstance(output, Int8Linear):
        return Shortlist(output.rows(ids.cpu()), _off(allowed, "cpu"))
    raise ValueError(f"a shortlist reads rows of W_o, which this decoder holds as {type(output).__name__}")
