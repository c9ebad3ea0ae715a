"""Source encoders: the paper's bidirectional GRU (RNNsearch) and a unidirectional one (RNNencdec)."""
from __future__ import annotations

import functools

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnnsearch.data.vocab import PAD
from rnnsearch.model.deferred import DeferredWeights


class PaperGRU(nn.Module):
    """One direction of the GRU exactly as the paper writes it (Cho et al. 2014a):

    z_j = sigmoid(W_z x_j + U_z h_{j-1}), r_j = sigmoid(W_r x_j + U_r h_{j-1}),
    h~_j = tanh(W x_j + U (r_j * h_{j-1})), h_j = (1 - z_j) * h_{j-1} + z_j * h~_j.

    Padding positions (mask False) carry the state through unchanged, so the
    backward direction starts from zeros at each sentence's last real word.
    """

    def __init__(self, input_size: int, hidden: int, deferred: bool = True):
        super().__init__()
        self.hidden = hidden
        self.deferred = deferred  # training defers U_zr's and U's gradients (model/deferred.py)
        self.W = nn.Linear(input_size, 3 * hidden)          # [W_z; W_r; W] with biases
        self.U_zr = nn.Linear(hidden, 2 * hidden, bias=False)  # [U_z; U_r]
        self.U = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, reverse: bool = False) -> torch.Tensor:
        """x (B, S, E), mask (B, S) -> states (B, S, H); zeros where mask is False."""
        batch, length, _ = x.shape
        hidden = self.hidden
        inputs = self.W(x).unbind(1)  # S x (B, 3H), every step at once
        keep = mask.unsqueeze(2).unbind(1)  # S x (B, 1)
        h = inputs[0].new_zeros(batch, hidden)  # (B, H), in the products' dtype (also under autocast)
        tape = None
        if torch.is_grad_enabled() and self.deferred:  # U_zr's and U's gradients: one product each
            tape = DeferredWeights(U_zr=self.U_zr.weight, U=self.U.weight)
            h = tape.start(h)
        outputs = [None] * length
        for j in (range(length - 1, -1, -1) if reverse else range(length)):
            x_zr, x_h = inputs[j].split([2 * hidden, hidden], dim=1)  # (B, 2H), (B, H)
            z, r = gru_gates(x_zr, self.U_zr(h) if tape is None else tape.linear("U_zr", h))  # (B, H) each
            h = gru_update(h, x_h, self.U(r * h) if tape is None else tape.linear("U", r * h), z, keep[j])  # (B, H)
            outputs[j] = h * keep[j]
        return torch.stack(outputs, dim=1)  # (B, S, H)

    def scan(self, x: torch.Tensor, mask: torch.Tensor, reverse: bool = False) -> torch.Tensor:
        """:meth:`forward` (decoding) as a TorchScript loop over any source length, for the ONNX export
        (decoding/export.py), which would unroll :meth:`forward`'s loop to the traced length."""
        inputs = self.W(x).transpose(0, 1)  # (S, B, 3H)
        keep = mask.t().unsqueeze(2).to(x.dtype)  # (S, B, 1)
        return _scripted_scan()(inputs, keep, self.U_zr.weight.t(), self.U.weight.t(), reverse).transpose(0, 1)  # (B, S, H)


