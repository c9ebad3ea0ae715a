"""Training an alignment head (model/align_head.py) on a frozen RNNsearch: ``rnnsearch
train-align-head CKPT --links FILE --out NEW.pt``.

The links are those of ``train.guided_alignment`` (Pharaoh, one line per line of the checkpoint's
training files, e.g. from eflomal); the pairs are the checkpoint's training corpus, read as its
trainer read it. A random sample of ``pairs`` kept pairs trains the head (the model's weights stay
as they are), another ``held_out`` measure it. The cost is guided alignment's ce (Chen et al.
2016), -sum_j A_ij log beta_ij per target word with links; the output is the input checkpoint with
the head beside the model (``align_head``), written atomically, without the optimiser's state and
the random streams (it translates and aligns; a training run does not resume from it).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from rnnsearch import checkpoint
from rnnsearch.config import apply_overrides, from_dict
from rnnsearch.data.batching import make_batch
from rnnsearch.data.corpus import Corpus, load_corpora
from rnnsearch.data.guided import guide_matrix
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import PAD
from rnnsearch.decoding import pretrained
from rnnsearch.errors import UsageError
from rnnsearch.model import build_model
from rnnsearch.model.conditional import QUERIES
from rnnsearch.model.align_head import AlignmentHead, head_inputs, head_state, load_head, query_size

# what the output leaves out of the input checkpoint: its file header, and what only resumes training
NOT_KEPT = ("format", "version", "optimizer", "scheduler", "rng", "rng_ranks")


class HeadSettings(BaseModel):
    """How the head is trained: the only source of these defaults (``train-align-head``'s flags
    are made from the fields)."""
    model_config = ConfigDict(frozen=True, extra="forbid")

    pairs: int = Field(100_000, ge=0, description="training pairs sampled from the corpus (0: all)")
    held_out: int = Field(1_000, ge=0, description="other pairs the head's cost is measured on after each epoch")
    epochs: int = Field(2, ge=1, description="passes over the sampled pairs")
    att: int = Field(128, ge=1, description="the head's hidden size")
    context: int = Field(0, ge=0, description="each direction's size of a GRU over the target side's queries (0: none)")
    lr: float = Field(1e-3, gt=0, description="Adam's learning rate")
    batch_size: int = Field(80, ge=1, description="pairs per update")
    seed: int = Field(1, description="the sample's and the head's initial weights' seed")
    init_head: bool = Field(False, description="start from the checkpoint's own head (its sizes kept), e.g. to adapt "
                            "it to a translation memory's pairs, rather than from random weights")
    threads: int = Field(0, ge=0, description="torch threads (0: torch's default)")
    device: str = Field("cpu", description="where the model and the head run: cpu, cuda or cuda:N")


def train_alignment_head(ckpt: str | Path, links: str | Path, out: str | Path, settings: HeadSettings | None = None,
                         overrides: list[str] | None = None, log=print) -> dict:
    """Train a head for the model of ``ckpt`` on ``links``; write ``ckpt`` plus the head to ``out``
    and return the head's record (sizes, sample, costs per epoch, CPU seconds). ``overrides``:
    dotted config changes (``data.dir=...``) for reading the corpus elsewhere."""
    settings = settings or HeadSettings()
    source = pretrained.weights_path(ckpt)
    if Path(out).resolve() == Path(source).resolve():
        raise UsageError(f"--out {out} is the input checkpoint: write the model with its head to a new file")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    device = torch.device(settings.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {settings.device}: torch sees no CUDA device here")
    payload = checkpoint.load(source)
    raw = apply_overrides(payload["config"], [*(overrides or []), f"train.guided_alignment={links}"])
    cfg = from_dict(raw)  # checks that the model has attention and that the links can index its units
    if cfg.model.decoder_cell == "conditional":
        raise UsageError(f"{ckpt}: {QUERIES}")
    codecs = TextCodec.from_state(payload["src_codec"]), TextCodec.from_state(payload["tgt_codec"])
    _, _, corpus, _ = load_corpora(cfg, log, codecs)
    model = build_model(cfg.model, len(codecs[0].vocab), len(codecs[1].vocab))
    model.load_state_dict(payload["model"])
    model.to(device).eval().requires_grad_(False)
    train_rows, held_rows = _sample(corpus, settings)
    torch.manual_seed(settings.seed)
    head = _initial_head(payload, source, model, settings).to(device)
    context = f", target context {head.dims['context']}" if head.dims["context"] else ""
    start = f", from {ckpt}'s head" if settings.init_head else ""
    log(f"alignment head: {len(train_rows):,} training pairs, {len(held_rows):,} held out, "
        f"{settings.epochs} epochs, size {head.dims['att']}{context}{start}")
    optimizer = torch.optim.Adam(head.parameters(), lr=settings.lr)
    batches = _batches(train_rows, corpus.tgt_lens, settings.batch_size)
    rng, cpu0 = np.random.default_rng(settings.seed), time.process_time()
    record = _record(ckpt, links, settings, len(train_rows), len(held_rows), head)
    if settings.init_head:
        record["init_head"] = payload["align_head"].get("record")  # how the head it started from was trained
    for epoch in range(1, settings.epochs + 1):
        cost = _epoch(model, head, optimizer, corpus, [batches[k] for k in rng.permutation(len(batches))], epoch)
        held = evaluate_head(model, head, corpus, held_rows, settings.batch_size)
        record["train_ce"].append(round(cost, 4))
        record["held_out_ce"].append(None if held is None else round(held, 4))
        log(f"epoch {epoch}: ce {cost:.4f} on the training pairs, {'-' if held is None else f'{held:.4f}'} "
            f"held out ({time.process_time() - cpu0:.0f} CPU s)")
    record["cpu_s"] = round(time.process_time() - cpu0, 1)
    checkpoint.save(out, {k: v for k, v in payload.items() if k not in NOT_KEPT} | {"align_head": head_state(head, record)})
    log(f"wrote {out}: the model of {ckpt} with its alignment head (`rnnsearch align {out} --head`)")
    return record


def _initial_head(payload: dict, source, model, s: HeadSettings) -> AlignmentHead:
    """A new head of the settings' sizes, or with ``init_head`` the checkpoint's own (its sizes)."""
    if not s.init_head:
        return AlignmentHead(query_size(model), model.decoder.C_o.in_features, s.att, s.context)
    if "align_head" not in payload:
        raise UsageError(f"--init-head: {source} has no alignment head to start from; train one without --init-head")
    return load_head(payload["align_head"], source).train()


def _epoch(model, head: AlignmentHead, optimizer, corpus: Corpus, batches: list[np.ndarray], epoch: int) -> float:
    """One pass of Adam over ``batches``, each update on its batch's mean ce; -> the epoch's ce per
    linked target position. A tqdm bar on standard error when it is a terminal."""
    head.train()
    cost = rows = 0.0
    bar = tqdm(batches, desc=f"epoch {epoch}", unit="batch", dynamic_ncols=True, disable=not sys.stderr.isatty())
    for part in bar:
        c, n = batch_cost(model, head, corpus, part)
        optimizer.zero_grad(set_to_none=True)
        (c / max(n, 1)).backward()
        optimizer.step()
        cost, rows = cost + float(c.detach()), rows + n
        bar.set_postfix(ce=f"{cost / max(rows, 1):.3f}", refresh=False)
    return cost / max(rows, 1)


def batch_cost(model, head: AlignmentHead, corpus: Corpus, rows: np.ndarray) -> tuple[torch.Tensor, int]:
    """The summed ce of the head on pairs ``rows`` against their links' distributions, and the
    number of target positions with links (</s> -> </s> included)."""
    device = next(head.parameters()).device
    batch = make_batch([corpus.src_ids[i] for i in rows], [corpus.tgt_ids[i] for i in rows])
    src, src_mask, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out))
    guide = guide_matrix(corpus.links, rows, corpus.src_lens, corpus.tgt_lens).to(device)  # (B, T, S)
    query, annotations, alphas = head_inputs(model, src, src_mask, tgt_in, tgt_out)
    log_beta = head(query, annotations, alphas, src_mask, tgt_out != PAD)  # (B, T, S)
    terms = torch.where(guide > 0, guide * log_beta, torch.zeros_like(log_beta))  # (B, T, S), no -inf * 0
    return -terms.sum(), int((guide.sum(-1) > 0).sum())


def evaluate_head(model, head: AlignmentHead, corpus: Corpus, rows: np.ndarray, batch_size: int) -> float | None:
    """The head's ce per linked target position on pairs ``rows`` (None for no pairs)."""
    if len(rows) == 0:
        return None
    head.eval()
    cost = count = 0.0
    with torch.no_grad():
        for part in _batches(rows, corpus.tgt_lens, batch_size):
            c, n = batch_cost(model, head, corpus, part)
            cost, count = cost + float(c), count + n
    head.train()
    return cost / max(count, 1)


def _sample(corpus: Corpus, s: HeadSettings) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint random (training, held-out) pair indices of the corpus."""
    n = len(corpus.src_ids)
    order = np.random.default_rng(s.seed).permutation(n)
    held = np.sort(order[:min(s.held_out, n // 10)])  # at most a tenth of a small corpus
    rest = order[len(held):]
    return (rest if s.pairs == 0 else rest[:s.pairs]), held


def _batches(rows: np.ndarray, tgt_lens: np.ndarray, size: int) -> list[np.ndarray]:
    """``rows`` sorted by target length, in minibatches of ``size`` (little padding)."""
    rows = rows[np.argsort(tgt_lens[rows], kind="stable")]
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _record(ckpt, links, s: HeadSettings, pairs: int, held_out: int, head: AlignmentHead) -> dict:
    return {"source": str(ckpt), "links": str(links), "pairs": pairs, "held_out": held_out, "epochs": s.epochs,
            "att": head.dims["att"], "context": head.dims["context"], "lr": s.lr, "batch_size": s.batch_size,
            "seed": s.seed, "cost": "ce", "train_ce": [], "held_out_ce": []}
