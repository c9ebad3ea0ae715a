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
"""
from __future__ import annotations

import torch
from torch import nn

from rnnsearch.checkpoint import CheckpointError
from rnnsearch.data.vocab import PAD


class AlignmentHead(nn.Module):
    """beta_ij from the query features q_i (B, T, Q), the annotations h_j (B, S, C) and alpha_ij."""

    def __init__(self, query_size: int, key_size: int, att_size: int):
        super().__init__()
        self.W = nn.Linear(query_size, att_size)
        self.U = nn.Linear(key_size, att_size, bias=False)
        self.v = nn.Linear(att_size, 1, bias=False)
        self.w = nn.Parameter(torch.ones(()))  # the weight of log alpha_ij, the model's own guess

    @property
    def dims(self) -> dict:
        return {"query": self.W.in_features, "key": self.U.in_features, "att": self.W.out_features}

    def forward(self, query: torch.Tensor, annotations: torch.Tensor, alphas: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        """-> log beta_ij (B, T, S): each row a distribution over the real source positions
        (mask (B, S), True = real), -inf on padding."""
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
        return head(*head_inputs(model, src, src_mask, tgt_in, tgt_out), src_mask).exp()  # (B, T, S)


def head_state(head: AlignmentHead, record: dict) -> dict:
    """What a checkpoint stores under ``align_head``: the weights, the sizes, and how it was trained."""
    return {"dims": head.dims, "state": {k: v.detach().cpu() for k, v in head.state_dict().items()},
            "record": record}


def load_head(entry: dict, path="the checkpoint") -> AlignmentHead:
    """The head of a checkpoint's ``align_head`` entry (``head_state``), or a clear error naming ``path``."""
    try:
        dims = entry["dims"]
        head = AlignmentHead(int(dims["query"]), int(dims["key"]), int(dims["att"]))
        head.load_state_dict(entry["state"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path}: its align_head entry is not an alignment head: {reason}") from None
    return head.eval()
