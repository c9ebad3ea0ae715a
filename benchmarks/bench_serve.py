"""``make bench-serve``: load on ``rnnsearch serve`` from N concurrent clients for S seconds, each
sending real Multi30k test sentences (one per request), with batching on and then off, one run.
``make bench-serve SOAK=600`` (``--soak 600``): batching on only, for that long, sampling the
server's RSS every second, and checking 0 errors, RSS growth after the first minute <= 5% (the
highest RSS of the last minute against that of the second: the server hands free pages back between
searches, so a single sample swings with the search in flight), and the p99 latency of the last
minute within 20% of the first minute's.

    python benchmarks/bench_serve.py [--checkpoint CKPT] [--clients 32] [--seconds 60] [--soak S] [--record]

Without --checkpoint it uses the `make bench` model (runs/bench/rnnsearch/best.pt) or trains one
(configs/bench_m30k.yaml, --train-minutes). Prints sentences/s, latency percentiles, errors and the
server's mean batch size per mode, and the ratio; --record writes them as its section of BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import httpx
import numpy as np

from common import machine, record, say

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "multi30k"


def checkpoint(args) -> Path:
    if args.checkpoint:
        return Path(args.checkpoint)
    made = ROOT / "runs" / "bench" / "rnnsearch" / "best.pt"
    if made.exists():
        return made
    out = ROOT / "runs" / "bench_serve" / "model"
    if not (out / "best.pt").exists():
        say(f"no checkpoint: training configs/bench_m30k.yaml for {args.train_minutes} min into {out}")
        subprocess.run([sys.executable, "-m", "rnnsearch", "train", "configs/bench_m30k.yaml", "--out", str(out),
                        "--set", f"data.dir={DATA}", "--set", f"train.max_minutes={args.train_minutes}",
                        "--set", "train.progress=false"], cwd=ROOT, check=True)
    return out / "best.pt"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(ckpt: Path, port: int, batching: bool) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "rnnsearch", "serve", str(ckpt), "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd + ([] if batching else ["--no-batching"]), cwd=ROOT)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
        if proc.poll() is not None:
            raise SystemExit(f"rnnsearch serve exited with {proc.returncode}")
    proc.kill()
    raise SystemExit("rnnsearch serve did not start within 120 s")


async def load(url: str, sentences: list[str], clients: int, seconds: float, timeline: list | None = None) -> dict:
    """``clients`` loops, each posting one sentence at a time until the deadline; ``timeline`` gets
    (seconds since the start, latency) of every answer."""
    latencies, errors, done = [], [], 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as http:
        before = (await http.get("/metrics.json")).json()
        start = time.perf_counter()
        deadline = start + seconds

        async def client(k: int) -> None:
            nonlocal done
            i = k
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                try:
                    r = await http.post("/translate", json={"text": sentences[i % len(sentences)]})
                    if r.status_code != 200:
                        errors.append(f"{r.status_code}: {r.text[:200]}")
                    elif time.perf_counter() <= deadline:
                        latencies.append(time.perf_counter() - t0)
                        done += 1
                        if timeline is not None:
                            timeline.append((t0 - start, latencies[-1]))
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                i += clients

        await asyncio.gather(*(client(k) for k in range(clients)))
        elapsed = min(time.perf_counter(), deadline) - start
        after = (await http.get("/metrics.json")).json()
    searches = after["searches"] - before["searches"]
    lat = np.asarray(latencies) * 1000
    return {"sentences": done, "seconds": round(elapsed, 1), "sentences_per_s": round(done / elapsed, 2),
            "p50_ms": round(float(np.percentile(lat, 50)), 1), "p95_ms": round(float(np.percentile(lat, 95)), 1),
            "p99_ms": round(float(np.percentile(lat, 99)), 1), "errors": len(errors), "first_errors": errors[:3],
            "mean_batch_size": round((after["sentences"] - before["sentences"]) / max(searches, 1), 2)}


def measure(ckpt: Path, sentences: list[str], batching: bool, clients: int, seconds: float) -> dict:
    port = free_port()
    server = start_server(ckpt, port, batching)
    try:
        url = f"http://127.0.0.1:{port}"
        asyncio.run(load(url, sentences, min(clients, 4), 3))  # warm-up, not counted
        return asyncio.run(load(url, sentences, clients, seconds))
    finally:
        server.terminate()
        server.wait(30)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def soak(ckpt: Path, sentences: list[str], clients: int, seconds: float) -> dict:
    """Batching on, ``seconds`` of load; RSS sampled every second, its peak and latency by minute."""
    port = free_port()
    server = start_server(ckpt, port, True)
    samples, timeline, stop = [], [], False

    async def sample_rss():
        start = time.perf_counter()
        while not stop:
            samples.append((time.perf_counter() - start, rss_mib(server.pid)))
            await asyncio.sleep(1)

    async def run():
        nonlocal stop
        sampler = asyncio.create_task(sample_rss())
        result = await load(f"http://127.0.0.1:{port}", sentences, clients, seconds, timeline)
        stop = True
        await sampler
        return result
    try:
        asyncio.run(load(f"http://127.0.0.1:{port}", sentences, min(clients, 4), 3))  # warm-up, not counted
        result = asyncio.run(run())
    finally:
        server.terminate()
        server.wait(60)
    minutes = int(seconds // 60)
    peaks = [max(r for t, r in samples if m * 60 <= t < (m + 1) * 60) for m in range(minutes)]  # per minute
    p99 = lambda lo, hi: float(np.percentile([lat for t, lat in timeline if lo <= t < hi], 99)) * 1000  # noqa: E731
    first, last = p99(0, 60), p99(seconds - 60, seconds)
    result.update(rss_after_warmup_mib=round(peaks[1], 1), rss_end_mib=round(peaks[-1], 1),
                  rss_peak_mib=round(max(peaks), 1), rss_growth=round(peaks[-1] / peaks[1] - 1, 4),
                  p99_first_minute_ms=round(first, 1), p99_last_minute_ms=round(last, 1),
                  p99_change=round(last / first - 1, 4), server_exit=server.returncode,
                  rss_peak_by_minute=[round(r, 1) for r in peaks])
    return result


def soak_table(r: dict, clients: int, seconds: float) -> str:
    checks = [("errors", r["errors"] == 0, f"{r['errors']}"),
              ("RSS growth after the first minute (peak of the last minute against the second's)", r["rss_growth"] <= 0.05,
               f"{r['rss_after_warmup_mib']} -> {r['rss_end_mib']} MiB ({100 * r['rss_growth']:+.1f}%)"),
              ("p99 latency, last minute against the first", abs(r["p99_change"]) <= 0.20,
               f"{r['p99_first_minute_ms']} -> {r['p99_last_minute_ms']} ms ({100 * r['p99_change']:+.1f}%)")]
    rows = [f"{clients} clients, {seconds:.0f} s, batching on: {r['sentences']} sentences, "
            f"{r['sentences_per_s']} sentences/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, "
            f"mean batch {r['mean_batch_size']}, peak RSS {r['rss_peak_mib']} MiB; the server exited with "
            f"{r['server_exit']} on SIGTERM. Peak RSS of each minute (MiB, sampled every second): "
            f"{', '.join(f'{v:,.0f}' for v in r['rss_peak_by_minute'])}.", "", "| check | target | measured | met |",
            "|---|---|---|---|"]
    targets = ["0", "<= 5%", "within 20%"]
    rows += [f"| {name} | {t} | {value} | {'yes' if ok else 'NO'} |" for (name, ok, value), t in zip(checks, targets)]
    return "\n".join(rows) + "\n"


def table(results: dict, clients: int) -> str:
    rows = ["| batching | clients | sentences/s | p50 ms | p95 ms | p99 ms | errors | mean batch |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode, r in results.items():
        rows.append(f"| {mode} | {clients} | {r['sentences_per_s']:.1f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | "
                    f"{r['p99_ms']:.0f} | {r['errors']} | {r['mean_batch_size']} |")
    ratio = results["on"]["sentences_per_s"] / results["off"]["sentences_per_s"]
    return "\n".join(rows) + f"\n\nbatching on / off: **{ratio:.2f}x** sentences/s (target: at least 2x)\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--train-minutes", type=float, default=10)
    parser.add_argument("--sentences", default=str(DATA / "test_2016_flickr.en"))
    parser.add_argument("--record", action="store_true", help="write the table as this bench's section of BENCHMARKS.md")
    parser.add_argument("--soak", type=float, default=0, help="seconds of one long run with batching on (>= 180)")
    args = parser.parse_args()
    ckpt = checkpoint(args)
    sentences = [s for s in Path(args.sentences).read_text(encoding="utf-8").splitlines() if s.strip()]
    if args.soak:
        return run_soak(args, ckpt, sentences)
    say(f"{ckpt}: {len(sentences)} sentences from {args.sentences}; {args.clients} clients, {args.seconds:.0f} s a mode")
    results = {}
    for mode, batching in (("on", True), ("off", False)):
        results[mode] = measure(ckpt, sentences, batching, args.clients, args.seconds)
        say(f"batching {mode}: {json.dumps(results[mode])}")
    text = table(results, args.clients)
    print(text)
    if args.record:
        command = "make bench-serve" if args.clients == 32 and args.seconds == 60 else " ".join(sys.argv)
        model = ckpt.relative_to(ROOT) if ckpt.is_relative_to(ROOT) else ckpt
        record("Serving: `rnnsearch serve` under load",
               f"{date.today().isoformat()}. Command: `{command}`; model `{model}`"
               f"; machine: {machine(0).rsplit(';', 1)[0]}; clients and server on the same machine; "
               f"one sentence per request from {Path(args.sentences).name}, the model's beam.\n\n{text}")
    return 0 if all(r["errors"] == 0 for r in results.values()) else 1


def run_soak(args, ckpt: Path, sentences: list[str]) -> int:
    if args.soak < 180:
        raise SystemExit("--soak needs at least 180 seconds (a first and a last minute after warm-up)")
    say(f"{ckpt}: soak, {args.clients} clients for {args.soak:.0f} s, batching on")
    r = soak(ckpt, sentences, args.clients, args.soak)
    say(json.dumps(r))
    text = soak_table(r, args.clients, args.soak)
    print(text)
    if args.record:
        record("Serving soak: `rnnsearch serve` for minutes on end",
               f"{date.today().isoformat()}, {args.soak / 60:.0f} minutes. "
               f"Command: `make bench-serve SOAK={args.soak:.0f}"
               f"{f' CHECKPOINT={args.checkpoint}' if args.checkpoint else ''}`; "
               f"model `{ckpt.relative_to(ROOT) if ckpt.is_relative_to(ROOT) else ckpt}`"
               f"; machine: {machine(0).rsplit(';', 1)[0]}; clients and server on the same machine; "
               f"one sentence per request from {Path(args.sentences).name}.\n\n{text}")
    ok = r["errors"] == 0 and r["rss_growth"] <= 0.05 and abs(r["p99_change"]) <= 0.20
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
