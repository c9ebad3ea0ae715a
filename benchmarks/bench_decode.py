"""``make bench-decode``: the decoding configurations of one model side by side, in one run, each
in its own process (its own peak RSS): torch float32 (the reference), torch bf16, torch int8,
onnxruntime float32 and onnxruntime int8. For each: greedy and beam 5 sentences/s and output
tokens/s, BLEU, peak RSS, and single-sentence latency (batch 1, beam 5, p50/p99). Then the effect of
averaging the last 5 saves and of a 2-model ensemble on BLEU, and, with --hansards CKPT, BLEU parity
of the low-precision configurations on the Hansards test.

    python benchmarks/bench_decode.py [--model-a CKPT] [--model-b CKPT] [--hansards CKPT]
        [--baseline DIR [--rounds 3]] [--record]

--baseline DIR races an older checkout of the project (e.g. `git worktree add /tmp/pre ca43cad`, the
code before issue #17) against today's configurations at beam 5, alternating rounds in one run.

Without --model-a/--model-b it trains two bench models (configs/bench_m30k.yaml, seeds 1234 and
4321, one shared SentencePiece model, train.keep_last=5) into runs/bench_decode/.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

from common import machine, record, say

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
TEST = (DATA / "multi30k" / "test_2016_flickr.en", DATA / "multi30k" / "test_2016_flickr.fr")
CONFIGS = {"torch float32": {}, "torch bf16": {"dtype": "bf16"}, "torch int8": {"quantize": "int8"},
           "onnxruntime float32": {"backend": "onnx"}, "onnxruntime int8": {"backend": "onnx", "quantize": "int8"},
           # larger batches: larger products for the bf16 units; spinning OpenMP threads
           # (OMP_WAIT_POLICY=ACTIVE) wait for the next of the step's many small parallel regions
           # without sleeping, which suits a machine given to the translator (not one shared)
           "torch bf16, batch 128": {"dtype": "bf16", "batch-size": 128},
           "torch bf16, batch 128, OMP_WAIT_POLICY=ACTIVE": {"dtype": "bf16", "batch-size": 128,
                                                             "env": {"OMP_WAIT_POLICY": "ACTIVE"}}}


def decode(ckpt, src, ref, threads: int, greedy=True, latency=0, limit=0, **options) -> dict:
    cmd = [sys.executable, "benchmarks/decode_speed.py", str(ckpt), str(src), "--ref", str(ref), "--beam", "5"]
    cmd += [f"--{k}={v}" for k, v in options.items() if k not in ("ensemble", "env")]
    cmd += ["--ensemble", *map(str, options["ensemble"])] if options.get("ensemble") else []
    cmd += (["--greedy"] if greedy else []) + (["--latency", str(latency)] if latency else [])
    cmd += ["--limit", str(limit)] if limit else []
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), **options.get("env", {})}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_beam(directory: Path, ckpt: Path, threads: int) -> dict:
    """Beam 5 on the test set by an older checkout of this project (``git worktree add DIR COMMIT``),
    with its own benchmarks/decode_speed.py and its own code (PYTHONPATH=DIR/src): output tokens/s
    (</s> included, as decode_speed.py counts them) and BLEU."""
    hyps = ROOT / "runs" / "bench_decode" / "baseline.hyp"
    cmd = [sys.executable, str(directory / "benchmarks" / "decode_speed.py"), str(ckpt), str(TEST[0]),
           "--beam", "5", "--out", str(hyps)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(directory / "src")}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=directory)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if isinstance(result.get("beam"), dict):  # the format of today's decode_speed.py
        speed = result["beam"]["tokens_per_s"]
    else:  # before #17: seconds and model_tokens (</s> excluded)
        speed = (result["model_tokens"] + result["sentences"]) / result["seconds"]
    from rnnsearch.analysis.evaluate import corpus_bleu
    from rnnsearch.data.io import read_lines
    return {"tokens_per_s": round(speed, 1), "bleu": round(corpus_bleu(read_lines(hyps), read_lines(TEST[1]))[0], 2)}


def head_to_head(directory: Path, ckpt: Path, threads: int, rounds: int) -> list[str]:
    """The older checkout against today's configurations, beam 5, alternating, ``rounds`` times."""
    names = ["torch float32", "torch bf16", "torch bf16, batch 128", "torch bf16, batch 128, OMP_WAIT_POLICY=ACTIVE"]
    speeds = {name: [] for name in ["baseline"] + names}
    for r in range(rounds):
        base = baseline_beam(directory, ckpt, threads)
        speeds["baseline"].append(base["tokens_per_s"])
        for name in names:
            speeds[name].append(decode(ckpt, *TEST, threads, greedy=False, **CONFIGS[name])["beam"]["tokens_per_s"])
        say(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in speeds.items()))
    mean = {k: sum(v) / len(v) for k, v in speeds.items()}
    rows = [f"Head to head, beam 5 output tokens/s, {rounds} alternating rounds: the baseline is `{directory}` "
            f"(commit {_commit(directory)}, its own decode_speed.py and code, default settings, BLEU "
            f"{base['bleu']:.2f}).", "", "| configuration | " + " | ".join(f"round {i + 1}" for i in range(rounds))
            + " | mean | against the baseline |", "|---|" + "---:|" * (rounds + 2)]
    for name, values in speeds.items():
        rows.append(f"| {name} | " + " | ".join(f"{v:,.0f}" for v in values)
                    + f" | {mean[name]:,.0f} | {mean[name] / mean['baseline']:.2f}x |")
    return rows + [""]


