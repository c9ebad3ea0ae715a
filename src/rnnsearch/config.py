"""Configuration: YAML -> frozen pydantic models, with dotted overrides (``--set train.lr=3e-4``).

Every key is declared once, here, with its default and its meaning. Unknown keys, wrong types and impossible
values are errors that name the key's dotted path (``train.lr``) and the file or the ``--set`` (each bad one),
raised before any work starts. Checkpoints keep the resolved config as a plain dict; keys added later take
their defaults when an older checkpoint is read."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from rnnsearch.errors import UserError


class ConfigError(UserError, ValueError):
    """A configuration problem, naming the offending dotted key."""


def _number(value: Any) -> float:
    try:
        number = float("x" if isinstance(value, bool) or not isinstance(value, (int, float, str)) else value)
        return number if number - number == 0 else float("x")  # not inf, nor nan: a penalty of 1e999 was taken
    except ValueError:
        raise ValueError(f"expected a finite number, got {value!r}") from None


def _text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"expected a string, got {value!r}")
    return str(value)


Number = Annotated[float, BeforeValidator(_number)]
Text = Annotated[str, BeforeValidator(_text)]


class Section(BaseModel):
    """A config section: immutable, and unknown keys are errors."""
    model_config = ConfigDict(frozen=True, extra="forbid")


class DataConfig(Section):
    dir: Text = Field("data", description="directory of {split}.{lang} files, plain or .gz")
    src_lang: Text = "en"
    tgt_lang: Text = "fr"
    train: Text = "train"
    dev: Text = "val"
    test: Text = "test"
    tokenizer: Literal["moses", "space"] = "moses"
    max_len: StrictInt = Field(50, gt=0, description="training pairs longer than this (in units) are filtered")
    max_train_pairs: StrictInt = Field(0, ge=0, description="use the first N training pairs; 0 = all")
    token_cache: Text = Field("", description="directory caching Moses-tokenised corpora by content; '' = off")
    prepared: Text = Field("", description="train on this `rnnsearch prepare` dataset (memory-mapped); '' = the text files")
    slot_rate: Number = Field(0.0, ge=0, le=1, description="sentencepiece: pairs whose shared items become slots")


class VocabConfig(Section):
    mode: Literal["word", "sentencepiece"] = Field("word", description="word: the paper's shortlist")
    size: StrictInt = Field(30000, gt=0, description="shortlist size per language, or sentencepiece pieces")
    joint: StrictBool = Field(False, description="sentencepiece: one model for both languages")
    sp_type: Literal["bpe", "unigram"] = "bpe"
    min_freq: StrictInt = Field(1, gt=0, description="word mode: drop rarer words from the shortlist")
    sp_model: Text = Field("", description="sentencepiece: use this trained .model file (joint)")


class ModelConfig(Section):
    arch: Literal["rnnsearch", "rnnencdec"] = "rnnsearch"
    emb: StrictInt = Field(620, gt=0, description="m")
    enc_hidden: StrictInt = Field(1000, gt=0, description="n, per direction")
    dec_hidden: StrictInt = Field(1000, gt=0, description="n")
    att: StrictInt = Field(1000, gt=0, description="n'")
    maxout: StrictInt = Field(500, gt=0, description="l")
    readout_state: Literal["current", "previous"] = Field("current", description="output reads s_i or s_{i-1} (appendix)")
    encoder_cell: Literal["paper", "fused"] = Field("paper", description="paper: U(r*h); fused: torch.nn.GRU, r*(U h)")
    decoder_cell: Literal["paper", "conditional"] = Field("paper", description="conditional: cGRU (model/conditional.py)")
    readout: Literal["maxout", "tanh"] = Field("maxout", description="deep output: maxout pairs, or tanh (of size maxout)")
    init_state: Literal["backward", "mean"] = Field("backward", description="s_0 from the backward h_1, or mean_j h_j")
    dropout: Number = Field(0.0, ge=0, lt=1)
    init: Literal["paper", "xavier"] = "paper"
    tied_output: StrictBool = Field(False, description="W_o is the target embedding E (Press & Wolf); needs maxout = emb")


class TrainConfig(Section):
    seed: StrictInt = 1234
    optimizer: Literal["adadelta", "adam"] = "adadelta"
    lr: Number = Field(1.0, gt=0)
    rho: Number = Field(0.95, description="Adadelta's decay, in (0, 1)")
    eps: Number = Field(1e-6, ge=0)
    clip: Number = Field(1.0, ge=0, description="gradient L2 norm; 0 = off")
    label_smoothing: Number = Field(0.0, ge=0, lt=1, description="eps: train on (1 - eps) NLL + eps x the "
                                    "mean -log p over the vocabulary (not in the paper: 0); dev loss stays NLL")
    loss_scale: Literal["token", "sentence"] = Field(
        "token", description="token: summed NLL / target tokens; sentence: summed over time, averaged over "
                             "the minibatch's sentences (GroundHog's cost)")
    batch_mode: Literal["sentences", "tokens"] = "sentences"
    batch_size: StrictInt = Field(80, gt=0, description="sentences per minibatch")
    batch_tokens: StrictInt = Field(2000, gt=0, description="target tokens per minibatch (batch_mode: tokens)")
    sort_pool: StrictInt = Field(20, gt=0, description="fetch sort_pool * batch_size pairs, sort, split")
    max_steps: StrictInt = Field(0, ge=0, description="0 = no limit")
    max_epochs: StrictInt = Field(0, ge=0)
    max_minutes: Number = Field(0.0, ge=0, description="wall time of the training loop, over resumes")
    max_core_hours: Number = Field(0.0, ge=0, description="CPU time of the training loop (all threads, ranks), over resumes")
    log_every: StrictInt = Field(50, gt=0)
    valid_every: StrictInt = Field(500, gt=0)
    valid_beam: StrictInt = Field(1, gt=0)
    valid_max_sentences: StrictInt = Field(0, ge=0, description="0 = the whole dev set")
    patience: StrictInt = Field(10, ge=0, description="validations without dev BLEU gain; 0 = off")
    threads: StrictInt = Field(0, ge=0, description="torch threads; 0 = leave as is")
    progress: StrictBool = True
    max_positions: StrictInt = Field(0, ge=0, description="split batches over this many padded target positions; 0 = never")
    save_every: StrictInt = Field(0, ge=0, description="also write last.pt every N updates; 0 = at validations")
    keep_last: StrictInt = Field(0, ge=0, description="also keep the last N saves as step-N.pt; 0 = none")
    max_nonfinite: StrictInt = Field(20, gt=0, description="stop after this many non-finite updates in a row")
    lr_decay: Number = Field(1.0, gt=0, le=1, description="multiply the rate by this when dev BLEU stalls; 1 = off")
    lr_decay_patience: StrictInt = Field(0, ge=0, description="validations without gain tolerated before a decay")
    warmup: StrictInt = Field(0, ge=0, description="lr * n / N over the first N updates, then lr * sqrt(N / n); 0 = off")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: CUDA when present")
    bf16: StrictBool = Field(False, description="bfloat16 autocast for the products (loss in float32)")
    deferred: StrictBool = Field(True, description="the recurrences' weight gradients in one product per pass "
                                                   "(model/deferred.py; on a CPU the encoder as a loop of its cell, "
                                                   "Encoder.fused_loop)")
    tensorboard: StrictBool = Field(False, description="also write TensorBoard scalars to RUN/tensorboard")
    guided_alignment: Text = Field("", description="Pharaoh links (i-j, 0-based, source word first), one line per "
                                   "training line: a cost on alpha_ij beside the NLL (Chen et al. 2016); '' = off")
    guided_alignment_weight: Number = Field(0.1, ge=0, description="the alignment cost's weight in the loss")
    guided_alignment_cost: Literal["ce", "mse"] = Field("ce", description="ce: -sum_j A_ij log alpha_ij per "
                                                        "target word; mse: sum_j (alpha_ij - A_ij)^2 / 2")


class DecodeConfig(Section):
    """The model's search defaults (decoding/settings.py: SearchSettings takes each unset field from here)."""
    beam: StrictInt = Field(5, gt=0, description="beam size (1 = greedy search)")
    n_best: StrictInt = Field(1, gt=0, description="hypotheses per sentence (at most the beam; draws when sampling)")
    length_penalty: Number = Field(0.0, ge=0, description="GNMT alpha; 0 = raw log-probability")
    coverage_penalty: Number = Field(0.0, ge=0, description="GNMT beta: rank by + beta sum_j log min(sum_i a_ij, 1)")
    max_len_ratio: Number = Field(2.0, gt=0, description="output at most ratio * source length + 5 tokens")
    batch_size: StrictInt = Field(32, gt=0, description="sentences decoded at once")
    max_src_len: StrictInt = Field(256, gt=0, description="longer inputs are cut to this many units, with a warning")


