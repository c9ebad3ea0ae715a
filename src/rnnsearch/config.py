"""Configuration: YAML -> frozen dataclasses, with dotted overrides.

Unknown keys, wrong types and impossible values are errors that name the key's
dotted path (``train.lr``), raised before any work starts.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration problem, naming the offending dotted key."""


@dataclass(frozen=True)
class DataConfig:
    dir: str = "data"
    src_lang: str = "en"
    tgt_lang: str = "fr"
    train: str = "train"
    dev: str = "val"
    test: str = "test"
    tokenizer: str = "moses"          # moses | space
    max_len: int = 50                 # train pairs longer than this (in tokens) are filtered
    max_train_pairs: int = 0          # 0 = all
    token_cache: str = ""             # directory caching Moses-tokenised corpora by content ("" = off)


@dataclass(frozen=True)
class VocabConfig:
    mode: str = "word"                # word (paper shortlist) | sentencepiece
    size: int = 30000                 # shortlist size per language, or sentencepiece pieces
    joint: bool = False               # sentencepiece: one model for both languages
    sp_type: str = "bpe"              # bpe | unigram
    min_freq: int = 1                 # word mode: drop rarer words from the shortlist
    sp_model: str = ""                # sentencepiece: use this trained .model file (joint) instead of training one


@dataclass(frozen=True)
class ModelConfig:
    arch: str = "rnnsearch"           # rnnsearch | rnnencdec
    emb: int = 620                    # m
    enc_hidden: int = 1000            # n, per direction
    dec_hidden: int = 1000            # n
    att: int = 1000                   # n'
    maxout: int = 500                 # l
    readout_state: str = "current"    # current: s_i (main text) | previous: s_{i-1} (appendix)
    encoder_cell: str = "paper"       # paper: U(r*h) | fused: torch.nn.GRU, r*(U h)
    dropout: float = 0.0
    init: str = "paper"               # paper | xavier


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 1234
    optimizer: str = "adadelta"       # adadelta | adam
    lr: float = 1.0
    rho: float = 0.95
    eps: float = 1e-6
    clip: float = 1.0                 # gradient L2 norm; 0 = off
    batch_mode: str = "sentences"     # sentences | tokens
    batch_size: int = 80              # sentences per minibatch
    batch_tokens: int = 2000          # target tokens per minibatch (batch_mode: tokens)
    sort_pool: int = 20               # fetch sort_pool * batch_size pairs, sort, split
    max_steps: int = 0                # 0 = no limit
    max_epochs: int = 0
    max_minutes: float = 0.0
    max_core_hours: float = 0.0       # CPU time of the training loop (all threads, all ranks), over resumes
    log_every: int = 50
    valid_every: int = 500
    valid_beam: int = 1
    valid_max_sentences: int = 0      # 0 = whole dev set
    patience: int = 10                # validations without dev BLEU gain; 0 = off
    threads: int = 0                  # torch threads; 0 = leave as is
    progress: bool = True
    max_positions: int = 0            # split minibatches above this many padded target positions; 0 = never
    save_every: int = 0               # also write last.pt every N updates; 0 = at validations only
    max_nonfinite: int = 20           # stop after this many non-finite updates in a row
    lr_decay: float = 1.0             # multiply the rate by this when dev BLEU stalls; 1 = off
    lr_decay_patience: int = 0        # validations without gain tolerated before a decay
    device: str = "auto"              # auto (CUDA when present) | cpu | cuda
    bf16: bool = False                # bfloat16 autocast for the forward pass (loss in float32)
    loss_scale: str = "token"         # token: NLL / target tokens | sentence: NLL summed over time / sentences (GroundHog)


@dataclass(frozen=True)
class DecodeConfig:
    beam: int = 5
    length_penalty: float = 0.0       # GNMT alpha; 0 = raw log-probability
    max_len_ratio: float = 2.0        # output at most ratio * source length + 5 tokens
    batch_size: int = 32              # sentences decoded at once
    max_src_len: int = 256            # longer inputs are cut to this many units, with a warning


@dataclass(frozen=True)
class Config:
    name: str = "run"
    data: DataConfig = field(default_factory=DataConfig)
    vocab: VocabConfig = field(default_factory=VocabConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)


