"""``rnnsearch train CONFIG --init MODEL``: a new run that starts from a trained model (a release
name, a release folder or a checkpoint), to adapt it to the config's data.

The new run takes the parent's weights, architecture and vocabularies; the config gives the data,
the optimiser, the schedule, the budget and validation (a fresh optimiser, from update 0). So the
config's ``model`` section (but ``model.dropout``, a training choice), its ``vocab`` section and
``data.tokenizer`` are the parent's: values the config file writes otherwise are replaced, and the
run says which; a ``--set`` that asks for another value is refused, naming the key, as is a config
whose languages are not the parent's. The checkpoints record the parent (``meta.init``), a release
made from them names it, and ``--resume`` continues such a run as any other. What the parent's
translations had comes along: its alignment head (trained for the parent's weights, and so marked:
``rnnsearch train-align-head`` trains one for the new weights) and, from a release, its ``<unk>``
replacement (``meta.init.replace_unk``, which the run's checkpoints then do by default). With ``data.prepared``,
the dataset is prepared with the parent's vocabularies (``rnnsearch prepare CONFIG --init MODEL``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rnnsearch import checkpoint
from rnnsearch.config import Config, ConfigError, from_dict, to_dict
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.decoding import pretrained

TRAINING_CHOICES = {("model", "dropout")}  # model keys that are the new run's to choose
LANGUAGES = (("data", "src_lang"), ("data", "tgt_lang"))


@dataclass(frozen=True)
class Parent:
    """The model a run starts from."""
    name: str       # as the user gave it
    path: Path      # its weights file
    payload: dict   # the loaded checkpoint


def load_parent(spec: str) -> Parent:
    """A release name, release folder or checkpoint, loaded (a clear error if it is none)."""
    path = pretrained.resolve(spec)
    return Parent(str(spec), Path(path), checkpoint.load(path))


def inherited_keys(cfg: Config) -> list[tuple[str, str]]:
    """The (section, key) pairs a run started with --init takes from its parent."""
    model = [("model", k) for k in type(cfg.model).model_fields if ("model", k) not in TRAINING_CHOICES]
    return model + [("vocab", k) for k in type(cfg.vocab).model_fields] + [("data", "tokenizer")]


def adapt_config(cfg: Config, parent_config: dict, explicit: set[str] = frozenset(),
                 parent: str = "the parent") -> tuple[Config, list[str]]:
    """``cfg`` with ``parent_config``'s architecture and vocabulary, and the keys it replaced
    (``section.key: ours -> parent's``). ``explicit``: the dotted keys given with ``--set``; one of
    them that would change the parent is refused (ConfigError), as are other languages."""
    saved = from_dict(parent_config)  # an older checkpoint's missing keys take their defaults
    ours, theirs = to_dict(cfg), to_dict(saved)
    for section, key in LANGUAGES:
        if ours[section][key] != theirs[section][key]:
            raise ConfigError(f"{section}.{key}: {ours[section][key]!r}, but {parent} translates "
                              f"{saved.data.src_lang} -> {saved.data.tgt_lang}: --init adapts a model to new data "
                              "in its own languages")
    refused, replaced = [], []
    for section, key in inherited_keys(cfg):
        mine, its = ours[section][key], theirs[section][key]
        if mine == its:
            continue
        dotted = f"{section}.{key}"
        (refused if dotted in explicit else replaced).append(f"{dotted}: {mine!r} -> {its!r}")
        ours[section][key] = its
    if refused:
        raise ConfigError(f"--set {', '.join(r.split(':')[0] for r in refused)}: --init takes the architecture and "
                          f"vocabulary of {parent} ({'; '.join(refused)}); leave these keys out")
    return from_dict(ours), replaced


def start_from(init: str | None, resume: bool, cfg: Config, explicit: frozenset[str], log) -> tuple[Parent | None, Config]:
    """The model --init names, loaded, and ``cfg`` with its architecture and vocabularies (None
    and ``cfg`` itself without --init)."""
    if init is None:
        return None, cfg
    if resume:
        raise ConfigError("--init starts a new run from a model and --resume continues a run: give one of them "
                          "(a run started with --init resumes with --resume alone)")
    parent = load_parent(init)
    cfg, replaced = adapt_config(cfg, parent.payload["config"], explicit, init)
    if replaced:
        log(f"--init {init}: the architecture and vocabularies are its own, so these config values are not used: "
            f"{'; '.join(replaced)}")
    return parent, cfg


def parent_codecs(parent: Parent) -> tuple[TextCodec, TextCodec]:
    """The parent's source and target vocabularies (with their tokeniser)."""
    return tuple(TextCodec.from_state(parent.payload[key]) for key in ("src_codec", "tgt_codec"))


def parent_record(parent: Parent) -> dict:
    """What a checkpoint keeps of its parent (``meta.init``): where it came from, and ``replace_unk``,
    the <unk> replacement its translations had by default (a release with attention and a word
    vocabulary: ``copy``; None otherwise)."""
    state = parent.payload.get("train_state") or {}
    cfg = parent.payload.get("config") or {}
    replaces = pretrained.release_name(parent.path) is not None and \
        cfg.get("model", {}).get("arch", "rnnsearch") == "rnnsearch" and cfg.get("vocab", {}).get("mode", "word") == "word"
    return {"name": parent.name, "file": str(parent.path), "updates": state.get("step"),
            "core_hours": round(state.get("cpu_s", 0) / 3600, 2) if state.get("cpu_s") else None,
            "data": cfg.get("data", {}).get("dir"), "replace_unk": "copy" if replaces else None}


def inherited_head(parent: Parent, log) -> dict | None:
    """The parent's alignment head, marked as trained for the parent's weights (``record.for_parent``),
    with one line saying so and how to train one for the new weights; None if it has none."""
    head = parent.payload.get("align_head")
    if not head:
        return None
    log(f"--init {parent.name}: its alignment head comes along (tags, slots and <unk> are placed by it), trained "
        "for its weights, not these: once adapted, train one for them with `rnnsearch train-align-head "
        "OUT/best.pt --links LINKS --out NEW.pt`")
    return {**head, "record": {**(head.get("record") or {}), "for_parent": parent.name}}
