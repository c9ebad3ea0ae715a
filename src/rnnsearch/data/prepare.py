"""``rnnsearch prepare``: a training corpus read once, tokenised on several processes and written as
a prepared dataset that training memory-maps (``data.prepared``), so that the paper's 12M pairs
fit one machine (fairseq's binarised data, in numpy files).

The dataset is a folder, written whole or not at all (under a temporary name, then renamed):

    manifest.json            what was read (files, sizes, SHA-256), the settings it was prepared
                             with, the vocabularies, and the counts of kept and dropped pairs
    src.ids, tgt.ids         every kept pair's unit ids, flat (uint16, or int32 above 65,536 units)
    {src,tgt}.offsets.npy    pair k's ids are ids[offsets[k]:offsets[k + 1]] (int64)
    {src,tgt}.lengths.npy    units per pair (int32): batches are planned from these alone
    lines.npy                each kept pair's line number in the training files (1-based, int64)

The pairs, the repairs, the filter and the vocabularies are exactly those of the text path
(data/corpus.py). Pass 1 (``--workers`` processes) decodes, tokenises and filters chunks of pairs,
counts units and writes each chunk's ids in a chunk-local vocabulary; pass 2 maps them to the
vocabulary built from the counts and appends them to the flat files.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
import time
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from itertools import chain
from pathlib import Path

import numpy as np

from rnnsearch import __version__
from rnnsearch.config import Config
from rnnsearch.data import prepared as layout
from rnnsearch.data.io import DataError, FilterReport, ReadNotes, corpus_file, decode_line, filter_pairs
from rnnsearch.data import slotting
from rnnsearch.data.stream import PairReader, RawLines
from rnnsearch.data.tokenize import TextCodec, pretokenize, sentencepiece_codec, sentencepiece_protos
from rnnsearch.data.vocab import Vocab
from rnnsearch.errors import UsageError
from rnnsearch.files import whole_or_absent

CHUNK = 20_000  # pairs per task
PROGRESS = 1_000_000  # a log line per this many pairs read


def prepare(cfg: Config, out: str | Path, workers: int = 1, force: bool = False, log=print,
            codecs: tuple[TextCodec, TextCodec] | None = None, init: dict | None = None) -> dict:
    """Write the prepared dataset of ``cfg``'s training pairs to ``out``; returns its manifest.
    ``codecs``: vocabularies to encode with (a parent model's, for ``train --init``; ``init``, what
    the manifest records of that model) instead of vocabularies built from these pairs."""
    out, d = Path(out), cfg.data
    if workers < 1:
        raise UsageError(f"--workers {workers}: needs at least 1")
    if out.exists() and not force:
        raise UsageError(f"{out}: exists; choose another folder or pass --force to replace it")
    paths = corpus_file(d.dir, d.train, d.src_lang), corpus_file(d.dir, d.train, d.tgt_lang)
    start = time.monotonic()
    with whole_or_absent(out) as tmp:
        (tmp / "shards").mkdir()
        if codecs is not None:
            protos = tuple(c.sp_proto for c in codecs)
        else:
            protos = _sentencepiece(cfg, paths, log) if cfg.vocab.mode == "sentencepiece" else (None, None)
        spec = {"paths": [str(p) for p in paths], "langs": (d.src_lang, d.tgt_lang), "tokenizer": d.tokenizer,
                "protos": protos, "max_len": d.max_len, "count": protos[0] is None and codecs is None,
                "slot_rate": d.slot_rate}
        log(f"prepare: reading {paths[0]} and {paths[1]} with {workers} worker(s)")
        shards, counts, report, notes, reader, slots = _pass_one(spec, paths, d.max_train_pairs, tmp / "shards", workers, log)
        log(report.summary())
        for line in notes.lines():
            log(line)
        if not report.kept:
            raise DataError(f"{paths[0]}: none of the {report.read} pairs is usable: {report.summary()}")
        codecs = codecs or _codecs(cfg, counts, protos)
        totals = _pass_two(shards, codecs, tmp)
        shutil.rmtree(tmp / "shards")
        manifest = _manifest(cfg, codecs, report, notes, reader, totals, workers, time.monotonic() - start)
        if init is not None:
            manifest["init"] = init
        if d.slot_rate:
            manifest["slotted_pairs"] = slots  # pairs read whose shared items became slots (data/slotting.py)
        (tmp / layout.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    log(f"prepared {report.kept:,} pairs ({totals['src_tokens']:,} + {totals['tgt_tokens']:,} units) in {out} "
        f"in {manifest['seconds']:.0f} s; train on it with --set data.prepared={out}")
    return manifest


def _sentencepiece(cfg: Config, paths, log) -> tuple[bytes, bytes]:
    """The SentencePiece models, trained (unless ``vocab.sp_model``) on the streamed training lines
    exactly as the text path trains them on its lists."""
    if not cfg.vocab.sp_model:
        log("prepare: training SentencePiece on the training lines")
    limit = cfg.data.max_train_pairs
    return sentencepiece_protos(cfg.vocab, _text_lines(paths[0], limit), _text_lines(paths[1], limit))


def _text_lines(path, limit: int):
    lines, notes = RawLines(path), ReadNotes()
    try:
        for number, raw in enumerate(lines, start=1):
            if limit and number > limit:
                break
            yield decode_line(raw, number, path, notes)
    finally:
        lines.close()


# -- pass 1: decode, tokenise, filter, count (worker processes) ------------------------------
_WORKER: dict = {}


def _init_worker(spec: dict) -> None:
    _WORKER.clear()
    _WORKER.update(spec)
    if spec["protos"][0] is not None:
        import sentencepiece as spm
        _WORKER["sp"] = [spm.SentencePieceProcessor(model_proto=p) for p in spec["protos"]]


def _units(side: int, text: str) -> list[str]:
    if "sp" in _WORKER:
        return _WORKER["sp"][side].encode(text, out_type=str)
    return pretokenize(text, _WORKER["tokenizer"], _WORKER["langs"][side])


def _local_ids(units: list[list[str]], keep: list[int]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The kept sentences' units as ids into a vocabulary of this chunk alone."""
    index: dict[str, int] = {}
    flat = [index.setdefault(u, len(index)) for i in keep for u in units[i]]
    lengths = np.array([len(units[i]) for i in keep], dtype=np.int32)
    return list(index), np.array(flat, dtype=np.int32), lengths


