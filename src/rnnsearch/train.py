"""Training: teacher forcing, periodic validation (loss, perplexity, BLEU), early stopping on
dev BLEU, best/last checkpoints, a JSONL log, and ``--resume`` that continues the same run."""
from __future__ import annotations

import dataclasses
import json
import math
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from . import __version__, checkpoint
from .batching import epoch_plan, make_batch
from .config import Config, ConfigError, to_dict
from .data import corpus_file, filter_pairs, read_parallel
from .evaluate import corpus_bleu
from .model import build_model
from .tokenize import TextCodec, build_codecs
from .translator import Translator


class TrainError(RuntimeError):
    """Training cannot start or continue; the message says why."""


@dataclass
class Corpus:
    src_ids: list[list[int]]
    tgt_ids: list[list[int]]

    @property
    def src_lens(self) -> np.ndarray:
        return np.array([len(s) for s in self.src_ids])

    @property
    def tgt_lens(self) -> np.ndarray:
        return np.array([len(t) for t in self.tgt_ids])


@dataclass
class TrainState:
    step: int = 0
    epoch: int = 0
    batch_index: int = 0          # next minibatch of this epoch's plan
    tgt_tokens: int = 0           # target tokens trained on, cumulative
    elapsed_s: float = 0.0        # wall time in the training loop, cumulative over resumes
    best_bleu: float = -1.0
    best_step: int = 0
    bad_evals: int = 0            # validations since the best one
    last_valid_step: int = -1


def load_corpora(cfg: Config, log, codecs=None):
    """Read, tokenise and filter the training split; read the dev split. Builds the
    vocabularies unless ``codecs`` (from a checkpoint) are given."""
    d = cfg.data
    src_lines, tgt_lines = read_parallel(corpus_file(d.dir, d.train, d.src_lang),
                                         corpus_file(d.dir, d.train, d.tgt_lang))
    if d.max_train_pairs and len(src_lines) > d.max_train_pairs:
        log(f"using the first {d.max_train_pairs} of {len(src_lines)} training pairs (data.max_train_pairs)")
        src_lines, tgt_lines = src_lines[: d.max_train_pairs], tgt_lines[: d.max_train_pairs]
    if codecs is None:
        src_codec, tgt_codec, src_units, tgt_units = build_codecs(cfg.vocab, d, src_lines, tgt_lines)
    else:
        src_codec, tgt_codec = codecs
        src_units = [src_codec.units(t) for t in src_lines]
        tgt_units = [tgt_codec.units(t) for t in tgt_lines]
    keep, report = filter_pairs("train", src_units, tgt_units, d.max_len)
    log(report.summary())
    train = Corpus([src_codec.vocab.encode(src_units[i]) for i in keep],
                   [tgt_codec.vocab.encode(tgt_units[i]) for i in keep])
    dev_src, dev_ref = read_parallel(corpus_file(d.dir, d.dev, d.src_lang), corpus_file(d.dir, d.dev, d.tgt_lang))
    dev_keep, dev_report = filter_pairs("dev", [s.split() for s in dev_src], [t.split() for t in dev_ref], None)
    log(dev_report.summary())
    dev = ([dev_src[i] for i in dev_keep], [dev_ref[i] for i in dev_keep])
    log(f"vocabulary: {len(src_codec.vocab)} {d.src_lang} / {len(tgt_codec.vocab)} {d.tgt_lang} "
        f"({cfg.vocab.mode}); {len(train.src_ids)} training pairs, {len(dev[0])} dev pairs")
    return src_codec, tgt_codec, train, dev


def make_optimizer(train_cfg, model) -> torch.optim.Optimizer:
    if train_cfg.optimizer == "adadelta":
        return torch.optim.Adadelta(model.parameters(), lr=train_cfg.lr, rho=train_cfg.rho, eps=train_cfg.eps)
    return torch.optim.Adam(model.parameters(), lr=train_cfg.lr)


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def dev_loss(model, corpus: Corpus, batch_size: int = 64) -> tuple[float, int]:
    """Mean per-token negative log-likelihood on ``corpus`` (teacher forcing)."""
    was_training = model.training
    model.eval()
    order = np.argsort(corpus.tgt_lens, kind="stable")
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            b = make_batch([corpus.src_ids[i] for i in idx], [corpus.tgt_ids[i] for i in idx])
            nll, n = model.loss(b.src, b.src_mask, b.tgt_in, b.tgt_out)
            total, tokens = total + float(nll), tokens + n
    model.train(was_training)
    return total / max(tokens, 1), tokens


