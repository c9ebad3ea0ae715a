"""The paper's decoder: a GRU conditioned on the context, and a maxout deep output.

s_i = f(s_{i-1}, y_{i-1}, c_i):
  z_i = sigmoid(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i)
  r_i = sigmoid(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i)
  s~_i = tanh(W E y_{i-1} + U (r_i * s_{i-1}) + C c_i)
  s_i = (1 - z_i) * s_{i-1} + z_i * s~_i
t~_i = U_o s + V_o E y_{i-1} + C_o c_i (2M), t_i = maxout pairs (M), p = softmax(W_o t_i),
with s = s_i (main text, default) or s_{i-1} (appendix, ``readout_state='previous'``).
For RNNsearch c_i comes from :class:`AdditiveAttention`; for RNNencdec c_i = c for all i.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..vocab import PAD
from .attention import AdditiveAttention


@dataclass
class EncoderOutput:
    """What the decoder reads from the source, one row per sentence (or per beam)."""
    annotations: torch.Tensor        # h_j (B, S, C); for RNNencdec (B, S, H), unused by the decoder
    mask: torch.Tensor               # (B, S) bool, True = real token
    proj_keys: torch.Tensor | None   # U_a h_j (B, S, A), RNNsearch only
    context: torch.Tensor | None     # fixed c (B, C), RNNencdec only
    init_source: torch.Tensor        # backward h_1 (RNNsearch) or c (RNNencdec), (B, H)
    context_gates: torch.Tensor | None = None  # [C_z; C_r; C] c (B, 3D), RNNencdec only

    def select(self, rows: torch.Tensor) -> "EncoderOutput":
        pick = lambda t: None if t is None else t.index_select(0, rows)  # noqa: E731
        return EncoderOutput(pick(self.annotations), pick(self.mask), pick(self.proj_keys),
                             pick(self.context), pick(self.init_source), pick(self.context_gates))


@dataclass
class DecoderState:
    """The decoder's recurrent state s_{i-1} (B, D)."""
    hidden: torch.Tensor

    def select(self, rows: torch.Tensor) -> "DecoderState":
        """Reorder/duplicate rows, e.g. for beam search: rows (N,) -> state with N rows."""
        return DecoderState(self.hidden.index_select(0, rows))


