"""What this CPU does with bfloat16, as PyTorch and oneDNN report it.

bf16 products are fast only where the CPU multiplies bf16 natively (x86: AVX512-BF16 or AMX-BF16;
ARM: the BF16 extension). Elsewhere PyTorch emulates them, and oneDNN's packed bf16 weights
(model/packed.py) refuse to exist at all: "bf16 path needs the cpu support avx_ne_convert or
avx512bw, avx512vl and avx512dq". The answer is read from what the libraries themselves decide
with, not from /proc/cpuinfo, so that it is right on ARM and macOS too and follows the knobs that
force an instruction set down:

- ``ATEN_CPU_CAPABILITY`` (``avx2``, ``default``): ATen's kernels; below AVX-512 we count bf16 as
  emulated, whatever the hardware has.
- ``ONEDNN_MAX_CPU_ISA`` (``AVX2``): oneDNN's; ``torch.ops.mkldnn._is_mkldnn_bf16_supported``
  then says no, and so do we.

``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2`` makes an AVX-512 machine behave as an AVX2
one for both (the second test pass of ``make test`` runs so).

The cost of emulation, measured (BENCHMARKS.md, "bf16 on a CPU without native bf16"), goes into the
one warning a user gets: :data:`EMULATED_TRAINING` and :data:`EMULATED_DECODING`. Native is not
always faster: an Intel Xeon with AVX512-BF16 but no AMX trained the Hansards RNNsearch-50 at 0.61x
float32's speed in bf16 (the probe below read 0.65 there), an AMD EPYC with AVX512-BF16 at 2.59x
(the probe: 3.7). So ``bf16_speedup`` times both on products of training's size, the same warning
names a native bf16 slower than float32, and the recipes train in bf16 only where it pays
(``bf16_pays``).
"""
from __future__ import annotations

import functools
import time

import torch

# bf16 against float32 with both instruction sets forced to AVX2 on an AVX-512 machine (2 cores):
# the speed of bf16 as a fraction of float32's (benchmarks/bench_bf16.py, BENCHMARKS.md).
EMULATED_TRAINING = "bf16 autocast trained the bench model at 0.04x float32's target tokens/s (68 against 1,872)"
EMULATED_DECODING = "bf16 weights decoded at 0.24x float32's output tokens/s (beam 5; 320 against 1,327)"


def capabilities() -> dict:
    """torch.cpu.get_capabilities() (PyTorch >= 2.8) or the few flags older releases expose."""
    if hasattr(torch.cpu, "get_capabilities"):
        return dict(torch.cpu.get_capabilities())
    import platform
    caps = {"architecture": platform.machine().lower()}
    for name, probe in (("avx512_bf16", "_is_avx512_bf16_supported"), ("amx_bf16", "_is_amx_tile_supported")):
        caps[name] = bool(getattr(torch.cpu, probe, lambda: False)())
    return caps


def onednn_bf16() -> bool:
    """Whether oneDNN takes its bf16 path here (PyTorch's own check, which ONEDNN_MAX_CPU_ISA lowers)."""
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


@functools.cache
def bf16_native() -> bool:
    """Whether bf16 products run natively: oneDNN takes its bf16 path, ATen's kernels are not forced
    below AVX-512 on x86, and the CPU has bf16 dot products (AVX512-BF16 or AMX-BF16; ARM's BF16)."""
    caps = capabilities()
    arch = str(caps.get("architecture", "")).lower()
    if arch in ("x86_64", "amd64", "x86"):
        level = torch.backends.cpu.get_cpu_capability()
        dot = level.startswith("AVX512") and (caps.get("avx512_bf16") or caps.get("amx_bf16"))
    elif arch in ("aarch64", "arm64"):
        dot = caps.get("bf16") or caps.get("sve_bf16")
    else:
        dot = False
    return bool(dot) and onednn_bf16()


