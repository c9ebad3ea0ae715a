"""Python API: ``Translator.from_checkpoint(path).translate(["..."])``."""
from __future__ import annotations

import functools
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch

from rnnsearch import checkpoint
from rnnsearch.decoding import backends, pretrained, shortlist, unk, workers
from rnnsearch.config import Config, from_dict, replace
from rnnsearch.model import evaluating, load_model
from rnnsearch.decoding.constraints import per_sentence
from rnnsearch.decoding.sampling import search_or_sample
from rnnsearch.decoding.scoring import Score, score_texts
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source, Translation, as_source, sentences_given
from rnnsearch.decoding.search import Hypothesis
from rnnsearch.model.align_head import load_head
from rnnsearch.data.batching import pad, source_batch
from rnnsearch.data.tokenize import TextCodec
from rnnsearch.data.vocab import EOS_TOKEN, UNK_TOKEN
from rnnsearch.errors import UsageError
from rnnsearch.extras import require


class Translator:
    """A trained model ready to translate and score: ``Translator.from_pretrained("hansards_enfr_rnnsearch50")``
    (a release by name, a folder, a checkpoint or a URL), then ``translate(texts, SearchSettings(...))``
    (a Translation per sentence), ``score(sources, targets)`` (log p(target | source) by teacher forcing).
    Running text goes through the text stage: ``rnnsearch.translate_text(translator, texts)`` (docs/api.md)."""

    def __init__(self, model, src_codec: TextCodec, tgt_codec: TextCodec, config: Config, device="cpu",
                 train_state: dict | None = None, loaded_as: dict | None = None):
        self.model, self.src_codec, self.tgt_codec = model.to(device), src_codec, tgt_codec
        self.config = config  # the model's resolved config (its decode section sets the search defaults)
        self.train_state = train_state  # updates, epochs, hours of the run that wrote the checkpoint
        self.device = torch.device(device)
        self.warn = lambda message: warnings.warn(message, stacklevel=3)  # the CLI prints these itself
        self.replace_unk: str | None = None  # None, "copy" or "dict" (see set_unk_replacement)
        self.lexicon: dict[str, str] | None = None
        self.shortlist: shortlist.ShortlistTable | None = None  # see set_shortlist
        self.workers = 1  # processes that search batches side by side (see set_workers)
        self._float32 = backends.Float32View()  # what a float32 CPU search runs on (model/packed.py)
        self.loaded_as = loaded_as or {}  # from_checkpoint's backend, quantize and dtype (add_ensemble's members too)
        self.align_head = None  # the checkpoint's alignment head (model/align_head.py), if it has one
        self.averaged_from: list[str] = []  # the checkpoints whose mean it is (`rnnsearch average`), if any
        self.name = config.name  # what the model is called: its release's name when it is one (from_checkpoint)

    def __repr__(self) -> str:
        arch = getattr(self.model, "arch", type(self.model).__name__)
        head = ", alignment head" if self.align_head is not None else ""
        return (f"Translator({self.name!r}, {self.src_codec.lang}->{self.tgt_codec.lang}, {arch}{head}, "
                f"{self.loaded_as.get('backend', 'torch')}, {self.device})")

    @classmethod
    def from_checkpoint(cls, path, device: str = "cpu", backend: str = "torch", quantize: str | None = None,
                        dtype: str = "float32") -> Translator:
        """A checkpoint (or an ``rnnsearch export`` directory) ready to translate. ``backend``:
        torch, or onnx (the graphs of ``rnnsearch export`` under onnxruntime, exported on the fly
        from a checkpoint); ``quantize``: None or int8; ``dtype``: float32 or bf16 (torch only)."""
        if backend not in ("torch", "onnx") or quantize not in (None, "int8") or dtype not in ("float32", "bf16"):
            raise UsageError(f"backend {backend!r}, quantize {quantize!r}, dtype {dtype!r}: expected torch|onnx, "
                             "int8 or none, float32|bf16")
        if backend == "onnx":
            require("onnx", "--backend onnx")
        if Path(path).is_dir() and (Path(path) / "model.json").exists():
            if backend != "onnx":
                raise UsageError(f"{path} is an ONNX export: translate it with --backend onnx")
            return cls.from_export(path, quantize)
        payload = checkpoint.load(pretrained.weights_path(path))  # a release folder: its weights
        cfg = from_dict(payload["config"])
        src, tgt = TextCodec.from_state(payload["src_codec"]), TextCodec.from_state(payload["tgt_codec"])
        model = load_model(cfg.model, len(src.vocab), len(tgt.vocab), payload["model"])
        model.eval()
        translator = cls(model, src, tgt, cfg, device, payload.get("train_state"))
        translator._float32.keep = True  # its own weights: one view for its life (backends.Float32View)
        translator.averaged_from = list((payload.get("meta") or {}).get("averaged_from") or [])
        release = pretrained.release_name(path)
        translator.name = release or cfg.name
        unk.default_replacement(translator, Path(pretrained.weights_path(path)).parent if release else None,
                                (payload.get("meta") or {}).get("init"))  # clean output by default, where it can be had
        if "align_head" in payload:
            translator.align_head = load_head(payload["align_head"], path).to(device)
        if backend == "onnx":
            if dtype != "float32":
                raise UsageError("--dtype bf16 goes with the torch backend")
            translator = translator._onnx(quantize)
        elif quantize == "int8":
            translator.model = backends.torch_int8(translator.model)
        if dtype == "bf16":
            translator.model = backends.bf16_model(translator.model)
        translator.loaded_as = {"backend": backend, "quantize": quantize, "dtype": dtype}
        return translator

    @classmethod
    def from_pretrained(cls, name, **kwargs) -> Translator:
        """A release by name (RNNSEARCH_MODELS, models/), a folder, a checkpoint or a URL (decoding/pretrained.py)."""
        return cls.from_checkpoint(pretrained.resolve(name), **kwargs)

    @classmethod
    def from_export(cls, directory, quantize: str | None = None) -> Translator:
        model = backends.OnnxModel(directory, int8=quantize == "int8")  # the graphs of `rnnsearch export`, onnxruntime
        src, tgt = backends.export_codecs(model.meta)
        translator = cls(model, src, tgt, from_dict(model.meta["config"]), "cpu", model.meta.get("train_state"),
                         {"backend": "onnx", "quantize": quantize})
        translator.set_unk_replacement(model.meta.get("replace_unk"), model.meta.get("lexicon"))  # as exported, by attention
        return translator

    def _onnx(self, quantize: str | None) -> Translator:
        from rnnsearch.decoding.export import export
        self._export_dir = tempfile.TemporaryDirectory(prefix="rnnsearch-onnx-")  # removed with the translator
        export(self, self._export_dir.name)
        onnx = Translator.from_export(self._export_dir.name, quantize)
        onnx._export_dir, onnx.name = self._export_dir, self.name  # <unk> replaced as here (model.json)
        return onnx

    def add_ensemble(self, paths: list[str]) -> None:
        """Search this model with those of ``paths`` (same vocabularies), loaded as this one was (backend,
        int8, bf16): their probabilities are averaged at every step (decoding/backends.Ensemble)."""
        members = [self.model]
        for path in paths:
            other = Translator.from_checkpoint(path, self.device, **self.loaded_as)
            backends.check_same_vocabularies(self, other, str(path))
            members.append(other.model)
        self.model = backends.Ensemble(members)

    @property
    def decode_cfg(self):  # the decode section: beam, length penalty, length limits, batch size
        return self.config.decode

    @decode_cfg.setter
    def decode_cfg(self, value) -> None:
        self.config = replace(self.config, decode=value)

    def search_settings(self, settings: SearchSettings | None = None, *, name=str, **given) -> SearchSettings:
        """Resolved SearchSettings: ``settings`` or ``given`` fields (None: unset) over this model's decode section;
        a SettingsError names a field as ``name(field)`` (decoding/settings.py)."""
        if settings is not None and (given or not isinstance(settings, SearchSettings)):
            raise TypeError("search_settings takes a SearchSettings or its fields by name, not both or other things")
        return (settings or SearchSettings(**given)).resolve(self.decode_cfg, name)

    def translate(self, texts: Sequence[str | Source], settings: SearchSettings | None = None,
                  progress=None) -> list[Translation]:
        """Translate sentences, each text one (strings, or Sources: a prefix the output begins with, constraints it must
        contain, words it must avoid; running text: ``rnnsearch.translate_text``); blank ones give empty translations;
        order is kept. ``settings``: SearchSettings (decoding/settings.py), unset fields the model's decode section's; with
        sampling, ``n_best`` draws per sentence, the best first. ``progress(n)``: n more sentences done (tqdm's update)."""
        return [t for part in self.translate_parts(texts, settings, progress=progress) for t in part]

    def translate_parts(self, texts: Sequence[str | Source], settings: SearchSettings | None = None,
                        part_size: int | None = None, progress=None) -> Iterator[list[Translation]]:
        """``translate`` in parts of ``part_size`` texts (None: one part), yielded in input order as
        each is done, so that a large file is written as it goes. The parts are one translation:
        sampling's draws go on from part to part, and warnings name lines of the whole input."""
        texts = sentences_given(texts, "texts")
        settings = SearchSettings.given(settings).resolve(self.decode_cfg)
        if part_size is not None and part_size < 1:
            raise UsageError(f"part size must be at least 1, got {part_size}")
        generator = settings.sampling.generator(self.device) if settings.sampling else None
        size = part_size or max(len(texts), 1)
        for first in range(0, len(texts), size):
            part = [as_source(t) for t in texts[first:first + size]]
            prefixes, units = [p.prefix for p in part], [self.source_units(p.text) for p in part]
            wanted = [(p.constraints, p.avoid) for p in part]
            constraints = per_sentence(units, wanted, self.tgt_codec, settings.max_len_ratio)
            yield self._translate(units, settings, self.prefix_units(prefixes) if any(prefixes) else None, progress,
                                  generator, constraints, range(first + 1, first + 1 + len(part)))

    def prefix_units(self, prefixes: list[str] | None) -> list[list[str]] | None:
        """The output units each output must begin with, one list per prefix text (None: none)."""
        return None if prefixes is None else [self.tgt_codec.units(p) if p.strip() else [] for p in prefixes]

    def source_units(self, text: str) -> list[str]:
        return self.src_codec.units(text) if text.strip() else []  # [] for a blank one

    def translate_units(self, units: list[list[str]], settings: SearchSettings | None = None, prefixes=None,
                        progress=None, constraints: list | None = None, lines=None) -> list[Translation]:
        """Translate sentences given as source units (``source_units``); order is kept. ``prefixes``: the
        output units each begins with (``prefix_units``); ``constraints``: per sentence (include, avoid) texts;
        ``lines``: the input line of each sentence, as warnings name it (default: 1, 2, ...)."""
        settings = SearchSettings.given(settings).resolve(self.decode_cfg)
        return self._translate(units, settings, prefixes, progress, constraints=per_sentence(
            units, constraints, self.tgt_codec, settings.max_len_ratio), lines=lines)

    def _translate(self, units: list[list[str]], settings: SearchSettings, prefixes: list[list[str]] | None,
                   progress=None, generator: torch.Generator | None = None, constraints: list | None = None,
                   lines=None) -> list[Translation]:
        """``translate_units`` with resolved settings; ``generator``: the sampling draws' (None: a new one
        from the seed); ``constraints``: per sentence Constraints, None, or why they are refused
        (decoding/constraints.py: per_sentence; its Translation's ``error``); ``lines``: each sentence's
        line in warnings (None: 1, 2, ...)."""
        units, line = list(units), (lambda i: lines[i] if lines else i + 1)  # noqa: E731
        refused = {i: c for i, c in enumerate(constraints or []) if isinstance(c, str)}
        if constraints is not None and settings.sampling is not None:
            raise UsageError("constraints go with beam search, not sampling")
        if prefixes is not None and len(prefixes) != len(units):
            raise UsageError(f"{len(prefixes)} prefixes for {len(units)} sentences: give one per sentence "
                             "('' for none)")
        limit = settings.max_src_len
        for i, u in enumerate(units):
            if len(u) > limit:
                self.warn(f"line {line(i)}: {len(u)} source units, translating the first {limit} "
                          f"(decode.max_src_len)")
                units[i] = u[:limit]
        results: list[Translation | None] = [None] * len(units)
        todo = sorted((i for i, u in enumerate(units) if u and i not in refused), key=lambda i: len(units[i]))
        if generator is None and settings.sampling is not None:
            generator = settings.sampling.generator(self.device)  # one per call
        progress = progress or (lambda done: None)
        progress(len(units) - len(todo))  # the blank ones
        workers.check(self, self.workers, settings.sampling is not None)
        chunks = [todo[start:start + settings.batch_size] for start in range(0, len(todo), settings.batch_size)]
        batches = [([units[i] for i in chunk], None if not prefixes else [prefixes[i] for i in chunk],
                    None if constraints is None else [constraints[i] for i in chunk]) for chunk in chunks]
        with evaluating(self.model):
            model = self._float32.of(self.model)  # made before the workers fork: they share it
            search = lambda batch: self._search_batch(model, batch, settings, generator)  # noqa: E731 (forked)
            for k, translations in workers.search_batches(search, batches, self.workers):
                for i, result in zip(chunks[k], translations):
                    results[i] = result
                    if not result.constraints_met:
                        self.warn(f"line {line(i)}: the output reached its length limit before meeting "
                                  "its constraints")
                progress(len(chunks[k]))
        for i, why in refused.items():
            self.warn(f"line {line(i)}: not translated: {why}")
            results[i] = Translation("", [], [], 0.0, None, error=why, constraints_met=False)  # its constraints refused
        return [r if r is not None else Translation("", [], [], 0.0, None) for r in results]

    @property
    def can_score(self) -> bool:
        """Whether ``score`` works: it reads one PyTorch model (not an ONNX session or an ensemble)."""
        return isinstance(self.model, torch.nn.Module) and hasattr(self.model, "decoder")

    def score(self, sources: list[str], targets: list[str], batch_size: int | None = None,
              details: bool = False) -> list[Score]:
        """log p(target | source) of given pairs of raw sentences (teacher forcing), in their order:
        what beam search would report for that output (decoding/scoring.py: score_texts)."""
        if not self.can_score:
            raise UsageError("scoring reads the PyTorch model: use the torch backend, without --ensemble")
        sources, targets = sentences_given(sources, "sources", str), sentences_given(targets, "targets", str)
        with evaluating(self.model):
            return score_texts(self, sources, targets, batch_size or self.decode_cfg.batch_size, details)

    def _search(self, model, units: list[list[str]], settings: SearchSettings, generator=None,
                prefixes: list[list[str]] | None = None, constraints: list | None = None) -> list[list[Hypothesis]]:
        src, mask = source_batch([self.src_codec.vocab.encode(u) for u in units])
        src, mask = src.to(self.device), mask.to(self.device)
        prefix = None
        if prefixes is not None and any(prefixes):
            prefix = pad([self.tgt_codec.vocab.encode(p) for p in prefixes]).to(self.device)  # (B, P)
        run = functools.partial(search_or_sample, src=src, mask=mask, settings=settings, generator=generator)
        if self.shortlist is not None:  # over the batch's candidate words (decoding/shortlist.py)
            return shortlist.search(run, model, self.shortlist, src, mask, prefix, constraints)
        return run(model, prefix, constraints)

    def set_shortlist(self, table: shortlist.ShortlistTable | None) -> None:
        """Translate each batch over its candidate words only (decoding/shortlist.py); None: all words."""
        if table is not None and (why := shortlist.problem(self)):
            raise UsageError(why)
        self.shortlist = table

    def set_workers(self, n: int) -> None:
        """Search the batches of each call in ``n`` forked processes of one thread each (decoding/workers.py)."""
        workers.check(self, n)
        self.workers = n

    def set_unk_replacement(self, mode: str | None, lexicon: dict[str, str] | None = None) -> None:
        """Replace each <unk> in outputs by its aligned source word (``copy``) or that word's
        translation in ``lexicon`` (``dict``), the alignment head's where there is one (decoding/unk.py);
        None: keep them."""
        if why := unk.problem(self, mode, lexicon):
            raise UsageError(why)
        self.replace_unk, self.lexicon = mode, lexicon

    def _search_batch(self, model, batch: tuple, settings: SearchSettings, generator) -> list[Translation]:
        """One batch of (source units, prefixes or None, constraints or None) searched over ``model``
        (self.model, or its float32 view) and packaged."""
        units, prefixes, constraints = batch
        found = self._search(model, units, settings, generator, prefixes, constraints)
        rows = unk.alignments(self, units, found) if self.replace_unk else [[None] * len(h) for h in found]
        return [self._package(u, hyps, prefixes[n] if prefixes else [], rows[n])
                for n, (u, hyps) in enumerate(zip(units, found))]

    def _package(self, src_units: list[str], hyps: list[Hypothesis], prefix: list[str], rows: list) -> Translation:
        source_tokens, nbest = src_units + [EOS_TOKEN], []
        for h, alignment in zip(hyps, rows):
            tokens = self.tgt_codec.vocab.decode(h.tokens)
            tokens = prefix + tokens[len(prefix):]  # the prefix as given, its unknown words included
            replaced = [i for i, t in enumerate(tokens) if t == UNK_TOKEN] if self.replace_unk else []
            if replaced:
                tokens = unk.replace(tokens, src_units, alignment, self.replace_unk, self.lexicon)
            nbest.append(Translation(self.tgt_codec.units_to_text(tokens), tokens, source_tokens,
                                     h.score, h.attention, replaced=replaced, constraints_met=h.complete))
        nbest[0].nbest = nbest
        return nbest[0]