def _tokenise_chunk(task) -> tuple:
    first, src_raw, tgt_raw, shard = task
    notes = ReadNotes()
    texts = [[decode_line(raw, first + k, _WORKER["paths"][side], notes) for k, raw in enumerate(raws)]
             for side, raws in enumerate((src_raw, tgt_raw))]
    slots = 0
    if _WORKER["slot_rate"]:
        *texts, slots = slotting.slotted_lines(*texts, first, _WORKER["slot_rate"])
    sides = [[_units(side, text) for text in lines] for side, lines in enumerate(texts)]
    keep, report = filter_pairs("train", sides[0], sides[1], _WORKER["max_len"], first_line=first)
    with open(shard, "wb") as fh:
        pickle.dump({"src": _local_ids(sides[0], keep), "tgt": _local_ids(sides[1], keep),
                     "lines": np.asarray(keep, dtype=np.int64) + first}, fh, protocol=pickle.HIGHEST_PROTOCOL)
    counts = [Counter(chain.from_iterable(units)) for units in sides] if _WORKER["count"] else None
    return counts, report, notes.found, shard, slots


def _ordered(pool, fn, tasks, window: int):
    """``fn`` over ``tasks`` on ``pool``, results in order, at most ``window`` tasks in flight (so
    that the corpus is never queued whole). A worker's exception (a DataError naming a line) is
    raised here; a worker that dies (killed, out of memory) raises BrokenProcessPool."""
    pending = deque()
    for task in tasks:
        pending.append(pool.submit(fn, task))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _pass_one(spec: dict, paths, limit: int, shard_dir: Path, workers: int, log):
    start = time.monotonic()
    reader = PairReader(*paths)
    tasks = ((first, s, t, shard_dir / f"{first:012d}.pkl") for first, s, t in reader.chunks(CHUNK, limit))
    counts, report, found, shards, slots = [Counter(), Counter()], FilterReport("train"), {}, [], 0
    context = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(spec,)) as pool:
        for chunk_counts, chunk_report, chunk_found, shard, chunk_slots in _ordered(pool, _tokenise_chunk, tasks,
                                                                                    2 * workers):
            slots += chunk_slots
            if chunk_counts:
                counts[0].update(chunk_counts[0])
                counts[1].update(chunk_counts[1])
            report.add(chunk_report)
            for path, kinds in chunk_found.items():
                for kind, lines in kinds.items():
                    found.setdefault(path, {}).setdefault(kind, []).extend(lines)
            shards.append(shard)
            if report.read // PROGRESS > (report.read - chunk_report.read) // PROGRESS:
                log(f"prepare: {report.read:,} pairs read ({report.read / (time.monotonic() - start):,.0f} pairs/s)")
    notes = ReadNotes()
    for lines, path in zip((reader.src, reader.tgt), spec["paths"]):
        if lines.bom:
            notes.add(path, "byte-order mark removed", 1)
        for kind, numbers in found.get(path, {}).items():
            notes.found.setdefault(path, {}).setdefault(kind, []).extend(numbers)
    if spec["slot_rate"]:
        log(slotting.summary(slots, report.read, spec["slot_rate"]))
    return shards, counts, report, notes, reader, slots


