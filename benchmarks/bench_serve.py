"""``make bench-serve``: load on ``rnnsearch serve`` from N concurrent clients for S seconds, each
sending real Multi30k test sentences (one per request), with batching on and then off, one run.

    python benchmarks/bench_serve.py [--checkpoint CKPT] [--clients 32] [--seconds 60] [--record]

Without --checkpoint it uses the `make bench` model (runs/bench/rnnsearch/best.pt) or trains one
(configs/bench_m30k.yaml, --train-minutes). Prints sentences/s, latency percentiles, errors and the
server's mean batch size per mode, and the ratio; --record appends them to BENCHMARKS.md.
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

from bench import machine, say

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


async def load(url: str, sentences: list[str], clients: int, seconds: float) -> dict:
    """``clients`` loops, each posting one sentence at a time until the deadline."""
    latencies, errors, done = [], [], 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as http:
        before = (await http.get("/metrics")).json()
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
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                i += clients

        await asyncio.gather(*(client(k) for k in range(clients)))
        elapsed = min(time.perf_counter(), deadline) - start
        after = (await http.get("/metrics")).json()
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
    parser.add_argument("--record", action="store_true", help="append the table to BENCHMARKS.md")
    args = parser.parse_args()
    ckpt = checkpoint(args)
    sentences = [s for s in Path(args.sentences).read_text(encoding="utf-8").splitlines() if s.strip()]
    say(f"{ckpt}: {len(sentences)} sentences from {args.sentences}; {args.clients} clients, {args.seconds:.0f} s a mode")
    results = {}
    for mode, batching in (("on", True), ("off", False)):
        results[mode] = measure(ckpt, sentences, batching, args.clients, args.seconds)
        say(f"batching {mode}: {json.dumps(results[mode])}")
    text = table(results, args.clients)
    print(text)
    if args.record:
        command = "make bench-serve" if args.clients == 32 and args.seconds == 60 else " ".join(sys.argv)
        with open(ROOT / "BENCHMARKS.md", "a", encoding="utf-8") as f:
            f.write(f"\n## Serving: `rnnsearch serve` under load ({date.today().isoformat()})\n\n"
                    f"Command: `{command}`; model `{ckpt.relative_to(ROOT) if ckpt.is_relative_to(ROOT) else ckpt}`"
                    f"; machine: {machine(0).rsplit(';', 1)[0]}; clients and server on the same machine; "
                    f"one sentence per request from {Path(args.sentences).name}, the model's beam.\n\n{text}")
        say("appended to BENCHMARKS.md")
    return 0 if all(r["errors"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
