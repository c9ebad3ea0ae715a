"""The training and dev corpora as the trainer sees them: read, tokenised, filtered, encoded."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnnsearch.config import Config
from rnnsearch.data.guided import Links, read_links
from rnnsearch.data.io import DataError, ReadNotes, corpus_file, filter_pairs, read_parallel
from rnnsearch.data.prepared import checked_manifest, open_prepared
from rnnsearch.data import slotting
from rnnsearch.data.tokenize import build_codecs


@dataclass(frozen=True)
class Corpus:
    """Encoded sentence pairs and their lengths (computed once: the trainer reads them per update),
    and the pairs' word alignments when ``train.guided_alignment`` gives them."""
    src_ids: list[list[int]]
    tgt_ids: list[list[int]]
    links: Links | None = None
    src_lens: np.ndarray = field(init=False)
    tgt_lens: np.ndarray = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "src_lens", np.array([len(s) for s in self.src_ids], dtype=np.int64))
        object.__setattr__(self, "tgt_lens", np.array([len(t) for t in self.tgt_ids], dtype=np.int64))


LARGE_TEXT = 400 * 2**20  # bytes of training text (both sides) above which `train` suggests `prepare`
GZIP_RATIO = 3.1  # text bytes per gzip byte (the Hansards training files)


def check_files(cfg: Config, codecs=None) -> None:
    """The training and dev files are there (before a run directory is made); else one line naming
    the first one missing and how to point at the data or get it. A prepared dataset: its settings
    and (given ``codecs``, a parent's) its vocabularies are those of the run."""
    d = cfg.data
    if d.prepared:
        checked_manifest(cfg, codecs)
        return
    for split in (d.train, d.dev):
        for lang in (d.src_lang, d.tgt_lang):
            path = corpus_file(d.dir, split, lang)
            if not path.is_file():
                raise DataError(f"{path}: file not found (data.dir is {d.dir!r}): point it at a folder of "
                                f"{{split}}.{{lang}} files with --set data.dir=DIR, or download Multi30k with "
                                "`rnnsearch data multi30k --out DIR`")


def load_corpora(cfg: Config, log, codecs=None):
    """Read, tokenise and filter the training split (or open ``data.prepared``); read the dev split.
    Builds the vocabularies unless ``codecs`` (from a checkpoint) are given. Everything dropped or
    repaired is reported through ``log`` with counts and first line numbers."""
    d = cfg.data
    if d.prepared:
        src_codec, tgt_codec, train, manifest = open_prepared(cfg, codecs)
        log(f"training pairs from {d.prepared} (prepared {manifest['created']} from {manifest['files']['src']['path']}): "
            + manifest["summary"])
        if cfg.train.guided_alignment:
            lines = train.kept_lines()
            train.links = _links(cfg, log, manifest["filter"]["read"], list(lines - 1), train.src_lens, train.tgt_lens)
    else:
        src_codec, tgt_codec, train = _read_train(cfg, log, codecs)
    if len(train.src_ids) == 0:
        raise DataError(f"{d.prepared or corpus_file(d.dir, d.train, d.src_lang)}: no usable training pair, nothing "
                        "to train on (the line above says what was dropped)")
    dev = read_dev(cfg, log)
    log(f"vocabulary: {len(src_codec.vocab)} {d.src_lang} / {len(tgt_codec.vocab)} {d.tgt_lang} "
        f"({cfg.vocab.mode}); {len(train.src_ids)} training pairs, {len(dev[0])} dev pairs")
    return src_codec, tgt_codec, train, dev


def _read_train(cfg: Config, log, codecs):
    d = cfg.data
    notes = ReadNotes()
    paths = corpus_file(d.dir, d.train, d.src_lang), corpus_file(d.dir, d.train, d.tgt_lang)
    suggest_prepare(paths, log)
    src_lines, tgt_lines = read_parallel(*paths, notes)
    for line in notes.lines():
        log(line)
    if not src_lines:
        raise DataError(f"{paths[0]}: no lines: the corpus is empty, nothing to train on (data.dir, data.train)")
    lines = len(src_lines)
    if d.max_train_pairs and len(src_lines) > d.max_train_pairs:
        log(f"using the first {d.max_train_pairs} of {len(src_lines)} training pairs (data.max_train_pairs)")
        src_lines, tgt_lines = src_lines[: d.max_train_pairs], tgt_lines[: d.max_train_pairs]
    if codecs is None:  # the vocabularies are the plain text's (slots are read in after)
        src_codec, tgt_codec, src_units, tgt_units = build_codecs(cfg.vocab, d, src_lines, tgt_lines, log)
    else:
        src_codec, tgt_codec = codecs
    if d.slot_rate:  # the chosen pairs' shared items read as slots
        src_lines, tgt_lines, n = slotting.slotted_lines(src_lines, tgt_lines, 1, d.slot_rate)
        log(slotting.summary(n, len(src_lines), d.slot_rate))
    if codecs is not None or d.slot_rate:
        src_units, tgt_units = (codec.units_of(lines, d.token_cache, log)
                                for codec, lines in ((src_codec, src_lines), (tgt_codec, tgt_lines)))
    keep, report = filter_pairs("train", src_units, tgt_units, d.max_len)
    log(report.summary())
    links = None
    if cfg.train.guided_alignment:
        links = _links(cfg, log, lines, keep, [len(src_units[i]) for i in keep], [len(tgt_units[i]) for i in keep])
    train = Corpus([src_codec.vocab.encode(src_units[i]) for i in keep],
                   [tgt_codec.vocab.encode(tgt_units[i]) for i in keep], links)
    return src_codec, tgt_codec, train


def _links(cfg: Config, log, lines: int, keep, src_lens, tgt_lens) -> Links:
    """The guided-alignment links of the kept pairs (``keep``: indices into the ``lines`` lines)."""
    t = cfg.train
    links = read_links(t.guided_alignment, lines, keep, src_lens, tgt_lens)
    log(f"word alignments: {len(links.pairs)} links for the {len(keep)} kept pairs ({t.guided_alignment})")
    return links


def read_dev(cfg: Config, log) -> tuple[list[str], list[str]]:
    """The dev pairs as text (both sides non-empty), repairs and drops logged."""
    d, notes = cfg.data, ReadNotes()
    dev_src, dev_ref = read_parallel(corpus_file(d.dir, d.dev, d.src_lang), corpus_file(d.dir, d.dev, d.tgt_lang), notes)
    for line in notes.lines():
        log(line)
    dev_keep, dev_report = filter_pairs("dev", [s.split() for s in dev_src], [t.split() for t in dev_ref], None)
    log(dev_report.summary())
    return [dev_src[i] for i in dev_keep], [dev_ref[i] for i in dev_keep]


def suggest_prepare(paths, log) -> None:
    """One line suggesting ``rnnsearch prepare`` when the training text is large."""
    sizes = [p.stat().st_size * (GZIP_RATIO if p.name.endswith(".gz") else 1) for p in paths if p.is_file()]
    if sum(sizes) >= LARGE_TEXT:
        log(f"{paths[0]} and {paths[1]} hold about {sum(sizes) / 2**20:,.0f} MiB of text, which training reads into "
            "memory whole; for a corpus this size, `rnnsearch prepare CONFIG --out DIR` once and train with "
            "--set data.prepared=DIR (memory-mapped; docs/training.md)")
