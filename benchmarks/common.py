"""What the benchmarks share: the machine's description, a timestamped log line, and running a
system's command with its output to a file, its wall time and peak memory."""
from __future__ import annotations

import os
import platform
import signal
import subprocess
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "multi30k"


def record(title: str, body: str, path: Path = ROOT / "BENCHMARKS.md") -> None:
    """BENCHMARKS.md keeps one section per benchmark, its latest run: the section ``## title`` (up to
    the next ``## ``) becomes ``body``, or is added at the end. Older runs stay in git's history."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    section = f"## {title}\n\n{body.strip()}\n"
    heading = f"\n## {title}\n"
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start + 1] + section + (text[end:] if end >= 0 else "")
    path.write_text(text, encoding="utf-8")
    say(f"{path.name}: section '{title}' written")


def say(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def machine(threads: int) -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
    extras = [f for f in ("avx512f", "avx512_bf16", "amx_bf16") if f" {f}" in flags]
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu}, {os.cpu_count()} cores ({', '.join(extras) or 'no AVX-512'}), {mem:.0f} GiB; "
            f"{threads} thread{'s' if threads != 1 else ''}")


def run(cmd: list[str], env: dict, log: Path, limit_s: float | None = None, marker: str | None = None,
        marker_file: Path | None = None, interrupted_ok: bool = False, stop: str = "int") -> dict:
    """Run ``cmd`` with output to ``log``; with ``limit_s``, send SIGINT that many seconds after
    ``marker`` appears in ``marker_file`` (training has started; ``stop="term"``: SIGTERM). Returns the exit status, wall
    time, the seconds since the marker appeared (``marked_s``), the process's peak resident memory
    (from wait4), and ``stopped``: whether this process was sent SIGTERM meanwhile (it passes it on to
    ``cmd`` and waits for it: a trainer saves its checkpoint). A failure is an error, except, with
    ``interrupted_ok``, the exit of a process that SIGINT stopped (OpenNMT-py's trainer), or of one
    stopped by a SIGTERM this process was sent (passed on, or sent to the whole process group)."""
    start, asked = time.monotonic(), []
    previous = signal.signal(signal.SIGTERM, lambda *_: asked.append(True))
    try:
        with open(log, "w") as out:
            # SIGINT back to its default: a background job's children start with it ignored
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            began, interrupted = None, False
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if began is None and marker_file is not None and marker_file.exists() \
                        and marker in marker_file.read_text(errors="replace"):
                    began = time.monotonic()
                late = limit_s is not None and began is not None and time.monotonic() - began >= limit_s
                if (late or asked) and not interrupted:
                    proc.send_signal(signal.SIGTERM if stop == "term" or asked else signal.SIGINT)
                    interrupted = True
                time.sleep(0.1)  # the wall time to a tenth of a second
    finally:
        signal.signal(signal.SIGTERM, previous)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and not (asked or (interrupted_ok and interrupted)):  # asked: cmd got it too (a group's)
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}); see {log}")
    return {"wall_s": time.monotonic() - start, "peak_rss_mib": usage.ru_maxrss / 1024, "stopped": bool(asked),
            "marked_s": time.monotonic() - began if began is not None else 0.0}


def rel(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (for readable commands)."""
    return os.path.relpath(path, ROOT) if Path(path).resolve().is_relative_to(ROOT) else str(path)


def write_config(cfg: dict, path: Path) -> Path:
    """A peer's config as YAML (keys in the order given)."""
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path


def mean_rate(log: list[dict], warmup_fraction: float = 0.2) -> float:
    """The mean of a peer's own logged tok/s after the first ``warmup_fraction`` of its lines."""
    if not log:
        raise RuntimeError("no training line in the peer's log")
    warm = log[int(len(log) * warmup_fraction):]
    return sum(e["tok_per_s"] for e in warm) / len(warm)