CHOICES = {
    "data.tokenizer": ("moses", "space"),
    "vocab.mode": ("word", "sentencepiece"),
    "vocab.sp_type": ("bpe", "unigram"),
    "model.arch": ("rnnsearch", "rnnencdec"),
    "model.readout_state": ("current", "previous"),
    "model.encoder_cell": ("paper", "fused"),
    "model.init": ("paper", "xavier"),
    "train.optimizer": ("adadelta", "adam"),
    "train.batch_mode": ("sentences", "tokens"),
    "train.device": ("auto", "cpu", "cuda"),
    "train.loss_scale": ("token", "sentence"),
}
POSITIVE = {
    "data.max_len", "vocab.size", "vocab.min_freq", "model.emb", "model.enc_hidden",
    "model.dec_hidden", "model.att", "model.maxout", "train.lr", "train.batch_size",
    "train.batch_tokens", "train.sort_pool", "train.log_every", "train.valid_every",
    "train.valid_beam", "train.max_nonfinite", "train.lr_decay", "decode.beam",
    "decode.max_src_len", "decode.max_len_ratio", "decode.batch_size",
}
NON_NEGATIVE = {
    "data.max_train_pairs", "train.clip", "train.max_steps", "train.max_epochs",
    "train.max_minutes", "train.max_core_hours", "train.valid_max_sentences", "train.patience", "train.threads",
    "train.eps", "decode.length_penalty", "model.dropout", "train.save_every", "train.lr_decay_patience",
    "train.max_positions",
}


def _coerce(value: Any, typ: type, key: str) -> Any:
    if typ is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: expected true/false, got {value!r}")
    if typ is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: expected an integer, got {value!r}")
    if typ is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{key}: expected a number, got {value!r}")
    if typ is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise ConfigError(f"{key}: expected a string, got {value!r}")
    raise ConfigError(f"{key}: unsupported type {typ}")


_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


def _build(cls: type, raw: Any, prefix: str) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {type(raw).__name__}")
    known = {f.name: f for f in fields(cls)}
    for key in raw:
        if key not in known:
            where = f"{prefix}.{key}" if prefix else str(key)
            raise ConfigError(f"{where}: unknown key (known: {', '.join(sorted(known))})")
    values = {}
    for name, f in known.items():
        key = f"{prefix}.{name}" if prefix else name
        if dataclasses.is_dataclass(f.default_factory if f.default_factory is not dataclasses.MISSING else None):
            values[name] = _build(f.default_factory, raw.get(name), key)
        elif name in raw:
            values[name] = _coerce(raw[name], _TYPES[f.type], key)
    return cls(**values)


def validate(cfg: Config) -> Config:
    """Reject impossible values, naming the dotted key."""
    for section in ("data", "vocab", "model", "train", "decode"):
        sub = getattr(cfg, section)
        for f in fields(sub):
            key = f"{section}.{f.name}"
            value = getattr(sub, f.name)
            if key in CHOICES and value not in CHOICES[key]:
                raise ConfigError(f"{key}: {value!r} is not one of {', '.join(CHOICES[key])}")
            if key in POSITIVE and not value > 0:
                raise ConfigError(f"{key}: must be > 0, got {value!r}")
            if key in NON_NEGATIVE and value < 0:
                raise ConfigError(f"{key}: must be >= 0, got {value!r}")
    if cfg.model.dropout >= 1:
        raise ConfigError(f"model.dropout: must be < 1, got {cfg.model.dropout}")
    if cfg.train.optimizer == "adadelta" and not 0 < cfg.train.rho < 1:
        raise ConfigError(f"train.rho: must be in (0, 1), got {cfg.train.rho}")
    if cfg.train.lr_decay > 1:
        raise ConfigError(f"train.lr_decay: must be in (0, 1], got {cfg.train.lr_decay}")
    if cfg.vocab.sp_model and cfg.vocab.mode != "sentencepiece":
        raise ConfigError("vocab.sp_model: only meaningful with vocab.mode: sentencepiece")
    if cfg.vocab.mode == "word" and cfg.vocab.joint:
        raise ConfigError("vocab.joint: only meaningful with vocab.mode: sentencepiece")
    return cfg


def from_dict(raw: dict) -> Config:
    return validate(_build(Config, raw, ""))


def to_dict(cfg: Config) -> dict:
    return dataclasses.asdict(cfg)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``train.lr=3e-4`` -> (["train", "lr"], 0.0003), values parsed as YAML scalars."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected section.key=value")
    key, value = text.split("=", 1)
    path = key.strip().split(".")
    if not all(path):
        raise ConfigError(f"--set {text!r}: bad key {key!r}")
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    if isinstance(parsed, str):  # YAML 1.1 reads "3e-4" as a string
        try:
            parsed = float(parsed)
        except ValueError:
            pass
    return path, parsed


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    raw = dict(raw)
    for text in overrides:
        path, value = parse_override(text)
        node = raw
        for part in path[:-1]:
            child = node.get(part)
            child = dict(child) if isinstance(child, dict) else {}
            node[part] = child
            node = child
        node[path[-1]] = value
    return raw


def load(path: str | Path, overrides: list[str] | None = None) -> Config:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    try:
        return from_dict(apply_overrides(raw, overrides or []))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


__all__ = ["Config", "ConfigError", "DataConfig", "VocabConfig", "ModelConfig",
           "TrainConfig", "DecodeConfig", "load", "from_dict", "to_dict", "replace"]