class Config(Section):
    name: Text = "run"
    data: DataConfig = DataConfig()
    vocab: VocabConfig = VocabConfig()
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    decode: DecodeConfig = DecodeConfig()


def _check(cfg: Config) -> Config:
    """Rules between keys, naming the dotted key."""
    if cfg.train.optimizer == "adadelta" and not 0 < cfg.train.rho < 1:
        raise ConfigError(f"train.rho: must be in (0, 1), got {cfg.train.rho}")
    v = cfg.vocab
    for key, value in ("vocab.sp_model", v.sp_model), ("vocab.joint", v.joint), ("data.slot_rate", cfg.data.slot_rate):
        if value and v.mode != "sentencepiece":  # (slots: a word model copies its own <unk>s, data/slotting.py)
            raise ConfigError(f"{key}: only meaningful with vocab.mode: sentencepiece")
    for key, value, what in ("train.guided_alignment", cfg.train.guided_alignment, "attention to guide"), \
            ("data.slot_rate", cfg.data.slot_rate, "an alignment to place slots by"):
        if value and cfg.model.arch != "rnnsearch":
            raise ConfigError(f"{key}: only an rnnsearch model has {what}")
    if cfg.train.guided_alignment and cfg.vocab.mode != "word" and not cfg.vocab.sp_model:
        raise ConfigError("train.guided_alignment: links index units: vocab.mode word, or a fixed vocab.sp_model's pieces")
    if cfg.train.warmup and cfg.train.lr_decay < 1:
        raise ConfigError("train.warmup: sets the rate at every update, so train.lr_decay must stay 1")
    return cfg


