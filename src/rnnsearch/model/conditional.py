"""The conditional GRU decoder (``model.decoder_cell: conditional``): Nematus' and Marian's s2s
decoder (Sennrich et al. 2017), where the attention's query is an intermediate state that has read
y_{i-1}, not s_{i-1}:

  s'_i = GRU_1(s_{i-1}, E y_{i-1})      W (with its bias), [U_z; U_r] and U, as the paper's decoder
  c_i  = sum_j alpha_ij h_j,  alpha_i from e_ij = v_a^T tanh(W_a s'_i + U_a h_j)
  s_i  = GRU_2(s'_i, c_i)               C c_i + bias2 its input, [U2_z; U2_r] and U2 its recurrence
  t~_i = U_o s_i + V_o E y_{i-1} + C_o c_i, then the paper's maxout (or ``model.readout``) and softmax.

Not in the paper (its decoder: ``model/decoder.py``); one of #87's candidates for learning more per
update. Teacher forcing runs the loop of :meth:`Decoder.features` without deferring the weight
gradients (``train.deferred`` does not apply), and the alignment head and the alignment posterior,
which read s_{i-1} as the query, refuse it.
"""
from __future__ import annotations

import dataclasses

import torch
from torch import nn

from rnnsearch.errors import UsageError
from rnnsearch.model.decoder import Decoder, EncoderOutput, StepWeights
from rnnsearch.model.encoder import gru_gates, gru_update
from rnnsearch.model.packed import linear

QUERIES = ("the alignment head and the alignment posterior read s_{i-1} as the attention's query: "
           "a model with model.decoder_cell=conditional has none")


class ConditionalDecoder(Decoder):
    def __init__(self, vocab_size: int, emb: int, hidden: int, context: int, att: int | None,
                 maxout: int, init_size: int, readout_state: str, dropout: float, deferred: bool = True,
                 readout: str = "maxout"):
        if att is None or readout_state != "current":
            raise UsageError("model.decoder_cell=conditional needs attention (arch: rnnsearch) and "
                             "model.readout_state=current")
        super().__init__(vocab_size, emb, hidden, context, att, maxout, init_size, readout_state, dropout, False,
                         readout)
        self.U2_zr = nn.Linear(hidden, 2 * hidden, bias=False)  # [U2_z; U2_r]
        self.U2 = nn.Linear(hidden, hidden, bias=False)
        self.bias2 = nn.Parameter(torch.zeros(3 * hidden))     # GRU_2's biases (C has none)

    def step_weights(self, full: bool = True) -> StepWeights:
        """As the paper's decoder's, but ``query`` is [U_z; U_r] alone: W_a reads s'_i, not s_{i-1}."""
        return dataclasses.replace(super().step_weights(full), query=self.U_zr.weight)

    def _tape(self, enc: EncoderOutput):
        return None  # no deferred weight gradients: the loop is autograd's

    def _cell(self, x_i: torch.Tensor, s_prev: torch.Tensor, enc: EncoderOutput, tape=None,
              workspace: torch.Tensor | None = None, readout: bool = False):
        """One step of the recurrence: s'_i from s_{i-1} and x_i = [W_z; W_r; W] E y_{i-1} + b (B, 3D),
        c_i and alpha_i from s'_i, s_i from s'_i and c_i. Returns as :meth:`Decoder._cell` does:
        s_i (B, D), c_i (B, C) or None, alpha_i (B, S), and C_o c_i (B, 2M) with ``readout``, else None."""
        s_mid = self._gru(x_i, 0.0, linear(s_prev, enc.weights.query), s_prev)  # (B, D)
        projected = readout and enc.context_values is not None
        values = enc.context_values if projected else enc.annotations  # (B, S, 3D + 2M) or (B, S, C)
        c, alpha = self.attention.attend(self.attention.W_a(s_mid), enc.proj_keys, values, enc.mask,
                                         None, workspace)  # (B, C) or (B, 3D + 2M), (B, S)
        cc, c, c_readout = self._context_inputs(c, x_i.dtype, enc, projected, readout)
        return self._second(cc, s_mid), c, alpha, c_readout

    def _second(self, cc: torch.Tensor, s_mid: torch.Tensor) -> torch.Tensor:
        """s_i = GRU_2(s'_i, c_i) from cc = [C_z; C_r; C] c_i (B, 3D) and s'_i (B, D)."""
        gates_zr, gates_h = (cc + self.bias2).split([2 * self.hidden, self.hidden], dim=1)  # (B, 2D), (B, D)
        z, r = gru_gates(gates_zr, self.U2_zr(s_mid))  # (B, D) each
        return gru_update(s_mid, gates_h, self.U2(r * s_mid), z)  # (B, D)

    def features(self, y_in: torch.Tensor, enc: EncoderOutput, with_queries: bool = False):
        if with_queries:
            raise UsageError(QUERIES)
        return super().features(y_in, enc)

    def logprob_given_annotations(self, *args, **kwargs):
        raise UsageError(QUERIES)