@functools.cache
def packed_bf16() -> bool:
    """Whether oneDNN's packed bf16 linear (model/packed.py) exists in this PyTorch and runs on this
    CPU: bf16 is native and one tiny product through it succeeds (tried once per process)."""
    ops = torch.ops.mkldnn
    if not (torch.backends.mkldnn.is_available() and hasattr(ops, "_reorder_linear_weight")
            and hasattr(ops, "_linear_pointwise") and bf16_native()):
        return False
    try:
        weight = torch.ones(4, 4, dtype=torch.bfloat16)
        packed = ops._reorder_linear_weight(weight, 4)
        out = ops._linear_pointwise(torch.ones(2, 4, dtype=torch.bfloat16), packed, None, "none", [], "")
    except RuntimeError:
        return False
    return bool((out.float() == 4).all())


# Products the size of training's (80 sentences of about 25 tokens against the GRUs' gates and a
# vocabulary's slice): what ``bf16_speedup`` times both ways.
PROBE = ((2048, 512, 1536), (2048, 256, 8192))
# Below this measured speed-up the recipes train in float32: native bf16 is not always faster (the
# module's docstring: probe 0.65 where bf16 trained at 0.61x, 3.7 where it trained at 2.59x).
PAYS = 1.2


@functools.cache
def bf16_speedup(threads: int = 1, repeats: int = 3) -> float:
    """float32's time over bf16 autocast's for the products of :data:`PROBE` on ``threads``
    threads, the best of ``repeats`` runs of each product each way, alternating (about 2 seconds;
    on one thread in this thread's CPU time, so that a busy machine does not skew it). 0.0 where
    bf16 is not native: emulated bf16 is known to be slow (:data:`EMULATED_TRAINING`), not timed."""
    if not bf16_native():
        return 0.0
    # one thread: the products run on this thread, whose CPU time other processes do not inflate
    clock = time.thread_time if threads == 1 else time.perf_counter
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = torch.Generator().manual_seed(0)
        pairs = [(torch.randn(m, k, generator=g), torch.randn(n, k, generator=g)) for m, k, n in PROBE]
        best = {(bf16, i): float("inf") for bf16 in (False, True) for i in range(len(pairs))}
        for round_ in range(repeats + 1):  # round 0 warms oneDNN's primitives up and is not counted
            for bf16 in (False, True):
                for i, (x, w) in enumerate(pairs):
                    start = clock()
                    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                        torch.nn.functional.linear(x, w)  # (m, n)
                    if round_:
                        best[bf16, i] = min(best[bf16, i], clock() - start)
        return round(sum(best[False, i] for i in range(len(pairs))) / sum(best[True, i] for i in range(len(pairs))), 2)
    finally:
        torch.set_num_threads(before)


def bf16_pays() -> bool:
    """Whether to train in bf16 here: native, and measured at least :data:`PAYS` times float32's speed."""
    return bf16_speedup() >= PAYS


def describe() -> str:
    """One line for logs and benchmarks: ATen's level, oneDNN's bf16 path, native bf16."""
    return (f"ATen {torch.backends.cpu.get_cpu_capability()}, oneDNN bf16 {'yes' if onednn_bf16() else 'no'}, "
            f"native bf16 {'yes' if bf16_native() else 'no'}")


def emulated_warning(what: str, cost: str) -> str | None:
    """The one warning that ``what`` runs bf16 emulated here, with its measured ``cost``, or
    natively but slower than float32 (``bf16_speedup`` below 1); None when bf16 is as fast or faster."""
    if bf16_native():
        speedup = bf16_speedup()
        if speedup >= 1.0:
            return None
        return (f"{what}: bf16 is native on this CPU ({describe()}) but its products ran at {speedup:.2f}x "
                f"float32's speed in a probe just now (rnnsearch.cpu.bf16_speedup). float32 is likely faster here.")
    return (f"{what}: this CPU has no native bf16 ({describe()}); PyTorch emulates it, and on such a CPU "
            f"{cost} (BENCHMARKS.md). float32 is likely faster here.")