def _known(loc: tuple) -> str:
    model: type[BaseModel] = Config
    for part in loc[:-1]:
        model = model.model_fields[part].annotation
    return ", ".join(sorted(model.model_fields))


def error_message(error: dict, key: str | None = None) -> str:
    """One pydantic error as ``dotted.key: what is wrong`` (``key``: another name for the key)."""
    loc = tuple(str(p) for p in error["loc"])
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    key = key or ".".join(loc) or "config"
    if kind == "extra_forbidden":
        return f"{key}: unknown key (known: {_known(loc)})"
    if kind == "literal_error":
        return f"{key}: {value!r} is not one of {ctx.get('expected', '').replace(' or ', ', ').replace(chr(39), '')}"
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if kind in bounds:
        return f"{key}: must be {bounds[kind]} {next(iter(ctx.values()))}, got {value!r}"
    expected = {"int_type": "an integer", "bool_type": "true/false", "string_type": "a string",
                "model_type": "a mapping", "dict_type": "a mapping", "float_type": "a number"}
    if kind in expected:
        got = type(value).__name__ if kind in ("model_type", "dict_type") else repr(value)
        return f"{key}: expected {expected[kind]}, got {got}"
    return f"{key}: {error['msg'].removeprefix('Value error, ')}"


def from_dict(raw: dict | None) -> Config:
    """A validated Config from a plain dict (a YAML file's, or a checkpoint's)."""
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"config: expected a mapping, got {type(raw).__name__}")
    try:
        cfg = Config.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError("; ".join(error_message(e) for e in exc.errors())) from None
    return _check(cfg)


def to_dict(cfg: Config) -> dict:
    return cfg.model_dump()


def replace(section: Section, **changes) -> Section:
    """A copy of a section (or the whole config) with ``changes``, validated again."""
    return type(section).model_validate({**section.model_dump(), **changes})


IDENTITY = ("model", "vocab", "data")  # the sections that make a model what it is
NOT_IDENTITY = {("data", "token_cache"), ("data", "prepared")}  # the same pairs, cached or prepared


def first_difference(a: dict, b: dict) -> tuple[str, Any, Any] | None:
    """The first key of the IDENTITY sections on which two config dicts (a checkpoint's, a run's)
    differ, with both values; None when they describe the same model, vocabulary and data. Keys
    missing from an older dict take their defaults."""
    defaults = Config().model_dump()
    for section in IDENTITY:
        for key in defaults[section]:
            if (section, key) in NOT_IDENTITY:
                continue
            x, y = ((d.get(section) or {}).get(key, defaults[section][key]) for d in (a, b))
            if x != y:
                return f"{section}.{key}", x, y
    return None


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
        with contextlib.suppress(ValueError):
            parsed = float(parsed)
    return path, parsed


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    raw = dict(raw)
    for text in overrides:
        path, value = parse_override(text)
        node = raw
        for part in path[:-1]:
            child = node.get(part)
            node[part] = node = dict(child) if isinstance(child, dict) else {}
        node[path[-1]] = value
    return raw


def load(path: str | Path, overrides: list[str] | None = None) -> Config:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    if not isinstance(raw, dict) or not raw:  # empty: every value the default (the paper's sizes), not what one means
        raise ConfigError(f"{path}: top level must be a mapping" if raw else f"{path}: holds no settings; start from one "
                          "of configs/*.yaml (configs/demo.yaml: a small model in minutes)")
    try:
        from_dict(raw)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    problems = []
    for text in overrides or []:  # each --set on the file's values: every bad one is named (not the file)
        try:
            from_dict(tried := apply_overrides(raw, [text]))
            raw = tried
        except ConfigError as exc:
            problems.append(f"--set {text}: {str(exc).removeprefix(f'--set {text!r}: ')}")
    if problems:
        raise ConfigError("; ".join(problems))
    return from_dict(raw)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: where (line:column, 1-based) and what."""
    mark, context = getattr(exc, "problem_mark", None), getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + (getattr(exc, "problem", None) or str(exc).splitlines()[0]) + (f" ({context})" if context else "")
