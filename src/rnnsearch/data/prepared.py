"""A prepared dataset (``rnnsearch prepare``; the layout is in data/prepare.py) as the trainer reads
it: the ids memory-mapped, only the lengths held, and a check that the dataset was prepared with
the settings of the config that trains on it."""
from __future__ import annotations

import base64
import hashlib
import json
import mmap
import os
from pathlib import Path

import numpy as np

from rnnsearch.config import Config, ConfigError
from rnnsearch.data import slotting
from rnnsearch.data.io import DataError
from rnnsearch.data.tokenize import TextCodec

FORMAT, VERSION = "rnnsearch-prepared", 1
MANIFEST = "manifest.json"
IDS = ("src.ids", "tgt.ids")
OFFSETS = ("src.offsets.npy", "tgt.offsets.npy")
LENGTHS = ("src.lengths.npy", "tgt.lengths.npy")
LINES = "lines.npy"
OPTIONAL = {"slot_rate": 0.0, "slot_rule": None}  # data keys recorded only where not the default: earlier datasets keep their hash
DATA_KEYS = ("train", "src_lang", "tgt_lang", "tokenizer", "max_len", "max_train_pairs")  # what the ids depend on


def ids_dtype(vocab_size: int):
    return np.uint16 if vocab_size <= 1 << 16 else np.int32


def settings_of(cfg: Config) -> dict:
    """The config settings a prepared dataset's pairs and ids depend on."""
    data = {k: getattr(cfg.data, k) for k in DATA_KEYS}
    if cfg.data.slot_rate:  # recorded only where slots are on (OPTIONAL)
        data.update(slot_rate=cfg.data.slot_rate, slot_rule=slotting.RULE)
    return {"data": data, "vocab": cfg.vocab.model_dump()}


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()


def codec_to_json(codec: TextCodec) -> dict:
    state = codec.to_state()
    proto = state.pop("sp_proto")
    return {**state, "sp_proto": base64.b64encode(proto).decode("ascii") if proto is not None else None}


def codec_from_json(state: dict) -> TextCodec:
    proto = state.get("sp_proto")
    return TextCodec.from_state({**state, "sp_proto": base64.b64decode(proto) if proto is not None else None})


class Mapped:
    """A file (raw, or ``.npy``) memory-mapped read-only as a numpy array. ``release()`` hands the
    pages it has read back to the page cache (MADV_DONTNEED: they stay cached; the next read maps
    them again), so that the process's resident memory does not grow with the corpus it reads."""

    def __init__(self, path: Path, dtype=None):
        offset = 0
        if dtype is None:  # .npy: the array starts after its header
            header = np.load(path, mmap_mode="r")
            dtype, offset = header.dtype, header.offset
            del header
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size > offset else None
        if self._map is not None and hasattr(mmap, "MADV_RANDOM"):
            self._map.madvise(mmap.MADV_RANDOM)  # minibatches read pairs in random order: no read-ahead
        self.array = (np.frombuffer(self._map, dtype=dtype, offset=offset) if self._map is not None
                      else np.zeros(0, dtype=dtype))

    def release(self) -> None:
        if self._map is not None and hasattr(self._map, "madvise"):
            self._map.madvise(mmap.MADV_DONTNEED)


class Side:
    """One language's id lists: ``side[k]`` is pair k's ids (a list), read from the memory maps,
    whose pages are handed back every ``RELEASE_EVERY`` reads."""

    RELEASE_EVERY = 1 << 10  # reads between hand-backs (each read maps up to 64 KiB around it)

    def __init__(self, ids: Mapped, offsets: Mapped):
        self._maps, self._reads = (ids, offsets), 0
        self.ids, self.offsets = ids.array, offsets.array

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k) -> list[int]:
        self._reads += 1
        if self._reads % self.RELEASE_EVERY == 0:
            for m in self._maps:
                m.release()
        return self.ids[self.offsets[k]:self.offsets[k + 1]].tolist()


