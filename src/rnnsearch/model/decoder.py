"""The paper's decoder: a GRU conditioned on the context, and a maxout deep output.

s_i = f(s_{i-1}, y_{i-1}, c_i):
  z_i = sigmoid(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i)
  r_i = sigmoid(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i)
  s~_i = tanh(W E y_{i-1} + U (r_i * s_{i-1}) + C c_i)
  s_i = (1 - z_i) * s_{i-1} + z_i * s~_i
t~_i = U_o s + V_o E y_{i-1} + C_o c_i (2M), t_i = maxout pairs (M), p = softmax(W_o t_i),
with s = s_i (main text, default) or s_{i-1} (appendix, ``readout_state='previous'``); or, not the
paper's (``readout='tanh'``, Nematus and Marian), t_i = tanh(t~_i) with t~_i of size M.
For RNNsearch c_i comes from :class:`AdditiveAttention`; for RNNencdec c_i = c for all i.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from rnnsearch.data.vocab import PAD
from rnnsearch.model.attention import AdditiveAttention
from rnnsearch.model.deferred import DeferredWeights
from rnnsearch.model.encoder import gru_gates, gru_update
from rnnsearch.model.output import chunk_rows
from rnnsearch.model.packed import Int8Linear, PackedLinear, linear
from rnnsearch.model.shortlist import Shortlist


@dataclass
class StepWeights:
    """Weight matrices stacked so that each decoding step needs one product per input: rows of
    ``query`` are [W_a; U_z; U_r] (RNNsearch) or [U_z; U_r] (RNNencdec), of ``context``
    [C_z; C_r; C; C_o], of ``embed`` [W_z; W_r; W; V_o] (bias: the GRU's, then zeros)."""
    query: torch.Tensor | PackedLinear | Int8Linear  # (A + 2D, D) or (2D, D)
    context: torch.Tensor | PackedLinear | Int8Linear | None  # (3D + 2M, C); None: not stacked (training)
    embed: torch.Tensor | PackedLinear | Int8Linear | None    # (3D + 2M, E)
    embed_bias: torch.Tensor | None  # (3D + 2M,); None when ``embed`` is packed (with its bias)


@dataclass
class EncoderOutput:
    """What the decoder reads from the source, one row per sentence. The decoder's state may have
    K rows per sentence (a beam's hypotheses, each sentence's K rows together): :meth:`Decoder.step`
    then reads each sentence's row for its K hypotheses."""
    annotations: torch.Tensor        # h_j (B, S, C); for RNNencdec (B, S, H), unused by the decoder
    mask: torch.Tensor               # (B, S) bool, True = real token
    proj_keys: torch.Tensor | None   # U_a h_j (B, S, A), RNNsearch only
    context: torch.Tensor | None     # fixed c (B, C), RNNencdec only
    init_source: torch.Tensor        # backward h_1 (RNNsearch) or c (RNNencdec), (B, H)
    context_gates: torch.Tensor | None = None    # [C_z; C_r; C] c (B, 3D), RNNencdec only
    context_readout: torch.Tensor | None = None  # C_o c (B, 2M), RNNencdec only
    weights: StepWeights | None = None           # shared by all rows
    context_values: torch.Tensor | None = None   # [C_z; C_r; C; C_o] h_j (B, S, 3D + 2M), RNNsearch decoding
    shortlist: Shortlist | None = None           # decoding over candidate words only (None: all V)

    def select(self, rows: torch.Tensor) -> EncoderOutput:
        """Rows (N,) of every per-row tensor; the shared weights stay (beam search reorders with this)."""
        return dataclasses.replace(self, **{f.name: getattr(self, f.name).index_select(0, rows)
                                            for f in dataclasses.fields(self)
                                            if isinstance(getattr(self, f.name), torch.Tensor)},
                                   shortlist=None if self.shortlist is None else self.shortlist.select(rows))


def per_row(x: torch.Tensor | None, rows: int) -> torch.Tensor | None:
    """A per-sentence tensor (B, ...) for ``rows`` decoder rows, K = rows / B per sentence, each
    sentence's together (beam search keeps the encoder's output once per sentence)."""
    if x is None or x.size(0) == rows:  # size(0), not len(): a traced dimension (decoding/export.py)
        return x
    return x.repeat_interleave(rows // x.size(0), dim=0)  # (B*K, ...)


@dataclass
class DecoderState:
    """The decoder's recurrent state s_{i-1} (B, D)."""
    hidden: torch.Tensor

    def select(self, rows: torch.Tensor) -> DecoderState:
        """Reorder/duplicate rows, e.g. for beam search: rows (N,) -> state with N rows."""
        return DecoderState(self.hidden.index_select(0, rows))


class Decoder(nn.Module):
    def __init__(self, vocab_size: int, emb: int, hidden: int, context: int, att: int | None,
                 maxout: int, init_size: int, readout_state: str, dropout: float, deferred: bool = True,
                 readout: str = "maxout"):
        super().__init__()
        self.deferred = deferred  # teacher forcing defers the loop's weight gradients (model/deferred.py)
        self.hidden = hidden
        self.maxout = maxout
        self.tanh_readout = readout == "tanh"
        self.readout_size = maxout if self.tanh_readout else 2 * maxout  # t~_i's size: 2M for the maxout
        self.readout_previous = readout_state == "previous"
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        self.W_s = nn.Linear(init_size, hidden)                 # s_0 = tanh(W_s h_1^backward) or tanh(V' c)
        self.W = nn.Linear(emb, 3 * hidden)                     # [W_z; W_r; W] E y_{i-1} + biases
        self.U_zr = nn.Linear(hidden, 2 * hidden, bias=False)   # [U_z; U_r]
        self.U = nn.Linear(hidden, hidden, bias=False)
        self.C = nn.Linear(context, 3 * hidden, bias=False)     # [C_z; C_r; C]
        self.attention = AdditiveAttention(hidden, context, att) if att else None
        self.U_o = nn.Linear(hidden, self.readout_size)         # with the readout bias
        self.V_o = nn.Linear(emb, self.readout_size, bias=False)
        self.C_o = nn.Linear(context, self.readout_size, bias=False)
        self.W_o = nn.Linear(maxout, vocab_size)
        self.packed_steps: StepWeights | None = None  # decoding: model/packed.py (float32_view, bf16, int8)

    def step_weights(self, full: bool = True) -> StepWeights:
        """The stacked matrices; ``full=False`` stacks only ``query`` (all teacher forcing needs)."""
        query = self.U_zr.weight if self.attention is None else torch.cat([self.attention.W_a.weight,
                                                                            self.U_zr.weight])
        if not full:
            return StepWeights(query, None, None, None)
        return StepWeights(query, self._context_weight(), torch.cat([self.W.weight, self.V_o.weight]),
                           torch.cat([self.W.bias, self.W.bias.new_zeros(self.readout_size)]))

    def _context_weight(self) -> torch.Tensor:
        return torch.cat([self.C.weight, self.C_o.weight])  # (3D + 2M, C)

    def prepare(self, enc: EncoderOutput) -> EncoderOutput:
        """Everything that does not depend on i, once per sentence: U_a h_j for RNNsearch,
        [C_z; C_r; C] c and C_o c for RNNencdec; and the stacked step weights (in training
        mode only those teacher forcing uses; :meth:`step` stacks the rest if it needs them)."""
        if self.packed_steps is not None and self.training:
            raise RuntimeError("a decoder packed for decoding (model/packed.py) cannot train")
        w = self.packed_steps if self.packed_steps is not None else self.step_weights(full=not self.training)
        if self.attention is None:
            gates, readout = F.linear(enc.context, self._context_weight()).split(
                [3 * self.hidden, self.readout_size], 1)  # (B, 3D), (B, 2M)
            return EncoderOutput(enc.annotations, enc.mask, None, enc.context, enc.init_source,
                                 gates, readout, w)
        annotations, keys = enc.annotations, self.attention.proj_keys(enc.annotations)  # (B, S, C), (B, S, A)
        # decoding: [C; C_o] c_i = sum_j alpha_ij [C; C_o] h_j, so the step's largest product (the
        # context's, (K rows per sentence) x C x (3D + 2M)) becomes S x C x (3D + 2M) once per sentence
        # and a weighted sum per step (bench model, beam 5, 128 sentences of 16 tokens: 0.58 ms
        # against 1.91 ms for the bf16 product on this CPU, benchmarks/README.md)
        values = None if self.training else linear(annotations, w.context)  # (B, S, 3D + 2M)
        if self.packed_steps is not None:  # packed products (bf16, int8 or float32), float32 attention
            annotations, keys, values = annotations.float(), keys.float(), values.float()
        return EncoderOutput(annotations, enc.mask, keys, enc.context, enc.init_source, weights=w,
                             context_values=values)

    def init_state(self, enc: EncoderOutput) -> DecoderState:
        return DecoderState(torch.tanh(self.W_s(enc.init_source)))  # (B, D)

    def _query(self, s_prev: torch.Tensor, enc: EncoderOutput, tape: DeferredWeights | None = None,
               workspace: torch.Tensor | None = None, projected: bool = False):
        """[U_z; U_r] s_{i-1} (B, 2D), and c_i (B, C) with alpha_i (B, S) for RNNsearch
        (W_a s_{i-1} is computed in the same product; ``workspace``: see :meth:`AdditiveAttention.attend`).
        ``projected``: [C; C_o] c_i (B, 3D + 2M) instead of c_i, from ``enc.context_values``."""
        product = linear(s_prev, enc.weights.query) if tape is None else tape.linear("query", s_prev)
        if self.attention is None:
            return product, enc.context, None  # (B, 2D)
        wa_s, u_zr = product.split([self.attention.W_a.out_features, 2 * self.hidden], dim=1)  # (B, A), (B, 2D)
        values = enc.context_values if projected else enc.annotations  # (B, S, 3D + 2M) or (B, S, C)
        c, alpha = self.attention.attend(wa_s, enc.proj_keys, values, enc.mask, tape, workspace)  # (B, C), (B, S)
        return u_zr, c, alpha

    def _gru(self, x_i: torch.Tensor, cc: torch.Tensor, u_zr: torch.Tensor, s_prev: torch.Tensor,
             tape: DeferredWeights | None = None) -> torch.Tensor:
        """s_i from x_i = [W_z; W_r; W] E y_{i-1} + b (B, 3D), cc = [C_z; C_r; C] c_i (B, 3D),
        u_zr = [U_z; U_r] s_{i-1} (B, 2D) and s_{i-1} (B, D)."""
        d = self.hidden
        gates_zr, gates_h = (x_i + cc).split([2 * d, d], dim=1)  # (B, 2D), (B, D)
        z, r = gru_gates(gates_zr, u_zr)  # (B, D) each
        reset = r * s_prev  # (B, D)
        return gru_update(s_prev, gates_h, self.U(reset) if tape is None else tape.linear("U", reset), z)  # (B, D)

    def _maxout(self, t_tilde: torch.Tensor) -> torch.Tensor:
        """t_i = max(t~_{2k-1}, t~_{2k}) (..., M), or tanh(t~_i) with ``readout='tanh'``; with dropout."""
        if self.tanh_readout:
            return self.dropout(torch.tanh(t_tilde))  # (..., M)
        return self.dropout(t_tilde.unflatten(-1, (self.maxout, 2)).amax(-1))  # (..., M)

    def _cell(self, x_i: torch.Tensor, s_prev: torch.Tensor, enc: EncoderOutput, tape: DeferredWeights | None = None,
              workspace: torch.Tensor | None = None, readout: bool = False):
        """The recurrence, once for :meth:`step` and :meth:`features`: c_i and alpha_i from s_{i-1},
        then s_i = f(s_{i-1}, y_{i-1}, c_i). With ``readout``, also C_o c_i (B, 2M) (in the same
        product as [C_z; C_r; C] c_i, or, when the encoder's output has ``context_values``, from the
        attention's weighted sum of them); else None. Returns s_i (B, D), c_i (B, C) or None (when
        c_i itself was never formed), alpha_i (B, S) or None, and C_o c_i."""
        projected = readout and enc.context_values is not None
        u_zr, c, alpha = self._query(s_prev, enc, tape, workspace, projected)
        if alpha is None:  # RNNencdec: c_i = c, projected once per sentence
            rows = x_i.size(0)
            cc, c_readout = per_row(enc.context_gates, rows), per_row(enc.context_readout, rows)  # (B, 3D), (B, 2M)
        else:
            cc, c, c_readout = self._context_inputs(c, x_i.dtype, enc, projected, readout, tape)
        return self._gru(x_i, cc, u_zr, s_prev, tape), c, alpha, c_readout

    def _context_inputs(self, c: torch.Tensor, dtype: torch.dtype, enc: EncoderOutput, projected: bool,
                        readout: bool, tape: DeferredWeights | None = None):
        """From the attention's sum (c_i (B, C), or with ``projected`` [C; C_o] c_i (B, 3D + 2M)):
        [C_z; C_r; C] c_i (B, 3D), c_i or None (never formed), and C_o c_i (B, 2M) with ``readout``."""
        if projected:  # the attention summed [C; C_o] h_j: [C; C_o] c_i without c_i; with bf16
            # weights, rounded to bf16 as the product's output was, so the GRU stays in one dtype
            cc, c_readout = c.split([3 * self.hidden, self.readout_size], 1)  # (B, 3D), (B, 2M)
            return cc.to(dtype), None, c_readout.to(dtype)
        if readout:
            cc, c_readout = linear(c, enc.weights.context).split([3 * self.hidden, self.readout_size], 1)
        else:
            cc, c_readout = (self.C(c) if tape is None else tape.linear("C", c)), None  # (B, 3D)
        return cc, c, c_readout

    def step(self, y_prev: torch.Tensor, state: DecoderState, enc: EncoderOutput):
        """One decoding step: y_{i-1} (B,) -> logits (B, V), new state, alpha_i (B, S) or None; with
        ``enc.shortlist``, logits (B, V') over its words."""
        if enc.weights.embed is None:  # prepared in training mode
            enc = dataclasses.replace(enc, weights=self.step_weights())
        w = enc.weights
        emb = self.dropout(self.embed(y_prev))  # (B, E)
        x_i, emb_readout = linear(emb, w.embed, w.embed_bias).split([3 * self.hidden, self.readout_size], 1)
        s, _, alpha, c_readout = self._cell(x_i, state.hidden, enc, readout=True)  # (B, D), (B, S), (B, 2M)
        t_tilde = self.U_o(state.hidden if self.readout_previous else s) + emb_readout + c_readout  # (B, 2M)
        t = self._maxout(t_tilde)  # (B, M)
        logits = self.W_o(t) if enc.shortlist is None else enc.shortlist.logits(t)  # (B, V) or (B, V')
        return logits, DecoderState(s), alpha

    def forward(self, y_in: torch.Tensor, enc: EncoderOutput):
        """Teacher forcing over y_in = (<s>, y_1..y_{T-1}) (B, T) -> logits (B, T, V), alphas (B, T, S) or None."""
        t, alphas = self.features(y_in, enc)  # (B, T, M)
        return self.W_o(t), alphas  # (B, T, V)

    def features(self, y_in: torch.Tensor, enc: EncoderOutput, with_queries: bool = False):
        """Teacher forcing -> the maxout outputs t_i (B, T, M) of every step, alphas (B, T, S) or None;
        ``with_queries``: also the queries s_{i-1} of every step (B, T, D).

        Computes what :meth:`step` computes, arranged for speed: everything that does not depend
        on s_{i-1} is done for all steps at once outside the loop (W E y, the readout, W_o), and
        with gradients on, the loop's products defer their weight gradients (and c_i that of the
        annotations) to one product each for all steps (:class:`DeferredWeights`)."""
        emb = self.dropout(self.embed(y_in))  # (B, T, E)
        inputs = self.W(emb).unbind(1)  # T x (B, 3D): the embedding side of every step at once
        s = self.init_state(enc).hidden  # (B, D)
        tape = self._tape(enc)
        if tape is not None:
            s = tape.start(s)
        workspace = None if self.attention is None else torch.empty_like(enc.proj_keys)  # (B, S, A), all steps
        states, contexts, alphas = [s], [], []
        # reading s_{i-1}, the output never reads s_T: its update is not computed (nor its gradient)
        for x_i in inputs[:-1] if self.readout_previous else inputs:
            s, c, alpha, _ = self._cell(x_i, s, enc, tape, workspace)
            states.append(s)
            contexts.append(c)
            alphas.append(alpha)
        if self.readout_previous and self.attention is not None:  # c_T and alpha_T still come from s_{T-1}
            _, c, alpha = self._query(s, enc, tape, workspace)
            contexts.append(c)
            alphas.append(alpha)
        s_read = torch.stack(states if self.readout_previous else states[1:], dim=1)  # (B, T, D)
        if self.attention is None:  # RNNencdec: C_o c once per sentence
            t_tilde = self.U_o(s_read) + self.V_o(emb) + enc.context_readout.unsqueeze(1)  # (B, T, 2M)
            out = self._maxout(t_tilde), None  # (B, T, M)
        else:
            t_tilde = self.U_o(s_read) + self.V_o(emb) + self.C_o(torch.stack(contexts, dim=1))  # (B, T, 2M)
            out = self._maxout(t_tilde), torch.stack(alphas, dim=1)  # (B, T, M), (B, T, S)
        return (*out, torch.stack(states[:len(inputs)], dim=1)) if with_queries else out  # s_{i-1}: (B, T, D)

    def logprob_given_annotations(self, y_in: torch.Tensor, y_out: torch.Tensor, queries: torch.Tensor,
                                  enc: EncoderOutput) -> torch.Tensor:
        """log p(y_i | s_{i-1}, y_{i-1}, c_i = h_j) for every step i and source position j (B, T, S):
        the output's probability of y_i had the attention put all its weight on h_j. ``queries``:
        the teacher-forced s_{i-1} (B, T, D) of :meth:`features`; y_in (B, T) = (<s>, y_1, ..),
        y_out (B, T) = (y_1, .., </s>). With the readout of s_i, s_i is recomputed for each h_j."""
        emb = self.embed(y_in)  # (B, T, E)
        base = self.V_o(emb)  # (B, T, 2M)
        if self.readout_previous:
            base = base + self.U_o(queries)  # (B, T, 2M)
        else:
            gates = (self.W(emb), F.linear(queries, self.U_zr.weight))  # (B, T, 3D), (B, T, 2D)
        readout, context = self.C_o(enc.annotations), self.C(enc.annotations)  # (B, S, 2M), (B, S, 3D)
        b_size, t_len, s_len = y_in.shape[0], y_in.shape[1], enc.annotations.shape[1]
        out = torch.empty(b_size, t_len, s_len, dtype=torch.float32, device=y_in.device)  # (B, T, S)
        rows = max(1, chunk_rows(self.W_o.out_features) // s_len)  # steps per chunk: ~chunk_rows logit rows
        for b in range(b_size):
            for i in range(0, t_len, rows):
                steps = slice(i, i + rows)
                t_tilde = base[b, steps, None] + readout[b, None]  # (n, S, 2M)
                if not self.readout_previous:
                    n = t_tilde.shape[0]
                    s_prev = queries[b, steps, None].expand(n, s_len, -1).flatten(0, 1)  # (n*S, D)
                    s_i = self._gru(gates[0][b, steps, None].expand(n, s_len, -1).flatten(0, 1),
                                    context[b, None].expand(n, s_len, -1).flatten(0, 1),
                                    gates[1][b, steps, None].expand(n, s_len, -1).flatten(0, 1), s_prev)  # (n*S, D)
                    t_tilde = t_tilde + self.U_o(s_i).unflatten(0, (n, s_len))  # (n, S, 2M)
                logp = torch.log_softmax(self.W_o(self._maxout(t_tilde)).float(), -1)  # (n, S, V)
                target = y_out[b, steps, None, None].expand(-1, s_len, 1)  # (n, S, 1)
                out[b, steps] = logp.gather(-1, target).squeeze(-1)  # (n, S)
        return out

    def _tape(self, enc: EncoderOutput) -> DeferredWeights | None:
        """The deferred products of the teacher-forced loop, when gradients are on and ``deferred``."""
        if not (torch.is_grad_enabled() and self.deferred):
            return None
        if self.attention is None:
            return DeferredWeights(query=enc.weights.query, U=self.U.weight)
        return DeferredWeights(query=enc.weights.query, U=self.U.weight, C=self.C.weight, annotations=enc.annotations)
