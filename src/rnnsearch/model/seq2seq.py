"""RNNsearch and RNNencdec: encoder + decoder, the paper's initialisation, the loss."""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from rnnsearch.data.vocab import PAD
from rnnsearch.errors import UsageError
from rnnsearch.model.conditional import ConditionalDecoder
from rnnsearch.model.decoder import Decoder, DecoderState, EncoderOutput
from rnnsearch.model.encoder import Encoder
from rnnsearch.model.output import linear_cross_entropy


@contextmanager
def evaluating(model):
    """``model`` in eval mode inside the block (no dropout), back in its own mode after it, even
    on an error. Any object with ``training`` and ``train(mode)``: a Seq2Seq or a decoding back end."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


class Seq2Seq(nn.Module):
    """``arch='rnnsearch'``: bidirectional encoder, attention, s_0 = tanh(W_s backward h_1).
    ``arch='rnnencdec'``: unidirectional encoder, c = tanh(V h_Tx), s_0 = tanh(V' c).
    Not the paper's, for #87's ablation: ``decoder_cell='conditional'`` (model/conditional.py),
    ``readout='tanh'`` (model/decoder.py), ``init_state='mean'``: s_0 = tanh(W_s mean_j h_j), and
    ``tied_output``: W_o is the target embedding matrix E (Press & Wolf 2017), which needs l = m."""

    def __init__(self, arch: str, src_vocab: int, tgt_vocab: int, emb: int, enc_hidden: int,
                 dec_hidden: int, att: int, maxout: int, readout_state: str = "current",
                 encoder_cell: str = "paper", dropout: float = 0.0, deferred: bool = True,
                 decoder_cell: str = "paper", readout: str = "maxout", init_state: str = "backward",
                 tied_output: bool = False):
        super().__init__()
        self.arch = arch
        attention = arch == "rnnsearch"
        self.mean_init = init_state == "mean"  # s_0 = tanh(W_s mean_j h_j) (Nematus, Marian), not the paper's
        if self.mean_init and not attention:
            raise UsageError("model.init_state=mean reads the annotations h_j: arch rnnsearch only")
        self.encoder = Encoder(src_vocab, emb, enc_hidden, bidirectional=attention,
                               cell=encoder_cell, dropout=dropout, deferred=deferred)
        context = 2 * enc_hidden if attention else enc_hidden
        self.V = None if attention else nn.Linear(enc_hidden, enc_hidden)  # c = tanh(V h_Tx)
        decoder = ConditionalDecoder if decoder_cell == "conditional" else Decoder  # model/conditional.py
        self.decoder = decoder(tgt_vocab, emb, dec_hidden, context, att if attention else None, maxout,
                               context if self.mean_init else enc_hidden, readout_state, dropout, deferred, readout)
        if tied_output:
            if maxout != emb:
                raise UsageError(f"model.tied_output: W_o is (V, maxout {maxout}) and the embedding (V, emb {emb}): "
                                 "set model.maxout to model.emb")
            self.decoder.W_o.weight = self.decoder.embed.weight  # one (V, E) matrix: y's embedding and output row

    def set_deferred(self, on: bool) -> None:
        """Whether training defers the recurrences' weight gradients (``train.deferred``)."""
        for module in self.modules():
            if hasattr(module, "deferred"):
                module.deferred = on

    def encode(self, src: torch.Tensor, mask: torch.Tensor) -> EncoderOutput:
        """src (B, S) ids, mask (B, S) -> everything the decoder needs, U_a h_j included."""
        annotations, last_forward, first_backward = self.encoder(src, mask)  # (B, S, C), (B, H), (B, H)
        if self.V is None:
            init = first_backward
            if self.mean_init:  # mean_j h_j over the real positions
                real = mask.unsqueeze(-1).to(annotations.dtype)  # (B, S, 1)
                init = (annotations * real).sum(1) / real.sum(1)  # (B, C)
            enc = EncoderOutput(annotations, mask, None, None, init)
        else:
            c = torch.tanh(self.V(last_forward))  # (B, H)
            enc = EncoderOutput(annotations, mask, None, c, c)
        return self.decoder.prepare(enc)

    def init_state(self, enc: EncoderOutput) -> DecoderState:
        return self.decoder.init_state(enc)

    def step(self, y_prev: torch.Tensor, state: DecoderState, enc: EncoderOutput):
        """y_{i-1} (B,) -> log p(y_i | y_<i, x) (B, V), next state, alpha_i (B, S) or None. With
        ``enc.shortlist`` (model/shortlist.py), (B, V') over its words, -inf off each sentence's own."""
        logits, state, alpha = self.decoder.step(y_prev, state, enc)
        logits = _full_precision(logits)  # (B, V) or (B, V'), a tensor of this step's own
        if logits.requires_grad or torch.jit.is_tracing():  # training, or the ONNX export (decoding/export.py)
            return torch.log_softmax(logits, dim=-1), state, alpha
        # decoding: in place, so that the search reads the (B, V) values from one buffer, not two
        return torch.log_softmax(logits, dim=-1, out=logits), state, alpha

    def forward(self, src, src_mask, tgt_in):
        """Teacher forcing: logits (B, T, V) and attention (B, T, S) or None."""
        return self.decoder(tgt_in, self.encode(src, src_mask))

    def alignment_posterior(self, src, src_mask, tgt_in, tgt_out) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing -> alpha_ij (B, T, S) and the posterior of the alignment of y_i (B, T, S),
        the attention read as a latent alignment: q_ij = alpha_ij p(y_i | s_{i-1}, y_{i-1}, c_i = h_j)
        / sum_k alpha_ik p(y_i | s_{i-1}, y_{i-1}, c_i = h_k), alpha_i the prior and the output, had
        it read h_j alone, the likelihood. Rows of padded target positions are meaningless."""
        enc = self.encode(src, src_mask)
        _, alphas, queries = self.decoder.features(tgt_in, enc, with_queries=True)  # (B, T, S), (B, T, D)
        if alphas is None:
            raise ValueError("the alignment posterior needs attention (arch: rnnsearch)")
        logp = self.decoder.logprob_given_annotations(tgt_in, tgt_out, queries, enc)  # (B, T, S)
        score = torch.log(alphas.float().clamp_min(1e-30)) + logp  # (B, T, S)
        score = score.masked_fill(~src_mask.unsqueeze(1), float("-inf"))
        return alphas, torch.softmax(score, dim=-1)

    def loss(self, src, src_mask, tgt_in, tgt_out, smoothing: float = 0.0) -> tuple[torch.Tensor, int]:
        """Summed negative log-likelihood of tgt_out (B, T), label-smoothed by ``smoothing`` (0: the
        paper's plain NLL), and the number of real target tokens."""
        t, _ = self.decoder.features(tgt_in, self.encode(src, src_mask))  # (B, T, M)
        return self._nll(t, tgt_out, smoothing)

    def guided_loss(self, src, src_mask, tgt_in, tgt_out, guide: torch.Tensor, cost: str = "ce",
                    smoothing: float = 0.0) -> tuple[torch.Tensor, int, torch.Tensor]:
        """:meth:`loss` and guided alignment's cost of the same pass's alpha_ij against ``guide``
        (B, T, S) (:func:`alignment_cost`): (summed NLL, target tokens, summed alignment cost)."""
        t, alphas = self.decoder.features(tgt_in, self.encode(src, src_mask))  # (B, T, M), (B, T, S)
        if alphas is None:
            raise ValueError("guided alignment needs attention (arch: rnnsearch)")
        nll, n = self._nll(t, tgt_out, smoothing)
        return nll, n, alignment_cost(alphas, guide, cost)

    def _nll(self, t: torch.Tensor, tgt_out: torch.Tensor, smoothing: float) -> tuple[torch.Tensor, int]:
        real = (tgt_out != PAD).flatten()  # (B*T,)
        rows = real.nonzero().squeeze(1)  # (N,) real target positions only
        out = self.decoder.W_o
        nll = linear_cross_entropy(t.flatten(0, 1).index_select(0, rows), out.weight, out.bias,
                                   tgt_out.flatten().index_select(0, rows), smoothing)
        return nll, len(rows)


def alignment_cost(alphas: torch.Tensor, guide: torch.Tensor, cost: str = "ce") -> torch.Tensor:
    """Guided alignment (Chen et al. 2016; Marian's costs): for every target position whose guide
    row A_i (a distribution over source positions) is not zero, ``ce``: -sum_j A_ij log alpha_ij,
    ``mse``: sum_j (alpha_ij - A_ij)^2 / 2; summed over those positions, in float32."""
    alphas = alphas.float()  # (B, T, S)
    if cost == "ce":
        per = -(guide * torch.log(alphas.clamp_min(1e-9))).sum(-1)  # (B, T)
    elif cost == "mse":
        per = 0.5 * (alphas - guide).square().sum(-1)  # (B, T)
    else:
        raise ValueError(f"guided alignment cost {cost!r}: expected ce or mse")
    return (per * (guide.sum(-1) > 0)).sum()


def _full_precision(x: torch.Tensor) -> torch.Tensor:
    """Softmax and loss in at least float32, also under bf16/fp16 autocast."""
    return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x


def init_paper(model: Seq2Seq) -> None:
    """SPEC.md: recurrent matrices random orthogonal (per gate block); W_a, U_a ~ N(0, 0.001);
    v_a and biases zero; every other weight ~ N(0, 0.01)."""
    for name, p in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        owner = name.rsplit(".", 2)[-2] if name.count(".") >= 1 else ""
        if leaf.startswith("bias"):
            nn.init.zeros_(p)
        elif _is_recurrent(name):
            _orthogonal_blocks(p)
        elif owner in ("W_a", "U_a"):
            nn.init.normal_(p, std=0.001)
        elif owner == "v_a":
            nn.init.zeros_(p)
        else:
            nn.init.normal_(p, std=0.01)


def init_xavier(model: Seq2Seq) -> None:
    """A common alternative: Xavier-uniform matrices, orthogonal recurrent blocks, zero biases."""
    for name, p in model.named_parameters():
        if name.rsplit(".", 1)[-1].startswith("bias"):
            nn.init.zeros_(p)
        elif _is_recurrent(name):
            _orthogonal_blocks(p)
        elif p.dim() >= 2:
            nn.init.xavier_uniform_(p)
        else:
            nn.init.normal_(p, std=0.01)


def _is_recurrent(name: str) -> bool:
    return (".U_zr." in name or ".U2_zr." in name or name.endswith((".U.weight", ".U2.weight")) or "weight_hh" in name)


def _orthogonal_blocks(p: torch.Tensor) -> None:
    """Each square (H, H) block of a stacked recurrent matrix gets its own orthogonal init."""
    with torch.no_grad():
        rows, cols = p.shape
        for start in range(0, rows, cols):
            nn.init.orthogonal_(p[start:start + cols])


def build_model(model_cfg, src_vocab: int, tgt_vocab: int, seed: int | None = None,
                deferred: bool = True) -> Seq2Seq:
    """Model from the ``model`` config section, initialised as configured; ``deferred`` is
    ``train.deferred`` (how training computes the recurrences' weight gradients)."""
    if seed is not None:
        torch.manual_seed(seed)
    model = _construct(model_cfg, src_vocab, tgt_vocab, deferred)
    if model_cfg.init == "paper":
        init_paper(model)
    else:
        init_xavier(model)
    with torch.no_grad():  # padding embeddings stay zero (they never receive gradient)
        model.encoder.embed.weight[PAD].zero_()
        model.decoder.embed.weight[PAD].zero_()
    return model


def load_model(model_cfg, src_vocab: int, tgt_vocab: int, state: dict) -> Seq2Seq:
    """The model of a checkpoint: ``state``'s weights, without the initialisation they replace (the
    paper's orthogonal and random draws cost 0.16 s of a translator's start-up). Built on the CPU
    (with PyTorch's default initialisation, 0.15 s): on the meta device, nn.Embedding's normal_ goes
    through torch._refs, whose first use imports torch._dynamo (1.9 s). A missing or unexpected
    weight is an error, as in ``load_state_dict``."""
    model = _construct(model_cfg, src_vocab, tgt_vocab)
    model.load_state_dict(state)
    return model


def _construct(model_cfg, src_vocab: int, tgt_vocab: int, deferred: bool = True) -> Seq2Seq:
    """The Seq2Seq the ``model`` config section describes, with PyTorch's default initialisation."""
    return Seq2Seq(model_cfg.arch, src_vocab, tgt_vocab, model_cfg.emb, model_cfg.enc_hidden,
                   model_cfg.dec_hidden, model_cfg.att, model_cfg.maxout, model_cfg.readout_state,
                   model_cfg.encoder_cell, model_cfg.dropout, deferred, model_cfg.decoder_cell, model_cfg.readout,
                   model_cfg.init_state, model_cfg.tied_output)
