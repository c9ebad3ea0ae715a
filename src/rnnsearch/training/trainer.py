"""Training: teacher forcing, periodic validation (loss, perplexity, BLEU), early stopping on dev BLEU, best/last
checkpoints, a JSONL log, ``--resume`` that continues the run bit-identically, non-finite updates skipped, torchrun."""
from __future__ import annotations

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
from rnnsearch.config import Config, to_dict
from rnnsearch.cpu import EMULATED_TRAINING, emulated_warning
from rnnsearch.data.batching import epoch_plan
from rnnsearch.data.corpus import Corpus, check_files, load_corpora
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.decoding.translator import Translator
from rnnsearch.model import build_model
from rnnsearch.training import distributed
from rnnsearch.training.adapt import adapt_config, inherited_head, parent_codecs, parent_record, start_from
from rnnsearch.training.log import RunLog
from rnnsearch.training.optim import count_parameters, make_optimizer, make_scheduler, set_rate
from rnnsearch.training.rundir import RunDir
from rnnsearch.training.state import (TrainError, TrainState, catch_stop_signals, check_resumable, restore_signals,
                                      rng_state, set_rng_state)
from rnnsearch.training.update import Step, TrainingLoss, train_step
from rnnsearch.training.validation import validate

__all__ = ["Trainer", "TrainError", "train"]


