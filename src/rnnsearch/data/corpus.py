"""The training and dev corpora as the trainer sees them: read, tokenised, filtered, encoded."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnnsearch.config import Config
from rnnsearch.data.guided import Links, read_links
from rnnsearch.data.io import ReadNotes, corpus_file, filter_pairs, read_parallel
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


def load_corpora(cfg: Config, log, codecs=None):
    """Read, tokenise and filter the training split; read the dev split. Builds the
    vocabularies unless ``codecs`` (from a checkpoint) are given. Everything dropped or
    repaired is reported through ``log`` with counts and first line numbers."""
    d = cfg.data
    notes = ReadNotes()
    src_lines, tgt_lines = read_parallel(corpus_file(d.dir, d.train, d.src_lang),
                                         corpus_file(d.dir, d.train, d.tgt_lang), notes)
    lines = len(src_lines)
    if d.max_train_pairs and len(src_lines) > d.max_train_pairs:
        log(f"using the first {d.max_train_pairs} of {len(src_lines)} training pairs (data.max_train_pairs)")
        src_lines, tgt_lines = src_lines[: d.max_train_pairs], tgt_lines[: d.max_train_pairs]
    if codecs is None:
        src_codec, tgt_codec, src_units, tgt_units = build_codecs(cfg.vocab, d, src_lines, tgt_lines, log)
    else:
        src_codec, tgt_codec = codecs
        src_units, tgt_units = (codec.units_of(lines, d.token_cache, log)
                                for codec, lines in ((src_codec, src_lines), (tgt_codec, tgt_lines)))
    keep, report = filter_pairs("train", src_units, tgt_units, d.max_len)
    log(report.summary())
    links = None
    if cfg.train.guided_alignment:
        links = read_links(cfg.train.guided_alignment, lines, keep, [len(src_units[i]) for i in keep],
                           [len(tgt_units[i]) for i in keep])
        log(f"guided alignment: {len(links.pairs)} links for the {len(keep)} kept pairs "
            f"({cfg.train.guided_alignment}; weight {cfg.train.guided_alignment_weight}, "
            f"{cfg.train.guided_alignment_cost})")
    train = Corpus([src_codec.vocab.encode(src_units[i]) for i in keep],
                   [tgt_codec.vocab.encode(tgt_units[i]) for i in keep], links)
    dev_src, dev_ref = read_parallel(corpus_file(d.dir, d.dev, d.src_lang),
                                     corpus_file(d.dir, d.dev, d.tgt_lang), notes)
    for line in notes.lines():
        log(line)
    dev_keep, dev_report = filter_pairs("dev", [s.split() for s in dev_src], [t.split() for t in dev_ref], None)
    log(dev_report.summary())
    dev = ([dev_src[i] for i in dev_keep], [dev_ref[i] for i in dev_keep])
    log(f"vocabulary: {len(src_codec.vocab)} {d.src_lang} / {len(tgt_codec.vocab)} {d.tgt_lang} "
        f"({cfg.vocab.mode}); {len(train.src_ids)} training pairs, {len(dev[0])} dev pairs")
    return src_codec, tgt_codec, train, dev