class Decoder(nn.Module):
    def __init__(self, vocab_size: int, emb: int, hidden: int, context: int, att: int | None,
                 maxout: int, init_size: int, readout_state: str, dropout: float):
        super().__init__()
        self.hidden = hidden
        self.maxout = maxout
        self.readout_previous = readout_state == "previous"
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        self.W_s = nn.Linear(init_size, hidden)                 # s_0 = tanh(W_s h_1^backward) or tanh(V' c)
        self.W = nn.Linear(emb, 3 * hidden)                     # [W_z; W_r; W] E y_{i-1} + biases
        self.U_zr = nn.Linear(hidden, 2 * hidden, bias=False)   # [U_z; U_r]
        self.U = nn.Linear(hidden, hidden, bias=False)
        self.C = nn.Linear(context, 3 * hidden, bias=False)     # [C_z; C_r; C]
        self.attention = AdditiveAttention(hidden, context, att) if att else None
        self.U_o = nn.Linear(hidden, 2 * maxout)                # with the readout bias
        self.V_o = nn.Linear(emb, 2 * maxout, bias=False)
        self.C_o = nn.Linear(context, 2 * maxout, bias=False)
        self.W_o = nn.Linear(maxout, vocab_size)

    def prepare(self, enc: EncoderOutput) -> EncoderOutput:
        """Everything that does not depend on i, once per sentence: U_a h_j for RNNsearch,
        [C_z; C_r; C] c for RNNencdec."""
        if self.attention is None:
            return EncoderOutput(enc.annotations, enc.mask, None, enc.context, enc.init_source,
                                 self.C(enc.context))  # (B, 3D)
        return EncoderOutput(enc.annotations, enc.mask, self.attention.proj_keys(enc.annotations),
                             enc.context, enc.init_source)

    def init_state(self, enc: EncoderOutput) -> DecoderState:
        return DecoderState(torch.tanh(self.W_s(enc.init_source)))  # (B, D)

    def _context(self, s_prev: torch.Tensor, enc: EncoderOutput):
        """c_i (B, C), its gate inputs [C_z; C_r; C] c_i (B, 3D) and alpha_i (B, S) or None."""
        if self.attention is None:
            return enc.context, enc.context_gates, None
        c, alpha = self.attention(s_prev, enc.proj_keys, enc.annotations, enc.mask)  # (B, C), (B, S)
        return c, self.C(c), alpha

    def _recur(self, x_i: torch.Tensor, s_prev: torch.Tensor, cc: torch.Tensor) -> torch.Tensor:
        """One GRU update: x_i = W E y_{i-1} + b (B, 3D) precomputed, s_prev (B, D), cc = C c_i (B, 3D)."""
        d = self.hidden
        z, r = torch.sigmoid(x_i[:, : 2 * d] + self.U_zr(s_prev) + cc[:, : 2 * d]).chunk(2, dim=1)  # (B, D)
        s_tilde = torch.tanh(x_i[:, 2 * d:] + self.U(r * s_prev) + cc[:, 2 * d:])  # (B, D)
        return (1 - z) * s_prev + z * s_tilde  # (B, D)

    def _features(self, s: torch.Tensor, emb: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Maxout deep output t_i (with dropout); works on (B, ., X) or (B, X) inputs."""
        t_tilde = self.U_o(s) + self.V_o(emb) + self.C_o(c)  # (..., 2M)
        t = t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1)  # (..., M): max(t~_{2k-1}, t~_{2k})
        return self.dropout(t)  # (..., M)

    def _readout(self, s: torch.Tensor, emb: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Maxout deep output -> logits W_o t_i + b_o (..., V)."""
        return self.W_o(self._features(s, emb, c))  # (..., V)

    def step(self, y_prev: torch.Tensor, state: DecoderState, enc: EncoderOutput):
        """One decoding step: y_{i-1} (B,) -> logits (B, V), new state, alpha_i (B, S) or None."""
        emb = self.dropout(self.embed(y_prev))  # (B, E)
        s_prev = state.hidden
        c, cc, alpha = self._context(s_prev, enc)
        s = self._recur(self.W(emb), s_prev, cc)  # (B, D)
        logits = self._readout(s_prev if self.readout_previous else s, emb, c)  # (B, V)
        return logits, DecoderState(s), alpha

    def forward(self, y_in: torch.Tensor, enc: EncoderOutput):
        """Teacher forcing over y_in = (<s>, y_1..y_{T-1}) (B, T) -> logits (B, T, V), alphas (B, T, S) or None."""
        t, alphas = self.features(y_in, enc)  # (B, T, M)
        return self.W_o(t), alphas  # (B, T, V)

    def features(self, y_in: torch.Tensor, enc: EncoderOutput):
        """Teacher forcing -> the maxout outputs t_i (B, T, M) of every step, alphas (B, T, S) or None.

        Computes what :meth:`step` computes, arranged for speed: everything that does not depend
        on s_{i-1} is done for all steps at once outside the loop (W E y, the readout, W_o), and
        W_a s_{i-1} and [U_z; U_r] s_{i-1} are one product per step."""
        emb = self.dropout(self.embed(y_in))  # (B, T, E)
        inputs = self.W(emb).unbind(1)  # T x (B, 3D): the embedding side of every step at once
        s = self.init_state(enc).hidden  # (B, D)
        states, contexts, alphas = [], [], []
        d, a = self.hidden, None if self.attention is None else self.attention.W_a.out_features
        if a is not None:
            w_query = torch.cat([self.attention.W_a.weight, self.U_zr.weight])  # (A + 2D, D)
        for x_i in inputs:
            if a is None:  # RNNencdec: c_i = c
                u_zr, cc = self.U_zr(s), enc.context_gates  # (B, 2D), (B, 3D)
            else:
                wa_s, u_zr = nn.functional.linear(s, w_query).split([a, 2 * d], dim=1)  # (B, A), (B, 2D)
                c, alpha = self.attention.attend(wa_s, enc.proj_keys, enc.annotations, enc.mask)  # (B, C), (B, S)
                cc = self.C(c)  # (B, 3D)
                contexts.append(c)
                alphas.append(alpha)
            if self.readout_previous:
                states.append(s)
            gates_zr, gates_h = (x_i + cc).split([2 * d, d], dim=1)  # (B, 2D), (B, D)
            z, r = torch.sigmoid(gates_zr + u_zr).chunk(2, dim=1)  # (B, D) each
            s_tilde = torch.tanh(gates_h + self.U(r * s))  # (B, D)
            s = torch.lerp(s, s_tilde, z)  # (1 - z) * s + z * s~  (B, D)
            if not self.readout_previous:
                states.append(s)
        s_all = torch.stack(states, dim=1)  # (B, T, D)
        if self.attention is None:  # RNNencdec: the same c at every step, projected once
            return self._features(s_all, emb, enc.context.unsqueeze(1)), None  # (B, T, M)
        c_all = torch.stack(contexts, dim=1)  # (B, T, C)
        t = self._features(s_all, emb, c_all)  # (B, T, M), all steps at once
        return t, torch.stack(alphas, dim=1)  # (B, T, M), (B, T, S)