class Trainer:
    def __init__(self, cfg: Config, out_dir: str | Path, resume: bool = False, log=print, ctx=None,
                 init: str | None = None, explicit: frozenset[str] = frozenset()):
        """``init``: start a new run from that model (training/adapt.py); ``explicit``: the dotted
        keys given on the command line (``--set``), which --init refuses to see contradict it."""
        t = cfg.train
        self.cfg, self.out = cfg, Path(out_dir)
        self.ctx = ctx or distributed.Context(device=distributed.resolve_device(t.device))
        self.log = log if self.ctx.is_main else (lambda *_: None)
        if t.threads:
            torch.set_num_threads(t.threads)
        self.parent, self.cfg = start_from(init, resume, cfg, explicit, self.log)
        check_files(self.cfg, parent_codecs(self.parent) if self.parent else None)  # before the run directory is made
        self.init_record = None
        self.rundir = RunDir(self.out)
        payload = self._open_run_dir(resume, explicit)
        cfg = self.cfg  # with a parent's (--init's or a resumed adapted run's) architecture and vocabularies
        source = payload if payload is not None else self.parent.payload if self.parent is not None else None
        codecs = (TextCodec.from_state(source["src_codec"]), TextCodec.from_state(source["tgt_codec"])) if source else None
        self.head = (payload or {}).get("align_head") or (inherited_head(self.parent, self.log) if self.parent else None)
        random.seed(t.seed)
        np.random.seed(t.seed)
        self.src_codec, self.tgt_codec, self.train_data, self.dev = load_corpora(cfg, self.log, codecs)
        self.dev_corpus = Corpus([self.src_codec.encode(s) for s in self.dev[0]],
                                 [self.tgt_codec.encode(r) for r in self.dev[1]])
        self.model = build_model(cfg.model, len(self.src_codec.vocab), len(self.tgt_codec.vocab), seed=t.seed,
                                 deferred=t.deferred)
        if self.parent is not None:
            self.model.load_state_dict(self.parent.payload["model"])
            self.init_record = parent_record(self.parent)
            self.log(f"starting from {self.parent.name} ({self.parent.path}; update "
                     f"{self.init_record['updates'] or 0:,}): its weights and vocabularies, a new optimiser")
        self.model.to(self.ctx.device)
        if self.ctx.rank:  # same initial weights everywhere, a dropout stream per rank
            torch.manual_seed(t.seed + 7919 * self.ctx.rank)
        self.optimizer = make_optimizer(t, self.model)
        self.scheduler = make_scheduler(t, self.optimizer)
        self.state = TrainState()
        if payload is not None:
            self._restore(payload)
        loss = TrainingLoss(self.model, t.label_smoothing, t.guided_alignment_weight, t.guided_alignment_cost)
        if self.ctx.enabled:
            ids = [self.ctx.device] if self.ctx.device.type == "cuda" else None
            loss = nn.parallel.DistributedDataParallel(loss, device_ids=ids)
        self.loss_fn = loss
        self.translator = Translator(self.model, self.src_codec, self.tgt_codec, cfg, self.ctx.device)
        self.translator.warn = lambda message: self.log(f"dev BLEU: warning: the dev pairs kept, {message}")
        where = f"{self.ctx.device}" + (f", {self.ctx.world} processes" if self.ctx.enabled else "")
        self.log(f"model {cfg.model.arch}: {count_parameters(self.model):,} parameters ({where})")
        if t.guided_alignment:
            self.log(f"guided alignment: weight {t.guided_alignment_weight}, cost {t.guided_alignment_cost}")
        if t.bf16 and self.ctx.device.type == "cpu" and (message := emulated_warning("train.bf16", EMULATED_TRAINING)):
            self.log(f"warning: {message}")
        self._stop_signal = None

    # -- run directory and checkpoints -------------------------------------------------------
    def _open_run_dir(self, resume: bool, explicit: frozenset[str] = frozenset()) -> dict | None:
        """Lock the run directory (rank 0), check it, and read last.pt when resuming."""
        last = self.out / "last.pt"
        if resume and not last.exists():  # before the folder and its lock are made: nothing is left behind
            raise TrainError(f"{self.out}: no run to resume (no last.pt there): start one without --resume")
        if self.ctx.is_main:
            self.rundir.check_writable()
            if note := self.rundir.lock():
                self.log(note)
        if not resume:
            if last.exists():
                raise TrainError(f"{self.out} already holds a run (last.pt): add --resume to continue it, "
                                 "or choose another --out")
            payload = None
        else:
            payload = checkpoint.load(last)
            self.init_record = (payload.get("meta") or {}).get("init")
            if self.init_record:  # a run started with --init: the architecture and vocabularies stay its parent's
                self.cfg, _ = adapt_config(self.cfg, payload["config"], explicit, self.init_record["name"])
            check_resumable(self.cfg, payload["config"], last)
        if self.ctx.is_main:
            self.rundir.write_config(self.cfg)
            gone = self.rundir.remove_stale_temporaries()
            if gone:
                self.log(f"removed {len(gone)} temporary file(s) of an interrupted save: {', '.join(gone)}")
        return payload

    def _restore(self, payload: dict) -> None:
        if "optimizer" not in payload or "train_state" not in payload:
            raise TrainError(f"{self.out / 'last.pt'} holds no optimiser state (an average?): it translates, "
                             "but a run cannot resume from it")
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
            dropped = self.rundir.trim_log(self.state.step)
            if dropped:
                self.log(f"log.jsonl: removed {dropped} entries after step {self.state.step} (they are redone)")
        moments = "" if payload["optimizer"].get("state") or not self.state.step else (
            f"; the optimiser's moments start from zero ({(payload.get('meta') or {}).get('restored_from', 'not kept')})")
        self.log(f"resuming {self.out / 'last.pt'} at step {self.state.step} (epoch {self.state.epoch}){moments}")

    def _payload(self, rngs: list[dict]) -> dict:
        return {"config": to_dict(self.cfg), "src_codec": self.src_codec.to_state(),
                "tgt_codec": self.tgt_codec.to_state(), "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
                "train_state": dataclasses.asdict(self.state), "rng": rngs[0], "rng_ranks": rngs,
                "meta": {"rnnsearch": __version__, "torch": str(torch.__version__),
                         "parameters": count_parameters(self.model), "world_size": self.ctx.world,
                         **({"init": self.init_record} if self.init_record else {})},
                **({"align_head": self.head} if self.head else {})}

    def save(self, *names: str) -> None:
        """Write the checkpoint(s) in order; every rank takes part, rank 0 writes."""
        self.state.last_save_step = self.state.step
        rngs = distributed.all_gather(rng_state(), self.ctx)
        if self.ctx.is_main:
            self.rundir.save(self._payload(rngs), names, self.state.step, self.cfg.train.keep_last)

    def close(self) -> None:
        """Release the run directory (its lock); :meth:`run` does it on the way out."""
        self.rundir.unlock()

    def __del__(self):
        rundir = getattr(self, "rundir", None)
        if rundir is not None:
            rundir.unlock()

    # -- one update and validation -----------------------------------------------------------
    def train_step(self, idx) -> Step:
        """One update on minibatch ``idx`` (see :func:`rnnsearch.training.update.train_step`) at the warm-up's rate."""
        set_rate(self.optimizer, self.cfg.train, self.state.step)
        return train_step(self.loss_fn, self.model, self.optimizer, self.train_data, idx, self.cfg.train, self.ctx)

    def validate(self) -> dict:
        """Dev loss, perplexity and BLEU (train.valid_beam, the first train.valid_max_sentences)."""
        t = self.cfg.train
        return validate(self.model, self.translator, self.dev_corpus, self.dev, t.valid_beam,
                        t.valid_max_sentences, self.ctx)

    def after_validation(self, result: dict) -> dict:
        """What a validation decides: the best score and the early-stopping count, the rate
        schedule, and the checkpoints (best.pt first when improved, then last.pt). Returns the
        log entry."""
        s, bleu = self.state, result["dev_bleu"]
        s.last_valid_step = s.step
        improved = bleu > s.best_bleu
        if improved:
            s.best_bleu, s.best_step, s.bad_evals = bleu, s.step, 0
        else:
            s.bad_evals += 1
        if self.scheduler is not None:
            self.scheduler.step(bleu)
        self.save(*(("best.pt", "last.pt") if improved else ("last.pt",)))  # best first: see docs
        return {"step": s.step, "epoch": s.epoch, **result, "best_bleu": s.best_bleu, "best_step": s.best_step,
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
        def on_signal(signum, _frame):
            self._stop_signal = signal.Signals(signum).name
        previous = catch_stop_signals(on_signal)
        try:
            with RunLog(self.out / "log.jsonl", self.state, enabled=self.ctx.is_main,
                        tensorboard=self.cfg.train.tensorboard) as runlog:
                reason = self._loop(runlog)
                self._count_cpu()
                if self.state.last_valid_step != self.state.step and not self._stop_signal:
                    runlog.write(self.after_validation(self.validate()))
                else:
                    self.save("last.pt")
        finally:
            self.close()
            restore_signals(previous)
        s = self.state
        hint = f"; continue with: rnnsearch train {self.out / 'config.yaml'} --resume --out {self.out}" \
            if self._stop_signal else ""  # the run's resolved config: this invocation's file and --set flags
        best = f"best dev BLEU {s.best_bleu:.2f} at step {s.best_step}" if s.best_step else "no validation yet"
        self.log(f"{reason}. step {s.step}, {s.elapsed_s / 60:.1f} min, {s.cpu_s / 3600:.2f} core-hours; "
                 f"{best}; {s.nonfinite_total} non-finite updates skipped; checkpoints in {self.out}{hint}")
        return {"reason": reason, **dataclasses.asdict(s)}

    def _loop(self, runlog: RunLog) -> str:
        t, s, data = self.cfg.train, self.state, self.train_data
        start = time.monotonic() - s.elapsed_s
        self._cpu_base, self._cpu_start = s.cpu_s, time.process_time()
        meter = runlog.meter(t, show=t.progress and self.ctx.is_main)
        reason = self._stop_reason()
        src_lens, tgt_lens = data.src_lens, data.tgt_lens
        while reason is None:
            plan = epoch_plan(src_lens, tgt_lens, t, t.seed, s.epoch)
            while s.batch_index < len(plan) and reason is None:
                step = self.train_step(plan[s.batch_index])
                s.batch_index, s.step, s.tgt_tokens = s.batch_index + 1, s.step + 1, s.tgt_tokens + step.tokens
                s.elapsed_s = time.monotonic() - start
                self._count_nonfinite(step.ok, step.nll, runlog)
                meter.update(step)
                if s.step % t.valid_every == 0:
                    result = self.after_validation(self.validate())
                    runlog.write(result)
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


def train(cfg: Config, out_dir: str | Path, resume: bool = False, log=print, ctx=None, init: str | None = None,
          explicit: frozenset[str] = frozenset()) -> dict:
    """Train as configured, writing ``out_dir/{best,last}.pt`` and ``out_dir/log.jsonl``; ``init``:
    from that model's weights (training/adapt.py)."""
    return Trainer(cfg, out_dir, resume=resume, log=log, ctx=ctx, init=init, explicit=explicit).run()
