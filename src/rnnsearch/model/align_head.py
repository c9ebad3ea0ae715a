"""An alignment head: a small attention layer, trained on word links over a frozen RNNsearch,
that reads where each target word came from once the word is known.

alpha_i is the model's guess at the source of y_i made from s_{i-1}, before y_i is chosen; it
translates well but aligns loosely (AER 0.35 on WPT 2003 at best). The head asks the question an
aligner asks, with y_i in hand, from the frozen model's own states (in the spirit of Garg et al.
2019's supervised alignment head and Chen et al. 2020's Shift-AET, both on a Transformer):

    e_ij = v^T tanh(W q_i + U h_j) + w log alpha_ij,   q_i = [s_{i-1}; c_i; E y_i; E y_{i+1}]
    beta_ij = softmax_j(e_ij)

over the real source positions (</s> included), trained with the cross-entropy against the links'
distribution (training/align_head.py). The translation's weights are untouched: the model
translates exactly as before, and the head is stored beside it in the checkpoint (``align_head``).

A head with ``context`` g > 0 first reads the whole target side: q_i becomes [q_i; g_i], g_i the
states (2g) of a bidirectional GRU over q_1 .. q_T, so each word's query also knows the words after
y_{i+1} and the contexts c the words around it read, as the annotations h_j know the whole source.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnsearch.checkpoint import CheckpointError
from rnnsearch.data.vocab import PAD


class AlignmentHead(nn.Module):
    """beta_ij from the query features q_i (B, T, Q), the annotations h_j (B, S, C) and alpha_ij;
    ``context``: the size of each direction of the GRU over the queries (0: none)."""

    def __init__(self, query_size: int, key_size: int, att_size: int, context: int = 0):
        super().__init__()
        self.context = nn.GRU(query_size, context, batch_first=True, bidirectional=True) if context else None
        self.W = nn.Linear(query_size + 2 * context, att_size)
        self.U = nn.Linear(key_size, att_size, bias=False)
        self.v = nn.Linear(att_size, 1, bias=False)
        self.w = nn.Parameter(torch.ones(()))  # the weight of log alpha_ij, the model's own guess

    @property
    def dims(self) -> dict:
        context = self.context.hidden_size if self.context is not None else 0
        return {"query": self.W.in_features - 2 * context, "key": self.U.in_features, "att": self.W.out_features,
                "context": context}

    def forward(self, query: torch.Tensor, annotations: torch.Tensor, alphas: torch.Tensor,
                mask: torch.Tensor, tgt_mask: torch.Tensor) -> torch.Tensor:
        """-> log beta_ij (B, T, S): each row a distribution over the real source positions
        (mask (B, S), True = real), -inf on padding; tgt_mask (B, T), True = a real target position."""
        if self.context is not None:
            lengths = tgt_mask.sum(1).cpu()  # (B,)
            packed = nn.utils.rnn.pack_padded_sequence(query, lengths, batch_first=True, enforce_sorted=False)
            states, _ = self.context(packed)
            states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True, total_length=query.size(1))  # (B, T, 2g)
            query = torch.cat([query, states], -1)  # (B, T, Q + 2g)
        hidden = torch.tanh(self.W(query).unsqueeze(2) + self.U(annotations).unsqueeze(1))  # (B, T, S, A)
        energies = self.v(hidden).squeeze(-1) + self.w * torch.log(alphas.clamp_min(1e-9))  # (B, T, S)
        return torch.log_softmax(energies.masked_fill(~mask.unsqueeze(1), float("-inf")), dim=-1)  # (B, T, S)


def query_size(model) -> int:
    """Q, the size of q_i = [s_{i-1}; c_i; E y_i; E y_{i+1}] for ``model``'s dimensions."""
    d = model.decoder
    return d.U_o.in_features + d.C_o.in_features + 2 * d.embed.embedding_dim


def head_inputs(model, src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor,
                tgt_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Teacher forcing through the (frozen) model, without gradients -> q_i (B, T, Q), the
    annotations h_j (B, S, C) and alpha_ij (B, T, S), in float32. tgt_in (B, T) = (<s>, y_1, ..),
    tgt_out (B, T) = (y_1, .., </s>); y_{i+1} after </s> is padding (a zero embedding)."""
    if getattr(model, "arch", "rnnsearch") != "rnnsearch":
        raise ValueError("an alignment head needs attention (arch: rnnsearch)")
    with torch.no_grad():
        enc = model.encode(src, src_mask)
        _, alphas, s_prev = model.decoder.features(tgt_in, enc, with_queries=True)  # (B, T, S), (B, T, D)
        alphas, annotations = alphas.float(), enc.annotations.float()
        contexts = torch.bmm(alphas, annotations)  # c_i (B, T, C)
        following = torch.cat([tgt_out[:, 1:], torch.full_like(tgt_out[:, :1], PAD)], dim=1)  # y_{i+1} (B, T)
        embed = model.decoder.embed
        query = torch.cat([s_prev.float(), contexts, embed(tgt_out).float(), embed(following).float()], -1)  # (B, T, Q)
    return query, annotations, alphas


def head_alignment(model, head: AlignmentHead, src: torch.Tensor, src_mask: torch.Tensor, tgt_in: torch.Tensor,
                   tgt_out: torch.Tensor) -> torch.Tensor:
    """beta_ij (B, T, S) for teacher-forced pairs: each target word's alignment by the head."""
    with torch.no_grad():
        return head(*head_inputs(model, src, src_mask, tgt_in, tgt_out), src_mask, tgt_out != PAD).exp()  # (B, T, S)


def head_state(head: AlignmentHead, record: dict) -> dict:
    """What a checkpoint stores under ``align_head``: the weights, the sizes, and how it was trained."""
    return {"dims": head.dims, "state": {k: v.detach().cpu() for k, v in head.state_dict().items()},
            "record": record}


def load_head(entry: dict, path="the checkpoint") -> AlignmentHead:
    """The head of a checkpoint's ``align_head`` entry (``head_state``), or a clear error naming ``path``."""
    try:
        dims = entry["dims"]
        head = AlignmentHead(int(dims["query"]), int(dims["key"]), int(dims["att"]), int(dims.get("context", 0)))
        head.load_state_dict(entry["state"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path}: its align_head entry is not an alignment head: {reason}") from None
    return head.eval()