def _rng_state() -> dict:
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state(), "python": random.getstate(),
            "numpy": [kind, keys.tolist(), pos, has_gauss, cached]}


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(tuple(state["python"][:1]) + (tuple(state["python"][1]),) + tuple(state["python"][2:]))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))


def check_resumable(cfg: Config, saved: dict, path: Path) -> None:
    """The model, vocabulary and data of a resumed run must be those of the checkpoint."""
    now = to_dict(cfg)
    for section in ("model", "vocab", "data"):
        for key, value in saved[section].items():
            if now[section].get(key) != value:
                raise ConfigError(f"{section}.{key}: {now[section].get(key)!r} differs from the "
                                  f"checkpoint {path} ({value!r}); a resumed run must keep it")


class Trainer:
    def __init__(self, cfg: Config, out_dir: str | Path, resume: bool = False, log=print):
        self.cfg, self.out, self.log = cfg, Path(out_dir), log
        t = cfg.train
        if t.threads:
            torch.set_num_threads(t.threads)
        payload = None
        if resume:
            payload = checkpoint.load(self.out / "last.pt")
            check_resumable(cfg, payload["config"], self.out / "last.pt")
            codecs = (TextCodec.from_state(payload["src_codec"]), TextCodec.from_state(payload["tgt_codec"]))
        elif (self.out / "last.pt").exists():
            raise TrainError(f"{self.out} already holds a run (last.pt): add --resume to continue it, "
                             "or choose another --out")
        else:
            codecs = None
        random.seed(t.seed)
        np.random.seed(t.seed)
        self.src_codec, self.tgt_codec, self.train_data, self.dev = load_corpora(cfg, log, codecs)
        self.dev_corpus = Corpus([self.src_codec.encode(s) for s in self.dev[0]],
                                 [self.tgt_codec.encode(r) for r in self.dev[1]])
        self.model = build_model(cfg.model, len(self.src_codec.vocab), len(self.tgt_codec.vocab), seed=t.seed)
        self.optimizer = make_optimizer(t, self.model)
        self.state = TrainState()
        if payload is not None:
            self.model.load_state_dict(payload["model"])
            self.optimizer.load_state_dict(payload["optimizer"])
            self.state = TrainState(**payload["train_state"])
            _set_rng_state(payload["rng"])
            log(f"resuming {self.out / 'last.pt'} at step {self.state.step} (epoch {self.state.epoch})")
        self.translator = Translator(self.model, self.src_codec, self.tgt_codec, cfg.decode)
        log(f"model {cfg.model.arch}: {count_parameters(self.model):,} parameters")
        self._stop_signal = None

    # -- checkpoints -------------------------------------------------------------------------
    def _payload(self) -> dict:
        return {"config": to_dict(self.cfg), "src_codec": self.src_codec.to_state(),
                "tgt_codec": self.tgt_codec.to_state(), "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(), "train_state": dataclasses.asdict(self.state),
                "rng": _rng_state(), "meta": {"rnnsearch": __version__, "torch": str(torch.__version__),
                                              "parameters": count_parameters(self.model)}}

    def save(self, name: str) -> Path:
        path = self.out / name
        checkpoint.save(path, self._payload())
        return path

    # -- one update and validation -----------------------------------------------------------
    def train_step(self, idx) -> tuple[float, int]:
        data = self.train_data
        batch = make_batch([data.src_ids[i] for i in idx], [data.tgt_ids[i] for i in idx])
        nll, n = self.model.loss(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)
        self.optimizer.zero_grad(set_to_none=True)
        (nll / n).backward()
        if self.cfg.train.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.train.clip)
        self.optimizer.step()
        return float(nll.detach()), n

    def validate(self) -> dict:
        t = self.cfg.train
        loss, _ = dev_loss(self.model, self.dev_corpus)
        n = t.valid_max_sentences or len(self.dev[0])
        hyps = [h.text for h in self.translator.translate(self.dev[0][:n], beam=t.valid_beam)]
        bleu, _ = corpus_bleu(hyps, self.dev[1][:n])
        s = self.state
        s.last_valid_step = s.step
        improved = bleu > s.best_bleu
        if improved:
            s.best_bleu, s.best_step, s.bad_evals = bleu, s.step, 0
        else:
            s.bad_evals += 1
        self.save("last.pt")
        if improved:
            self.save("best.pt")
        return {"dev_loss": loss, "dev_ppl": math.exp(min(loss, 50.0)), "dev_bleu": bleu,
                "best_bleu": s.best_bleu, "best_step": s.best_step}

    def _stop_reason(self) -> str | None:
        t, s = self.cfg.train, self.state
        if self._stop_signal:
            return f"stopped by {self._stop_signal}"
        if t.max_steps and s.step >= t.max_steps:
            return f"reached train.max_steps={t.max_steps}"
        if t.max_minutes and s.elapsed_s >= 60 * t.max_minutes:
            return f"reached train.max_minutes={t.max_minutes}"
        if t.max_epochs and s.epoch >= t.max_epochs:
            return f"reached train.max_epochs={t.max_epochs}"
        if t.patience and s.bad_evals >= t.patience:
            return f"early stopping: dev BLEU did not improve for {t.patience} validations"
        return None

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> dict:
        self.out.mkdir(parents=True, exist_ok=True)
        previous = self._install_signal_handlers()
        try:
            with open(self.out / "log.jsonl", "a", encoding="utf-8") as log_file:
                reason = self._loop(log_file)
                if self.state.last_valid_step != self.state.step and not self._stop_signal:
                    self._write(log_file, {"step": self.state.step, **self.validate()})
                else:
                    self.save("last.pt")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        s = self.state
        self.log(f"{reason}. step {s.step}, {s.elapsed_s / 60:.1f} min; best dev BLEU {s.best_bleu:.2f} "
                 f"at step {s.best_step}; checkpoints in {self.out}")
        return {"reason": reason, **dataclasses.asdict(s)}

    def _loop(self, log_file) -> str:
        t, s, data = self.cfg.train, self.state, self.train_data
        start = time.monotonic() - s.elapsed_s
        window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
        bar = tqdm(total=t.max_steps or None, initial=s.step, disable=not t.progress, unit="step",
                   dynamic_ncols=True)
        reason = self._stop_reason()
        src_lens, tgt_lens = data.src_lens, data.tgt_lens
        while reason is None:
            plan = epoch_plan(src_lens, tgt_lens, t, t.seed, s.epoch)
            while s.batch_index < len(plan) and reason is None:
                loss, n = self.train_step(plan[s.batch_index])
                s.batch_index, s.step, s.tgt_tokens = s.batch_index + 1, s.step + 1, s.tgt_tokens + n
                window_loss, window_tokens = window_loss + loss, window_tokens + n
                s.elapsed_s = time.monotonic() - start
                bar.update(1)
                if s.step % t.log_every == 0:
                    rate = window_tokens / max(time.monotonic() - window_start, 1e-9)
                    self._write(log_file, {"step": s.step, "epoch": s.epoch, "elapsed_s": round(s.elapsed_s, 2),
                                           "tgt_tokens": s.tgt_tokens, "loss": window_loss / window_tokens,
                                           "tok_per_s": round(rate, 1)})
                    left = f"{t.max_minutes - s.elapsed_s / 60:.1f}" if t.max_minutes else "-"
                    bar.set_postfix(loss=f"{window_loss / window_tokens:.3f}", tok_s=f"{rate:.0f}",
                                    min=f"{s.elapsed_s / 60:.1f}", min_left=left)
                    window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
                if s.step % t.valid_every == 0:
                    result = self.validate()
                    self._write(log_file, {"step": s.step, "epoch": s.epoch, "elapsed_s": round(s.elapsed_s, 2),
                                           "tgt_tokens": s.tgt_tokens, **result})
                    bar.write(f"step {s.step}: dev loss {result['dev_loss']:.3f} ppl {result['dev_ppl']:.2f} "
                              f"BLEU {result['dev_bleu']:.2f} (best {s.best_bleu:.2f} at {s.best_step})")
                reason = self._stop_reason()
            if s.batch_index >= len(plan):
                s.epoch, s.batch_index = s.epoch + 1, 0
                reason = reason or self._stop_reason()
        bar.close()
        return reason

    def _write(self, log_file, entry: dict) -> None:
        entry.setdefault("elapsed_s", round(self.state.elapsed_s, 2))
        entry.setdefault("tgt_tokens", self.state.tgt_tokens)
        log_file.write(json.dumps(entry) + "\n")
        log_file.flush()

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


def train(cfg: Config, out_dir: str | Path, resume: bool = False, log=print) -> dict:
    """Train as configured, writing ``out_dir/{best,last}.pt`` and ``out_dir/log.jsonl``."""
    return Trainer(cfg, out_dir, resume=resume, log=log).run()
