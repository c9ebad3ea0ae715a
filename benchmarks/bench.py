"""``make bench``: rnnsearch against JoeyNMT 2.3.0 and OpenNMT-py 3.5.1 on Multi30k En->Fr, one
after the other in one run, same machine, same threads, same data and SentencePiece model
(benchmarks/README.md).

    python benchmarks/bench.py [--quick] [--record] [--peers joey,onmt] [--joey-venv DIR] [--onmt-venv DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import flops
from common import DATA, ROOT, machine, record, rel, run, say
from peers import PEERS, decode_peer, train_peer
from report import render, targets

CONFIG = ROOT / "configs" / "bench_m30k.yaml"


def warm_memory(gib: int) -> float:
    """First-touch ``gib`` GiB once, so that no trainer pays the fresh VM's page faults."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", f"import numpy; numpy.ones({gib} * 2**27)"], check=True)
    return time.monotonic() - start


def matmul_ceiling(env: dict, dtype: str = "float32") -> float:
    """GFLOP/s of the best of ten 2048^3 products in ``dtype``, in a fresh process."""
    code = (f"import time, torch\na = torch.randn(2048, 2048, dtype=torch.{dtype}); "
            f"b = torch.randn(2048, 2048, dtype=torch.{dtype})\n"
            "[a @ b for _ in range(3)]\nbest = 1e9\nfor _ in range(10):\n"
            "    t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)\n"
            "print(2 * 2048 ** 3 / best / 1e9)")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def ceilings(env: dict) -> tuple[float, float]:
    """(float32, bfloat16) 2048^3 matmul GFLOP/s."""
    return matmul_ceiling(env), matmul_ceiling(env, "bfloat16")


def bench_precision() -> str:
    from rnnsearch.config import load
    return "bfloat16 autocast" if load(CONFIG).train.bf16 else "float32"


def shared_sentencepiece(work: Path) -> tuple[Path, list[str]]:
    """One joint BPE model with 8000 pieces on the raw training text, for both systems."""
    import sentencepiece as spm
    from rnnsearch.data.io import read_lines
    from rnnsearch.data.tokenize import train_sentencepiece
    model = work / "spm.model"
    if not model.exists():
        lines = read_lines(DATA / "train.en") + read_lines(DATA / "train.fr")
        model.write_bytes(train_sentencepiece(lines, 8000, "bpe"))
    sp = spm.SentencePieceProcessor(model_file=str(model))
    return model, [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def steady_rate(points: list[tuple[float, float]], warmup_fraction: float = 0.2) -> float:
    """Tokens/s between the first point after the warm-up and the last: points are
    (elapsed seconds, cumulative target tokens)."""
    if len(points) < 2:
        return float("nan")  # too short a run to measure a rate
    end = points[-1][0]
    after = [p for p in points if p[0] >= warmup_fraction * end]
    if len(after) < 2:  # a very short run: everything after the first entry
        after = points
    (t0, n0), (t1, n1) = after[0], after[-1]
    return (n1 - n0) / (t1 - t0)


def output_tokens(lines: list[str], spm_model: Path) -> int:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    return sum(len(sp.encode(line)) for line in lines)


def bleu(hyp_file: Path, n: int) -> float:
    from rnnsearch.data.io import read_lines
    from rnnsearch.analysis.evaluate import corpus_bleu
    return corpus_bleu(read_lines(hyp_file), read_lines(DATA / "test_2016_flickr.fr")[:n])[0]


def piece_lengths(spm_model: Path) -> dict:
    """Mean source length and source/target ratio in pieces (</s> included) over the training
    pairs both systems keep (at most 50 pieces a side)."""
    import sentencepiece as spm
    from rnnsearch.data.io import read_lines
    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    pairs = [(len(sp.encode(s)), len(sp.encode(t))) for s, t in
             zip(read_lines(DATA / "train.en"), read_lines(DATA / "train.fr"))]
    kept = [(s + 1, t + 1) for s, t in pairs if 0 < s <= 50 and 0 < t <= 50]
    src, tgt = sum(p[0] for p in kept), sum(p[1] for p in kept)
    return {"src_len": src / len(kept), "src_per_tgt": src / tgt}


# -- the two systems ----------------------------------------------------------------------------
def train_rnnsearch(work: Path, spm_model: Path, minutes: float, env: dict) -> dict:
    out = work / "rnnsearch"
    cmd = [sys.executable, "-m", "rnnsearch", "train", rel(CONFIG), "--out", rel(out),
           "--set", f"vocab.sp_model={rel(spm_model)}", "--set", f"train.max_minutes={minutes}",
           "--set", "train.progress=false", "--set", "train.log_every=20"]
    result = run(cmd, env, work / "rnnsearch_train.log")
    entries = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    points = [(e["elapsed_s"], e["tgt_tokens"]) for e in entries if "tgt_tokens" in e]
    epochs = max((e.get("epoch", 0) for e in entries), default=0)
    return {**result, "tok_per_s": steady_rate(points), "updates": entries[-1]["step"], "epochs": epochs,
            "checkpoint": out / "last.pt", "command": " ".join(cmd[1:]), "precision": bench_precision()}


def decode_rnnsearch(work: Path, ckpt: Path, beam: int, limit: int, env: dict) -> dict:
    hyps = work / f"rnnsearch_beam{beam}.fr"
    cmd = [sys.executable, "benchmarks/decode_speed.py", str(ckpt), str(DATA / "test_2016_flickr.en"),
           "--beam", str(beam), "--out", str(hyps)] + (["--limit", str(limit)] if limit else [])
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=ROOT)
    return {"seconds": json.loads(out.stdout.strip().splitlines()[-1])["beam"]["seconds"], "hyps": hyps}


