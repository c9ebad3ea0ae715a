"""Process-level settings for speed on CPUs.

glibc's malloc serves blocks above a dynamic threshold with fresh mmap() pages and returns
them on free, so every large tensor of every step pays page faults again (on a fresh VM,
~0.4 GiB/s). Raising the mmap threshold to its maximum (32 MiB) and keeping freed memory
in the heap lets PyTorch's per-step tensors reuse warm memory: 5-10% faster training on
2 cores (benchmarks/README.md). All threads share one arena (M_ARENA_MAX=1): the server searches
in a worker thread, whose own arena kept growing (beam-12 searches of 1-32 sentences: 836 -> 1,028
MiB in 5 minutes; with one arena 592 -> 645 MiB, flat after the first 2 minutes). Set
RNNSEARCH_MALLOC=default to leave malloc alone.

oneDNN, which runs PyTorch's bfloat16 products on CPUs, keeps compiled primitives, one per
distinct shape, each with its own buffers, in two caches of 1024 entries: oneDNN's own and that
of ideep, PyTorch's layer over it. Training sees new shapes with every batch length, so under
bf16 autocast the process kept growing (637 -> 1,224 MiB over 150 minibatches of the bench
model; benchmarks/README.md). The loop's few shapes fit in a few dozen entries.
:func:`tune_process` sets ONEDNN_PRIMITIVE_CACHE_CAPACITY=32 and LRU_CACHE_CAPACITY=64 (ideep's)
unless the environment already sets them.

Denormal floats (below 1.2e-38) make CPU arithmetic tens of times slower. The output layer's
gradient (softmax - one-hot over a 30k vocabulary, times t_i) is full of them once the model is
confident: converting and adding one (V, M) bf16 product ran at ~55M values/s instead of ~5G.
:func:`tune_process` sets flush-to-zero and denormals-are-zero (``torch.set_flush_denormal``; other
frameworks do so on CPUs by default) before any worker thread exists, so that every thread
inherits it. Values below 1.2e-38 become 0, far below anything a float32 model can resolve.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -2, -3, -8
_done = None


ONEDNN_CACHE = 32
IDEEP_CACHE = 64


def tune_process() -> bool:
    """:func:`tune_malloc`, :func:`flush_denormals` and the capacities of oneDNN's and ideep's
    primitive caches (before oneDNN's first use)."""
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(ONEDNN_CACHE))
    os.environ.setdefault("LRU_CACHE_CAPACITY", str(IDEEP_CACHE))
    flush_denormals()
    return tune_malloc()


def flush_denormals() -> bool:
    """Flush-to-zero and denormals-are-zero for this thread and the threads it starts later;
    False where the CPU has no such mode. RNNSEARCH_DENORMALS=keep leaves them alone."""
    if os.environ.get("RNNSEARCH_DENORMALS", "flush") == "keep":
        return False
    import torch
    return bool(torch.set_flush_denormal(True))


def tune_malloc() -> bool:
    """Apply the settings above once per process; False where the C library is not glibc."""
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get("RNNSEARCH_MALLOC", "tuned") == "default":
        return False
    mallopt = _glibc("mallopt")
    if mallopt is None:
        return False
    ok = all([mallopt(M_MMAP_THRESHOLD, 32 << 20), mallopt(M_TRIM_THRESHOLD, 1 << 30),
              mallopt(M_TOP_PAD, 64 << 20), mallopt(M_ARENA_MAX, 1)])
    _done = bool(ok)
    return _done


def release_free_memory() -> bool:
    """glibc's malloc_trim(0): give the heap's free pages back to the system. The tuning above
    keeps freed memory for the next step, which suits training's repeated shapes; a server sees
    every batch shape and would hold its high-water mark, so it calls this between two searches,
    at most every 10 s (serve/batcher.py). False where the C library is not glibc."""
    trim = _glibc("malloc_trim")
    return trim is not None and bool(trim(0))


def _glibc(function: str):
    """A function of the C library, or None where it has none of that name (not glibc)."""
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), function)
    except (OSError, AttributeError):
        return None
