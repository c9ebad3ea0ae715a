"""Batches searched side by side by forked worker processes, one thread each.

A decoding step multiplies small matrices (B*K rows): a second thread inside each product
gains little (beam 5, 1,000 Hansards test sentences, RNNsearch-50: 1.3-1.5x on 2 cores). Marian
decodes with ``--cpu-threads N`` as N single-threaded workers, each with its own batches; so does
``Translator.set_workers(N)`` (``--workers N``): the batches of a call go to N processes forked
from this one (the model's weights shared with it, copy-on-write), whichever is free takes the
next, searches it and packages its translations (<unk> replacement, detokenisation), and sends
them back (docs/deploy.md has the speed-ups).

Each worker runs one thread: GNU OpenMP's thread pool does not survive fork, and a child that
asks it for a second thread after the parent has used it hangs for good (tried: two forked workers
of two threads each never returned). One thread per worker never enters an OpenMP region. This
process, which packages the hypotheses as they come back, also runs one thread meanwhile: its
OpenMP threads, woken by each of its small products, spin for a while after it, and took half of
the workers' cores (int8, 2 workers on 2 cores, 400 sentences: searches 21.7 s of CPU instead of
13.4 s, and 1.0x the speed of one thread instead of 1.75x).
"""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence

import torch

from rnnsearch.decoding import backends
from rnnsearch.errors import UsageError

_search: Callable | None = None  # the forked workers' search (set before the fork, inherited by it)


def problem(translator, workers: int, sampling: bool = False) -> str | None:
    """Why ``translator`` cannot search with ``workers`` processes (None: it can)."""
    if workers < 1:
        return f"--workers must be at least 1, got {workers}"
    if workers == 1:
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return "--workers forks worker processes: this platform cannot fork; use one worker"
    if translator.device.type != "cpu":
        return "--workers runs searches on CPU cores: not with --device cuda"
    if isinstance(translator.model, backends.OnnxModel):
        return "--workers goes with the torch backend (onnxruntime's thread pool does not survive fork)"
    if sampling:
        return "--workers with --sample: each draw depends on the ones before it; sample with one worker"
    return None


def search_batches(search: Callable, batches: Sequence, workers: int) -> Iterator[tuple[int, object]]:
    """(k, ``search(batches[k])``) of each batch: here, in order, or by ``workers`` forked processes as
    each is done. The batches come shortest first (the translator sorts them by length); the workers
    take them longest first, so that the last ones to finish are short and no worker waits long
    for another."""
    if workers <= 1 or len(batches) <= 1:
        yield from enumerate(map(search, batches))
        return
    global _search
    _search, threads = search, torch.get_num_threads()
    context = multiprocessing.get_context("fork")
    torch.set_num_threads(1)
    try:
        with context.Pool(min(workers, len(batches)), initializer=torch.set_num_threads, initargs=(1,)) as pool:
            yield from pool.imap_unordered(_run, reversed(list(enumerate(batches))))
    finally:
        _search = None
        torch.set_num_threads(threads)


def _run(item: tuple[int, object]) -> tuple[int, object]:
    k, batch = item
    return k, _search(batch)


def check(translator, workers: int, sampling: bool = False) -> None:
    """A UsageError where ``problem`` finds one."""
    why = problem(translator, workers, sampling)
    if why:
        raise UsageError(why)