class PreparedCorpus:
    """The trainer's view of a prepared dataset, as data.corpus.Corpus: ``src_ids[k]``,
    ``tgt_ids[k]``, ``src_lens``, ``tgt_lens`` (held in memory) and ``links`` (set by corpus.load_corpora
    with train.guided_alignment)."""

    def __init__(self, folder: str | Path, manifest: dict):
        folder = Path(folder)
        self.folder, self.manifest, self.links = folder, manifest, None
        dtype = np.dtype(manifest["dtype"])
        sides, lens = [], []
        for side in (0, 1):
            try:
                ids, offsets = Mapped(folder / IDS[side], dtype), Mapped(folder / OFFSETS[side])
                lens.append(np.load(folder / LENGTHS[side]))
            except (OSError, ValueError) as exc:
                raise DataError(f"{folder}: cannot read the dataset ({exc}): prepare it again") from None
            if len(offsets.array) != len(lens[-1]) + 1 or len(ids.array) != offsets.array[-1]:
                raise DataError(f"{folder}: {IDS[side]}, {OFFSETS[side]} and {LENGTHS[side]} do not agree "
                                "(a damaged dataset): prepare it again")
            sides.append(Side(ids, offsets))
        self.src_ids, self.tgt_ids = sides
        self.src_lens, self.tgt_lens = lens

    def kept_lines(self) -> np.ndarray:
        """Each pair's 1-based line number in the training files."""
        return np.load(self.folder / LINES, mmap_mode="r")


def read_manifest(folder: str | Path) -> dict:
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        what = "does not exist" if not folder.exists() else f"holds no {MANIFEST}"
        raise ConfigError(f"data.prepared: {folder} {what}: write it with `rnnsearch prepare CONFIG --out {folder}`")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    if manifest.get("format") != FORMAT or manifest.get("version", 0) > VERSION:
        raise DataError(f"{path}: not a prepared dataset this rnnsearch reads ({manifest.get('format')!r} "
                        f"version {manifest.get('version')!r})")
    return manifest


def check_settings(cfg: Config, manifest: dict, folder) -> None:
    """The config must ask for the pairs and vocabularies the dataset holds."""
    then, now = manifest["settings"], settings_of(cfg)
    for section in ("data", "vocab"):
        for key in dict.fromkeys([*now[section], *then[section]]):
            was, value = (s[section].get(key, OPTIONAL.get(key)) for s in (then, now))
            if was != value and key == "slot_rule":
                raise ConfigError(f"data.prepared: {folder} has slots chosen by another rule (data/slotting.py "
                                  f"RULE {was}, now {value}): prepare it again")
            if was != value:
                raise ConfigError(f"data.prepared: {folder} was prepared with {section}.{key}="
                                  f"{was!r}, the config has {value!r}: prepare it again with this "
                                  "config, or set the same value")


def check_codecs(folder, manifest: dict, codecs) -> None:
    """``codecs`` (a resumed run's, or the parent's of ``train --init``) must be the dataset's own."""
    for given, state in zip(codecs, manifest["codecs"]):
        own = codec_from_json(state)
        if given.to_state() != own.to_state():
            parent = (manifest.get("init") or {}).get("name")
            made = f"prepared with --init {parent}" if parent else "prepared with vocabularies of its own"
            raise ConfigError(f"data.prepared: {folder}'s {own.lang} vocabulary is not the model's ({made}): "
                              "a resumed run trains on the data it started with; for `train --init MODEL`, "
                              f"prepare the data with `rnnsearch prepare CONFIG --init MODEL --out {folder}`")


def checked_manifest(cfg: Config, codecs=None) -> dict:
    """The manifest of ``cfg.data.prepared``, once its vocabularies are ``codecs`` (a resumed run's, or
    the parent's of ``train --init``; checked first: a dataset of other vocabularies also has other
    vocab settings) and its settings the config's."""
    manifest = read_manifest(cfg.data.prepared)
    if codecs is not None:
        check_codecs(cfg.data.prepared, manifest, codecs)
    check_settings(cfg, manifest, cfg.data.prepared)
    return manifest


def open_prepared(cfg: Config, codecs=None) -> tuple[TextCodec, TextCodec, PreparedCorpus, dict]:
    """The dataset ``cfg.data.prepared`` with its codecs (:func:`checked_manifest`)."""
    folder = cfg.data.prepared
    manifest = checked_manifest(cfg, codecs)
    mine = tuple(codec_from_json(c) for c in manifest["codecs"])
    return (*mine, PreparedCorpus(folder, manifest), manifest)