def _commit(directory: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=directory, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def train_model(name: str, seed: int, spm: Path, minutes: float) -> Path:
    out = ROOT / "runs" / "bench_decode" / name
    if not (out / "best.pt").exists():
        say(f"training {out} ({minutes} min)")
        subprocess.run([sys.executable, "-m", "rnnsearch", "train", "configs/bench_m30k.yaml", "--out", str(out),
                        "--set", f"vocab.sp_model={spm}", "--set", f"train.max_minutes={minutes}", "--set",
                        f"train.seed={seed}", "--set", "train.keep_last=5", "--set", "train.save_every=100",
                        "--set", "train.progress=false"], cwd=ROOT, check=True)
    return out / "best.pt"


def speed_table(results: dict) -> str:
    rows = ["| configuration | beam 5 sent/s | beam 5 tok/s | beam 5 BLEU | greedy sent/s | greedy tok/s | greedy BLEU "
            "| latency p50 / p99 ms | peak RSS MiB |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        b, g, lat = r["beam"], r["greedy"], r["latency"]
        rows.append(f"| {name} | {b['sentences_per_s']} | {b['tokens_per_s']:,.0f} | {b['bleu']:.2f} | "
                    f"{g['sentences_per_s']} | {g['tokens_per_s']:,.0f} | {g['bleu']:.2f} | {lat['p50_ms']:.0f} / "
                    f"{lat['p99_ms']:.0f} | {r['peak_rss_mib']:.0f} |")
    ref = results["torch float32"]["beam"]
    rows += ["", "Against torch float32 in this run (beam 5 output tokens/s; BLEU difference):", ""]
    for name, r in results.items():
        rows.append(f"- {name}: {r['beam']['tokens_per_s'] / ref['tokens_per_s']:.2f}x, "
                    f"{r['beam']['bleu'] - ref['bleu']:+.2f} BLEU")
    return "\n".join(rows)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-a")
    p.add_argument("--model-b")
    p.add_argument("--hansards", help="a Hansards checkpoint: BLEU parity of every configuration on its test")
    p.add_argument("--hansards-lines", type=int, default=0, help="the first N Hansards test sentences (0 = all)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--train-minutes", type=float, default=20)
    p.add_argument("--parity-only", action="store_true", help="with --hansards: only the Hansards parity")
    p.add_argument("--baseline", help="an older checkout (git worktree) to race at beam 5 (head to head)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of the head to head")
    p.add_argument("--record", action="store_true")
    args = p.parse_args()
    if args.parity_only:
        return parity_only(args)
    spm = ROOT / "runs" / "bench_decode" / "spm.model"
    a = Path(args.model_a) if args.model_a else train_model("model_a", 1234, spm, args.train_minutes)
    b = Path(args.model_b) if args.model_b else train_model("model_b", 4321, spm, args.train_minutes)
    results = {}
    for name, options in CONFIGS.items():
        results[name] = decode(a, *TEST, args.threads, latency=200, **options)
        say(f"{name}: {json.dumps(results[name])}")
    text = [f"Model `{a.relative_to(ROOT) if a.is_relative_to(ROOT) else a}`, test_2016_flickr (1000 sentences), "
            f"{args.threads} threads; machine: {machine(args.threads)}.", "", speed_table(results), ""]
    if args.baseline:
        text += head_to_head(Path(args.baseline).resolve(), a.resolve(), args.threads, args.rounds)
    text += averaging_and_ensemble(a, b, args.threads)
    if args.hansards:
        text += hansards_parity(Path(args.hansards), args.threads, args.hansards_lines)
    report = "\n".join(text) + "\n"
    print(report)
    if args.record:
        record("Decoding for deployment", f"{date.today().isoformat()}. Command: `{' '.join(sys.argv)}`.\n\n" + report)
    return 0


def parity_only(args) -> int:
    if not args.hansards:
        raise SystemExit("--parity-only needs --hansards CKPT")
    report = "\n".join(hansards_parity(Path(args.hansards), args.threads, args.hansards_lines)) + "\n"
    print(report)
    if args.record:
        record("Decoding parity on the Hansards test", f"{date.today().isoformat()}. Command: `{' '.join(sys.argv)}`; "
               f"machine: {machine(args.threads)}.\n\n" + report)
    return 0


def averaging_and_ensemble(a: Path, b: Path, threads: int) -> list[str]:
    from rnnsearch.decoding.average import average_checkpoints
    rows = ["", "| model | beam 5 BLEU |", "|---|---:|"]
    kept = sorted(a.parent.glob("step-*.pt"))[-5:]
    scores = {}
    if len(kept) >= 2:
        average_checkpoints([str(k) for k in kept], a.parent / "average_last5.pt")
        scores[f"last save ({kept[-1].name})"] = kept[-1]
        scores[f"average of the last {len(kept)} saves"] = a.parent / "average_last5.pt"
    scores.update({"member A (best.pt)": a, "member B (best.pt)": b})
    for name, ckpt in scores.items():
        rows.append(f"| {name} | {decode(ckpt, *TEST, threads, greedy=False)['beam']['bleu']:.2f} |")
    ensemble = decode(a, *TEST, threads, greedy=False, ensemble=[b])["beam"]
    rows.append(f"| ensemble A + B | {ensemble['bleu']:.2f} |")
    return ["Averaging and ensembling (beam 5, test_2016_flickr):"] + rows + [""]


def hansards_parity(ckpt: Path, threads: int, lines: int) -> list[str]:
    src, ref = DATA / "hansards" / "test.en", DATA / "hansards" / "test.fr"
    rows = ["| configuration | beam 5 BLEU | difference |", "|---|---:|---:|"]
    base = None
    for name, options in CONFIGS.items():
        bleu = decode(ckpt, src, ref, threads, greedy=False, limit=lines, **options)["beam"]["bleu"]
        base = bleu if base is None else base
        rows.append(f"| {name} | {bleu:.2f} | {bleu - base:+.2f} |")
        say(f"hansards {name}: {bleu}")
    what = f"the first {lines}" if lines else "all"
    return [f"Parity on the Hansards test ({what} sentences), `{ckpt}`:", ""] + rows + [""]


if __name__ == "__main__":
    sys.exit(main())