def gru_gates(x_zr: torch.Tensor, u_zr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """z, r = sigmoid([W_z; W_r] x + [U_z; U_r] h) (B, H) each, from the two products (B, 2H)."""
    z, r = torch.sigmoid(x_zr + u_zr).chunk(2, dim=1)
    return z, r


def gru_update(h: torch.Tensor, x_h: torch.Tensor, u_reset: torch.Tensor, z: torch.Tensor,
               keep: torch.Tensor | None = None) -> torch.Tensor:
    """h' = (1 - z) h + z tanh(W x + U (r h)) from W x (B, H) and U (r h) (B, H); with ``keep`` (B, 1),
    only where it is true, h where it is false (padding carries the state). The decoder's s_i too."""
    new = torch.lerp(h, torch.tanh(x_h + u_reset), z)  # (1 - z) h + z h~  (B, H)
    return new if keep is None else torch.where(keep, new, h)


@functools.cache
def _scripted_scan():
    """:func:`_scan` compiled by TorchScript, once, when first traced (only the ONNX export needs it)."""
    return torch.jit.script(_scan)


def _scan(inputs: torch.Tensor, keep: torch.Tensor, u_zr_t: torch.Tensor, u_t: torch.Tensor,
          reverse: bool) -> torch.Tensor:
    """:meth:`PaperGRU.forward` without training's tape, time-major: inputs W x (S, B, 3H), keep (S, B, 1),
    [U_z; U_r]^T and U^T -> states (S, B, H), zeros on padding."""
    hidden = u_t.size(0)
    h = torch.zeros_like(inputs[0, :, :hidden])  # (B, H)
    outputs: list[torch.Tensor] = []
    length = inputs.size(0)
    for k in range(length):
        j = length - 1 - k if reverse else k
        x = inputs[j]  # (B, 3H)
        z, r = gru_gates(x[:, : 2 * hidden], torch.mm(h, u_zr_t))
        h = gru_update(h, x[:, 2 * hidden:], torch.mm(r * h, u_t), z, keep[j] > 0)
        outputs.append(h * keep[j])
    states = torch.stack(outputs)  # (S, B, H), in the order computed
    return states.flip(0) if reverse else states


class Encoder(nn.Module):
    """Embeds the source and runs a (bi)directional GRU.

    Returns annotations (B, S, dirs*H), the forward state at the last real word
    h_Tx (B, H) and the backward state at the first word (B, H) (zeros if unidirectional).
    ``cell='paper'`` is the paper's GRU; ``cell='fused'`` is torch.nn.GRU, whose
    candidate state applies the reset gate after the recurrent product, r * (U h):
    faster, a documented deviation. Training on a CPU computes the fused cell with
    :meth:`fused_loop` (the same equations and weights), elsewhere torch.nn.GRU runs it.
    """

    def __init__(self, vocab_size: int, emb: int, hidden: int, bidirectional: bool,
                 cell: str, dropout: float, deferred: bool = True):
        super().__init__()
        self.hidden = hidden
        self.bidirectional = bidirectional
        self.cell = cell
        self.deferred = deferred  # training runs the fused cell as a loop with deferred U (fused_loop)
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        if cell == "paper":
            self.fwd = PaperGRU(emb, hidden, deferred)
            self.bwd = PaperGRU(emb, hidden, deferred) if bidirectional else None
        else:
            self.rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=bidirectional)

    def forward(self, src: torch.Tensor, mask: torch.Tensor):
        x = self.dropout(self.embed(src))  # (B, S, E)
        last = (mask.sum(1) - 1).clamp(min=0)  # (B,)
        rows = torch.arange(src.size(0), device=src.device)
        if self.cell == "paper":
            gru = PaperGRU.scan if torch.jit.is_tracing() else PaperGRU.__call__  # traced: a loop (ONNX export)
            fwd = gru(self.fwd, x, mask)  # (B, S, H)
            bwd = gru(self.bwd, x, mask, reverse=True) if self.bidirectional else None  # (B, S, H)
        elif torch.is_grad_enabled() and self.deferred and x.device.type == "cpu" and not torch.jit.is_tracing():
            fwd, bwd = self.fused_loop(x, mask)  # training on a CPU
        else:
            fwd, bwd = self.fused_packed(x, mask)
        annotations = fwd if bwd is None else torch.cat([fwd, bwd], dim=2)  # (B, S, dirs*H)
        final_forward = fwd[rows, last]  # (B, H)
        first_backward = bwd[:, 0] if bwd is not None else torch.zeros_like(final_forward)  # (B, H)
        return annotations, final_forward, first_backward

    def fused_packed(self, x: torch.Tensor, mask: torch.Tensor):
        """torch.nn.GRU on packed sequences: x (B, S, E) -> forward, backward states (B, S, H) or None."""
        packed = pack_padded_sequence(x, mask.sum(1).cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))  # (B, S, dirs*H)
        return out[:, :, : self.hidden], (out[:, :, self.hidden:] if self.bidirectional else None)  # (B, S, H)

    def fused_loop(self, x: torch.Tensor, mask: torch.Tensor):
        """:meth:`fused_packed`'s mathematics (torch.nn.GRU's cell, its own weights) for training: a loop
        over the positions whose products U h_{j-1} take only the sentences still running there (rows
        sorted by length, so these are a prefix) and whose U gradient is one product per pass
        (model/deferred.py). torch.nn.GRU's own backward on packed sequences zero-filled and added a
        whole (sum of lengths, 3H) input gradient at every position, and U's gradient per position.
        x (B, S, E), mask (B, S) -> forward, backward states (B, S, H) or None; zeros on padding."""
        lengths = mask.sum(1)  # (B,)
        order = torch.argsort(lengths, descending=True, stable=True)  # (B,)
        longest = int(lengths.max())
        counts = (lengths[order] > torch.arange(longest, device=x.device)[:, None]).sum(1).tolist()  # rows at each j
        x = x[order, :longest]  # (B, S', E), longest sentence first
        states = [self._fused_direction(x, counts, "", False)]
        if self.bidirectional:
            states.append(self._fused_direction(x, counts, "_reverse", True))
        restore = torch.argsort(order)  # (B,)
        states = [nn.functional.pad(s[restore], (0, 0, 0, mask.size(1) - longest)) for s in states]  # (B, S, H)
        return states[0], (states[1] if self.bidirectional else None)

    def _fused_direction(self, x: torch.Tensor, counts: list[int], suffix: str, reverse: bool) -> torch.Tensor:
        """One direction of torch.nn.GRU: r, z = sigmoid(W_{r,z} x_j + b + U_{r,z} h_{j-1} + b'),
        n = tanh(W_n x_j + b + r * (U_n h_{j-1} + b')), h_j = (1 - z) n + z h_{j-1}; over the first
        counts[j] rows of x (B, S, E) at position j -> (B, S, H), zeros on padding."""
        rnn, hidden, batch = self.rnn, self.hidden, x.size(0)
        u, u_bias = getattr(rnn, "weight_hh_l0" + suffix), getattr(rnn, "bias_hh_l0" + suffix)
        inputs = nn.functional.linear(x, getattr(rnn, "weight_ih_l0" + suffix),
                                      getattr(rnn, "bias_ih_l0" + suffix)).unbind(1)  # S x (B, 3H)
        tape = DeferredWeights(U=u)
        zeros = x.new_zeros(batch, hidden, dtype=u_bias.dtype)  # (B, H); the state in float32 under autocast
        h = tape.start(zeros)  # (B, H): h_0, then the running rows' states
        outputs = [None] * len(inputs)
        for j in (range(len(inputs) - 1, -1, -1) if reverse else range(len(inputs))):
            rows = counts[j]
            h = h[:rows] if rows <= len(h) else torch.cat([h, zeros[: rows - len(h)]])  # (n, H): those that run
            recurrent = tape.linear("U", h) + u_bias  # (n, 3H)
            x_j = inputs[j][:rows]  # (n, 3H)
            r, z = torch.sigmoid(x_j[:, : 2 * hidden] + recurrent[:, : 2 * hidden]).chunk(2, dim=1)  # (n, H) each
            candidate = torch.tanh(x_j[:, 2 * hidden:] + r * recurrent[:, 2 * hidden:])  # (n, H)
            h = torch.lerp(candidate, h, z)  # (1 - z) n + z h  (n, H)
            outputs[j] = h if rows == batch else torch.cat([h, zeros[: batch - rows]])  # (B, H)
        return torch.stack(outputs, dim=1)  # (B, S, H)