def decoding(result: dict, spm_model: Path, n: int) -> dict:
    from rnnsearch.data.io import read_lines
    lines = read_lines(result["hyps"])
    tokens = output_tokens(lines, spm_model)
    return {"sent_per_s": n / result["seconds"], "tok_per_s": tokens / result["seconds"],
            "mean_len": tokens / n, "bleu": bleu(result["hyps"], n)}


def main() -> None:  # long function: the bench's steps in order, each one line
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="2 minutes of training each, 200 test sentences")
    p.add_argument("--record", action="store_true", help="write the table as this bench's section of BENCHMARKS.md")
    p.add_argument("--peers", default="joey,onmt", help="comma-separated: joey, onmt (default both)")
    p.add_argument("--joey-venv", default=str(ROOT / "benchmarks" / ".joey-venv"))
    p.add_argument("--onmt-venv", default=str(ROOT / "benchmarks" / ".onmt-venv"))
    p.add_argument("--work", default=str(ROOT / "runs" / "bench"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--minutes", type=float, help="training budget (default 20, quick 2)")
    p.add_argument("--warm-gib", type=int, default=18,
                   help="GiB to first-touch before measuring (default 18; less where other processes hold memory)")
    args = p.parse_args()
    names = [x for x in args.peers.split(",") if x]
    if not names or any(x not in PEERS for x in names):
        p.error(f"--peers: a comma-separated list of {', '.join(PEERS)}; got {args.peers!r}")
    minutes, limit = (2.0, 200) if args.quick else (20.0, 0)
    minutes = args.minutes or minutes
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    import shutil
    shutil.rmtree(work / "rnnsearch", ignore_errors=True)
    threads = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
           "PYTHONPATH": f"{ROOT / 'src'}:{ROOT / 'benchmarks'}"}
    info = {"machine": machine(args.threads), "date": date.today().isoformat(), "minutes": minutes,
            "quick": args.quick, "torch": _torch_version(), "command": " ".join(["python"] + sys.argv)}
    say(f"machine: {info['machine']}")
    if "bf16" not in info["machine"] and bench_precision() != "float32":
        say(f"warning: this CPU has no native bfloat16 (avx512_bf16/amx_bf16), and {rel(CONFIG)} trains "
            "under bf16 autocast: expect it slower than float32 here (train.bf16: false)")
    info["warm_gib"] = args.warm_gib
    info["warm_s"] = warm_memory(args.warm_gib) if args.warm_gib else 0.0
    say(f"warmed {args.warm_gib} GiB of memory in {info['warm_s']:.0f} s")
    measured = [ceilings(env)]
    say(f"2048^3 matmul: float32 {measured[0][0]:.1f}, bfloat16 {measured[0][1]:.1f} GFLOP/s")
    spm_model, pieces = shared_sentencepiece(work)
    lengths = piece_lengths(spm_model)
    ours = train_rnnsearch(work, spm_model, minutes, env)
    say(f"rnnsearch: {ours['tok_per_s']:.0f} tok/s, {ours['updates']} updates, peak {ours['peak_rss_mib']:.0f} MiB")
    peers = {name: train_peer(name, args, work, spm_model, pieces, minutes, env, limit, lengths) for name in names}
    n = limit or len((DATA / "test_2016_flickr.en").read_text().splitlines())
    for beam in (5, 1):
        ours[f"beam{beam}"] = decoding(decode_rnnsearch(work, ours["checkpoint"], beam, limit, env), spm_model, n)
        for name, peer in peers.items():
            peer[f"beam{beam}"] = decoding(decode_peer(name, peer, args, work, spm_model, pieces, beam, limit, env),
                                           spm_model, n)
        say(f"beam {beam}: rnnsearch {ours[f'beam{beam}']}; "
            + "; ".join(f"{PEERS[k]} {v[f'beam{beam}']}" for k, v in peers.items()))
    # the ceiling again after the runs: the machine's speed drifts, and the higher of the two
    # measurements (the stricter yardstick) is the one the fractions use
    measured.append(ceilings(env))
    say(f"2048^3 matmul again: float32 {measured[1][0]:.1f}, bfloat16 {measured[1][1]:.1f} GFLOP/s")
    info["ceilings"] = measured
    info["ceiling"], info["ceiling_bf16"] = max(c[0] for c in measured), max(c[1] for c in measured)
    from rnnsearch import checkpoint
    ours["parameters"] = checkpoint.load(ours["checkpoint"])["meta"]["parameters"]
    ours["flops"] = flops.rnnsearch(256, 512, 512, 512, 256, len(pieces), **lengths)["train"]
    labelled = {PEERS[k]: v for k, v in peers.items()}
    table = render(info, ours, labelled, n, lengths)
    checks = targets(info, ours, peers["joey"]) if "joey" in peers else []
    print(table)
    print("\n".join(checks))
    (work / "result.md").write_text(table, encoding="utf-8")
    if args.record:
        names = {"joey": "JoeyNMT 2.3.0", "onmt": "OpenNMT-py 3.5.1"}
        record(f"`make bench`: training and decoding against {' and '.join(names[p] for p in peers)}",
               table + "\n".join(checks))


def _torch_version() -> str:
    import torch
    return str(torch.__version__)


if __name__ == "__main__":
    main()
