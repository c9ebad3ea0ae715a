"""Training: teacher forcing, periodic validation (loss, perplexity, BLEU), early stopping on
dev BLEU, best/last checkpoints, a JSONL log, ``--resume`` that continues the same run
bit-identically, non-finite updates skipped, and data parallelism under torchrun."""
from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import signal
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from rnnsearch import __version__, checkpoint
from rnnsearch.training import distributed
from rnnsearch.data.batching import epoch_plan, make_batch
from rnnsearch.config import Config, to_dict
from rnnsearch.data.corpus import Corpus, load_corpora
from rnnsearch.analysis.evaluate import corpus_bleu
from rnnsearch.model import build_model
from rnnsearch.training.optim import count_parameters, make_optimizer, make_scheduler
from rnnsearch.training.log import RunLog
from rnnsearch.training.state import (TrainError, TrainState, check_resumable, check_writable, remove_stale_temporaries,
                       rng_state, set_rng_state, trim_log, write_config)
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.decoding.translator import Translator

__all__ = ["Trainer", "TrainError", "train", "count_parameters", "make_optimizer", "dev_loss"]


class _Loss(nn.Module):
    """The model's summed NLL as ``forward``, so that DistributedDataParallel can wrap it."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src, src_mask, tgt_in, tgt_out):
        return self.model.loss(src, src_mask, tgt_in, tgt_out)


def dev_loss(model, corpus: Corpus, batch_size: int = 64, ctx=None) -> tuple[float, int]:
    """Mean per-token negative log-likelihood on ``corpus`` (teacher forcing), summed over ranks."""
    ctx = ctx or distributed.Context()
    was_training = model.training
    model.eval()
    order = distributed.shard(np.argsort(corpus.tgt_lens, kind="stable"), ctx)
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            b = make_batch([corpus.src_ids[i] for i in idx], [corpus.tgt_ids[i] for i in idx]).to(ctx.device)
            nll, n = model.loss(b.src, b.src_mask, b.tgt_in, b.tgt_out)
            total, tokens = total + float(nll), tokens + n
    model.train(was_training)
    total, tokens = distributed.all_sum([total, tokens], ctx)
    return total / max(tokens, 1), int(tokens)


class Trainer:
    def __init__(self, cfg: Config, out_dir: str | Path, resume: bool = False, log=print, ctx=None):
        t = cfg.train
        self.cfg, self.out = cfg, Path(out_dir)
        self.ctx = ctx or distributed.Context(device=distributed.resolve_device(t.device))
        self.log = log if self.ctx.is_main else (lambda *_: None)
        if t.threads:
            torch.set_num_threads(t.threads)
        payload = self._open_run_dir(resume)
        codecs = None
        if payload is not None:
            codecs = (TextCodec.from_state(payload["src_codec"]), TextCodec.from_state(payload["tgt_codec"]))
        random.seed(t.seed)
        np.random.seed(t.seed)
        self.src_codec, self.tgt_codec, self.train_data, self.dev = load_corpora(cfg, self.log, codecs)
        self.dev_corpus = Corpus([self.src_codec.encode(s) for s in self.dev[0]],
                                 [self.tgt_codec.encode(r) for r in self.dev[1]])
        self.model = build_model(cfg.model, len(self.src_codec.vocab), len(self.tgt_codec.vocab), seed=t.seed)
        self.model.to(self.ctx.device)
        if self.ctx.rank:  # same initial weights everywhere, a dropout stream per rank
            torch.manual_seed(t.seed + 7919 * self.ctx.rank)
        self.optimizer = make_optimizer(t, self.model)
        self.scheduler = make_scheduler(t, self.optimizer)
        self.state = TrainState()
        if payload is not None:
            self._restore(payload)
        loss = _Loss(self.model)
        if self.ctx.enabled:
            ids = [self.ctx.device] if self.ctx.device.type == "cuda" else None
            loss = nn.parallel.DistributedDataParallel(loss, device_ids=ids)
        self.loss_fn = loss
        self.translator = Translator(self.model, self.src_codec, self.tgt_codec, cfg.decode, self.ctx.device)
        where = f"{self.ctx.device}" + (f", {self.ctx.world} processes" if self.ctx.enabled else "")
        self.log(f"model {cfg.model.arch}: {count_parameters(self.model):,} parameters ({where})")
        self._stop_signal = None

    # -- run directory and checkpoints -------------------------------------------------------
    def _open_run_dir(self, resume: bool) -> dict | None:
        last = self.out / "last.pt"
        if self.ctx.is_main:
            check_writable(self.out)
        if not resume:
            if last.exists():
                raise TrainError(f"{self.out} already holds a run (last.pt): add --resume to continue it, "
                                 "or choose another --out")
            if self.ctx.is_main:
                write_config(self.out / "config.yaml", self.cfg)
            return None
        payload = checkpoint.load(last)
        check_resumable(self.cfg, payload["config"], last)
        if self.ctx.is_main:
            write_config(self.out / "config.yaml", self.cfg)
            gone = remove_stale_temporaries(self.out)
            if gone:
                self.log(f"removed {len(gone)} temporary file(s) of an interrupted save: {', '.join(gone)}")
        return payload

    def _restore(self, payload: dict) -> None:
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        if self.scheduler is not None and payload.get("scheduler"):
            self.scheduler.load_state_dict(payload["scheduler"])
        self.state = TrainState(**payload["train_state"])
        ranks = payload.get("rng_ranks") or [payload["rng"]]
        if len(ranks) == self.ctx.world:
            set_rng_state(ranks[self.ctx.rank])
        else:
            self.log(f"the checkpoint was written by {len(ranks)} process(es), this run has {self.ctx.world}: "
                     "data order continues exactly, dropout streams are re-seeded")
        if self.ctx.is_main:
            dropped = trim_log(self.out / "log.jsonl", self.state.step)
            if dropped:
                self.log(f"log.jsonl: removed {dropped} entries after step {self.state.step} (they are redone)")
        self.log(f"resuming {self.out / 'last.pt'} at step {self.state.step} (epoch {self.state.epoch})")

    def _payload(self, rngs: list[dict]) -> dict:
        return {"config": to_dict(self.cfg), "src_codec": self.src_codec.to_state(),
                "tgt_codec": self.tgt_codec.to_state(), "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
                "train_state": dataclasses.asdict(self.state), "rng": rngs[0], "rng_ranks": rngs,
                "meta": {"rnnsearch": __version__, "torch": str(torch.__version__),
                         "parameters": count_parameters(self.model), "world_size": self.ctx.world}}

    def save(self, *names: str) -> None:
        """Write the checkpoint(s) in order; every rank takes part, rank 0 writes."""
        self.state.last_save_step = self.state.step
        rngs = distributed.all_gather(rng_state(), self.ctx)
        if not self.ctx.is_main:
            return
        payload = self._payload(rngs)
        for name in names:
            try:
                checkpoint.save(self.out / name, payload)
            except checkpoint.CheckpointError as exc:
                kept = " (the previous one is intact)" if (self.out / name).exists() else ""
                raise TrainError(f"{exc}{kept}") from None

    # -- one update and validation -----------------------------------------------------------
    def train_step(self, idx) -> tuple[float, int, bool]:
        """One update on minibatch ``idx``: returns the summed NLL and target tokens over all
        ranks, and whether the update was applied (False: non-finite loss or gradient).
        The gradient is that of the minibatch's summed NLL divided by its target tokens
        (``train.loss_scale: token``) or by its sentences (``sentence``: GroundHog's cost, summed
        over time and averaged over the batch), however it is split over ranks and micro-batches."""
        ctx, t, data = self.ctx, self.cfg.train, self.train_data
        total_n = int(data.tgt_lens[idx].sum()) + len(idx)  # target tokens, </s> included
        divisor = total_n if t.loss_scale == "token" else len(idx)
        rows, weight = distributed.shard(idx, ctx), 1.0
        if len(rows) == 0:  # fewer sentences than ranks: take part in the all-reduce, add nothing
            rows, weight = idx[:1], 0.0
        parts = self._micro_batches(rows)
        self.optimizer.zero_grad(set_to_none=True)
        local_nll = 0.0
        for k, part in enumerate(parts):
            batch = make_batch([data.src_ids[i] for i in part], [data.tgt_ids[i] for i in part]).to(ctx.device)
            hold = ctx.enabled and k < len(parts) - 1  # DDP: all-reduce gradients after the last part
            with (self.loss_fn.no_sync() if hold else contextlib.nullcontext()), \
                    (torch.autocast(ctx.device.type, dtype=torch.bfloat16) if t.bf16 else contextlib.nullcontext()):
                nll, _ = self.loss_fn(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)
            (nll * (weight * ctx.world / divisor)).backward()  # DDP averages: sum over ranks / divisor
            local_nll += float(nll.detach()) * weight
        total_nll = distributed.all_sum([local_nll], ctx)[0]
        params = [p for p in self.model.parameters() if p.grad is not None]
        if t.clip > 0:
            norm = torch.nn.utils.clip_grad_norm_(params, t.clip)
        else:
            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params]))
        ok = math.isfinite(total_nll) and math.isfinite(float(norm))
        if ok:
            self.optimizer.step()
        return total_nll, total_n, ok

    def _micro_batches(self, rows) -> list:
        """``rows`` split into consecutive parts of at most ``train.max_positions`` padded target
        positions (sentences x longest target) each, to bound activation memory."""
        limit = self.cfg.train.max_positions
        positions = len(rows) * (int(self.train_data.tgt_lens[rows].max()) + 1)
        if not limit or positions <= limit or len(rows) == 1:
            return [rows]
        return [part for part in np.array_split(rows, min(len(rows), math.ceil(positions / limit))) if len(part)]

    def validate(self) -> dict:
        t, ctx = self.cfg.train, self.ctx
        loss, _ = dev_loss(self.model, self.dev_corpus, ctx=ctx)
        n = t.valid_max_sentences or len(self.dev[0])
        mine = range(ctx.rank, n, ctx.world) if ctx.enabled else range(n)
        local = [h.text for h in self.translator.translate([self.dev[0][i] for i in mine], beam=t.valid_beam)]
        hyps = [""] * n
        for rank, texts in enumerate(distributed.all_gather(local, ctx)):
            for i, text in zip(range(rank, n, ctx.world), texts):
                hyps[i] = text
        bleu, _ = corpus_bleu(hyps, self.dev[1][:n])
        s = self.state
        s.last_valid_step = s.step
        improved = bleu > s.best_bleu
        if improved:
            s.best_bleu, s.best_step, s.bad_evals = bleu, s.step, 0
        else:
            s.bad_evals += 1
        if self.scheduler is not None:
            self.scheduler.step(bleu)
        self.save(*(("best.pt", "last.pt") if improved else ("last.pt",)))  # best first: see docs
        return {"dev_loss": loss, "dev_ppl": math.exp(min(loss, 50.0)), "dev_bleu": bleu,
                "best_bleu": s.best_bleu, "best_step": s.best_step,
                "lr": self.optimizer.param_groups[0]["lr"]}

    def _stop_reason(self) -> str | None:
        """Why to stop now, agreed by all ranks (signals and the clock may differ between them).
        Also brings ``state.cpu_s`` up to date: the CPU time of every rank since the start."""
        t, s = self.cfg.train, self.state
        late = bool(t.max_minutes and s.elapsed_s >= 60 * t.max_minutes)
        signalled, late = self._count_cpu(bool(self._stop_signal), late)
        if signalled:
            return f"stopped by {self._stop_signal or 'a signal to another rank'}"
        if t.max_steps and s.step >= t.max_steps:
            return f"reached train.max_steps={t.max_steps}"
        if late:
            return f"reached train.max_minutes={t.max_minutes}"
        if t.max_core_hours and s.cpu_s >= 3600 * t.max_core_hours:
            return f"reached train.max_core_hours={t.max_core_hours} ({s.cpu_s / 3600:.2f} core-hours)"
        if t.max_epochs and s.epoch >= t.max_epochs:
            return f"reached train.max_epochs={t.max_epochs}"
        if t.patience and s.bad_evals >= t.patience:
            return f"early stopping: dev BLEU did not improve for {t.patience} validations"
        return None

    def _count_cpu(self, *flags: bool) -> list[float]:
        """``state.cpu_s`` = CPU time of every rank (all threads) in the training loops so far, in
        one all-reduce that also sums ``flags`` over ranks (returned)."""
        here = time.process_time() - self._cpu_start
        *summed, cpu = distributed.all_sum([*flags, here], self.ctx)
        self.state.cpu_s = self._cpu_base + cpu
        return summed

    def _count_nonfinite(self, ok: bool, loss: float, runlog: RunLog) -> None:
        s, limit = self.state, self.cfg.train.max_nonfinite
        if ok:
            s.nonfinite_run = 0
            return
        s.nonfinite_total, s.nonfinite_run = s.nonfinite_total + 1, s.nonfinite_run + 1
        runlog.write({"step": s.step, "event": "nonfinite_skipped", "loss": loss if math.isfinite(loss) else str(loss),
                      "skipped_total": s.nonfinite_total, "skipped_in_a_row": s.nonfinite_run})
        if s.nonfinite_run >= limit:
            last = (f"the last good checkpoint is {self.out / 'last.pt'} (step {s.last_save_step})"
                    if s.last_save_step >= 0 else "no checkpoint had been written yet")
            raise TrainError(f"non-finite loss or gradients in {limit} updates in a row (steps "
                             f"{s.step - limit + 1}-{s.step}; train.max_nonfinite={limit}): stopped; {last}")

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> dict:
        previous = self._install_signal_handlers()
        try:
            with RunLog(self.out / "log.jsonl", self.state, enabled=self.ctx.is_main) as runlog:
                reason = self._loop(runlog)
                self._count_cpu()
                if self.state.last_valid_step != self.state.step and not self._stop_signal:
                    runlog.write({"step": self.state.step, **self.validate()})
                else:
                    self.save("last.pt")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        s = self.state
        hint = f"; continue with --resume --out {self.out}" if self._stop_signal else ""
        self.log(f"{reason}. step {s.step}, {s.elapsed_s / 60:.1f} min, {s.cpu_s / 3600:.2f} core-hours; best dev BLEU {s.best_bleu:.2f} "
                 f"at step {s.best_step}; {s.nonfinite_total} non-finite updates skipped; "
                 f"checkpoints in {self.out}{hint}")
        return {"reason": reason, **dataclasses.asdict(s)}

    def _loop(self, runlog: RunLog) -> str:
        t, s, data = self.cfg.train, self.state, self.train_data
        start = time.monotonic() - s.elapsed_s
        self._cpu_base, self._cpu_start = s.cpu_s, time.process_time()
        meter = runlog.meter(t, disable=not (t.progress and self.ctx.is_main))
        reason = self._stop_reason()
        src_lens, tgt_lens = data.src_lens, data.tgt_lens
        while reason is None:
            plan = epoch_plan(src_lens, tgt_lens, t, t.seed, s.epoch)
            while s.batch_index < len(plan) and reason is None:
                loss, n, ok = self.train_step(plan[s.batch_index])
                s.batch_index, s.step, s.tgt_tokens = s.batch_index + 1, s.step + 1, s.tgt_tokens + n
                s.elapsed_s = time.monotonic() - start
                self._count_nonfinite(ok, loss, runlog)
                meter.update(loss if ok else 0.0, n if ok else 0)
                if s.step % t.valid_every == 0:
                    result = self.validate()
                    runlog.write({"step": s.step, "epoch": s.epoch, **result})
                    meter.write(f"step {s.step}: dev loss {result['dev_loss']:.3f} ppl {result['dev_ppl']:.2f} "
                                f"BLEU {result['dev_bleu']:.2f} (best {s.best_bleu:.2f} at {s.best_step})")
                elif t.save_every and s.step % t.save_every == 0:
                    self.save("last.pt")
                reason = self._stop_reason()
            if s.batch_index >= len(plan):
                s.epoch, s.batch_index = s.epoch + 1, 0
                reason = reason or self._stop_reason()
        meter.close()
        return reason

    def _install_signal_handlers(self) -> dict:
        def handler(signum, _frame):
            self._stop_signal = signal.Signals(signum).name
        previous = {}
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: leave signals alone
            pass
        return previous


def train(cfg: Config, out_dir: str | Path, resume: bool = False, log=print, ctx=None) -> dict:
    """Train as configured, writing ``out_dir/{best,last}.pt`` and ``out_dir/log.jsonl``."""
    return Trainer(cfg, out_dir, resume=resume, log=log, ctx=ctx).run()