def _codecs(cfg: Config, counts, protos) -> tuple[TextCodec, TextCodec]:
    d, v = cfg.data, cfg.vocab
    if protos[0] is None:
        return tuple(TextCodec(lang, d.tokenizer, Vocab.from_counts(c, v.size, v.min_freq))
                     for lang, c in zip((d.src_lang, d.tgt_lang), counts))
    return tuple(sentencepiece_codec(lang, d.tokenizer, proto) for lang, proto in zip((d.src_lang, d.tgt_lang), protos))


# -- pass 2: chunk-local ids -> vocabulary ids, appended to the flat files ---------------------
def _pass_two(shards: list[Path], codecs, folder: Path) -> dict:
    dtype = layout.ids_dtype(max(len(c.vocab) for c in codecs))
    lengths, lines, totals = ([], []), [], {}
    with open(folder / layout.IDS[0], "wb") as src_fh, open(folder / layout.IDS[1], "wb") as tgt_fh:
        for shard in shards:
            with open(shard, "rb") as fh:
                part = pickle.load(fh)
            for side, (codec, out) in enumerate(zip(codecs, (src_fh, tgt_fh))):
                itos, flat, lens = part[("src", "tgt")[side]]
                table = np.array(codec.vocab.encode(itos) or [0], dtype=dtype)  # chunk id -> vocabulary id
                out.write(table[flat].tobytes())
                lengths[side].append(lens)
            lines.append(part["lines"])
            shard.unlink()
    for side, name in enumerate(("src", "tgt")):
        lens = np.concatenate(lengths[side]) if lengths[side] else np.zeros(0, dtype=np.int32)
        offsets = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        np.save(folder / layout.LENGTHS[side], lens)
        np.save(folder / layout.OFFSETS[side], offsets)
        totals[f"{name}_tokens"] = int(offsets[-1])
    np.save(folder / layout.LINES, np.concatenate(lines) if lines else np.zeros(0, dtype=np.int64))
    totals["dtype"] = np.dtype(dtype).name
    return totals


def _manifest(cfg: Config, codecs, report: FilterReport, notes: ReadNotes, reader: PairReader, totals: dict,
              workers: int, seconds: float) -> dict:
    files = {name: {"path": str(r.path), "lines": r.count, "bytes": r.size, "sha256": r.sha256}
             for name, r in (("src", reader.src), ("tgt", reader.tgt))}
    settings = layout.settings_of(cfg)
    return {"format": layout.FORMAT, "version": layout.VERSION, "rnnsearch": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "settings": settings,
            "settings_sha256": layout.settings_hash(settings), "pairs": report.kept, **totals,
            "filter": report.to_dict(), "summary": report.summary(), "repaired": notes.found,
            "repaired_lines": notes.lines(), "files": files,
            "codecs": [layout.codec_to_json(c) for c in codecs], "workers": workers, "seconds": seconds,
            "pid": os.getpid()}
