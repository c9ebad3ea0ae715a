"""``make bench-shortlist``: a released model on the Hansards test with and without a lexical
shortlist (decoding/shortlist.py), float32 and int8, 1 and 2 threads, beam 5, each configuration in
its own process (decode_speed.py), one after the other in one run: output tokens/s, BLEU, and the
ratio of each to float32 over the whole vocabulary at the same thread count. The 2-thread runs
translate the whole test set (their BLEU is the one compared), the 1-thread runs its first
``--limit-1`` sentences.

    python benchmarks/bench_shortlist.py [--model hansards_enfr_rnnsearch50] [--lexicon LEX]
        [--sizes 100,100 ...] [--links PHARAOH] [--out docs/results/shortlist_hansards.md]

Without --lexicon it builds one into runs/bench_shortlist/ (``rnnsearch lexicon --links ...
--per-source 100``: the counts of eflomal's links of all training pairs, as Marian's shortlists
count fast_align's; the links made first where missing, about 10 minutes) and reuses it next time.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

from common import machine, say

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "hansards"
WORK = ROOT / "runs" / "bench_shortlist"


def lexicon(model: str, links: Path) -> Path:
    """runs/bench_shortlist/lexicon.tsv from eflomal's links of the training pairs (made first, as
    ``recipes/hansards.sh links`` makes them, where missing), built if missing."""
    out = WORK / "lexicon.tsv"
    if out.exists():
        return out
    WORK.mkdir(parents=True, exist_ok=True)
    if not links.exists():
        say(f"making {links} (eflomal on the training pairs: about 10 minutes)")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "eflomal>=2"], check=True)
        subprocess.run([sys.executable, "experiments/guided_links.py", "configs/hansards_rnnsearch.yaml", "--out",
                        str(links.parent), "--set", f"data.dir={DATA}", "--set",
                        f"data.token_cache={ROOT / 'runs' / 'hansards' / 'cache'}"], check=True, cwd=ROOT)
    for lang in ("en", "fr"):
        with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f, \
                open(WORK / f"train.{lang}", "w", encoding="utf-8") as g:
            g.writelines(f)
    say(f"building {out} from {links}")
    subprocess.run([sys.executable, "-m", "rnnsearch", "lexicon", model, "--src", str(WORK / "train.en"), "--tgt",
                    str(WORK / "train.fr"), "--links", str(links), "--per-source", "100", "--out", str(out)],
                   check=True, cwd=ROOT)
    return out


def decode(model: str, threads: int, limit: int, quantize: str | None, shortlist: tuple | None) -> dict:
    cmd = [sys.executable, "benchmarks/decode_speed.py", model, str(DATA / "test.en"), "--ref", str(DATA / "test.fr"),
           "--beam", "5"] + (["--limit", str(limit)] if limit else []) + (["--quantize", quantize] if quantize else [])
    if shortlist:
        lex, frequent, best = shortlist
        cmd += ["--shortlist", str(lex), "--shortlist-frequent", str(frequent), "--shortlist-best", str(best)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        sys.exit(f"decode_speed.py failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="hansards_enfr_rnnsearch50")
    p.add_argument("--lexicon", help="from `rnnsearch lexicon --per-source N` (default: built, see above)")
    p.add_argument("--links", default=str(ROOT / "runs" / "hansards" / "align" / "train.links"),
                   help="eflomal's links of the training pairs for the built lexicon (made where missing)")
    p.add_argument("--sizes", nargs="+", default=["100,100"], help="FREQUENT,BEST pairs to measure")
    p.add_argument("--limit-1", type=int, default=1000, help="sentences of the 1-thread runs")
    p.add_argument("--limit-2", type=int, default=0, help="sentences of the 2-thread runs (0: all)")
    p.add_argument("--out", help="write the table (Markdown) and the rows (.json) here")
    args = p.parse_args()
    lex = Path(args.lexicon) if args.lexicon else lexicon(args.model, Path(args.links))
    sizes = [tuple(int(x) for x in s.split(",")) for s in args.sizes]
    configs = [(q, None) for q in (None, "int8")] + [(q, (lex, f, b)) for q in (None, "int8") for f, b in sizes]
    rows = []
    for threads, limit in ((2, args.limit_2), (1, args.limit_1)):
        for quantize, shortlist in configs:
            r = decode(args.model, threads, limit, quantize, shortlist)
            row = {"threads": threads, "sentences": r["sentences"], "weights": quantize or "float32",
                   "shortlist": f"{shortlist[1]} frequent + {shortlist[2]} per source word" if shortlist else "none",
                   "tokens_per_s": r["beam"]["tokens_per_s"], "bleu": r["beam"]["bleu"],
                   "output_tokens": r["beam"]["output_tokens"], "seconds": r["beam"]["seconds"]}
            rows.append(row)
            say(json.dumps(row))
    table = render(rows, args, lex)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n", encoding="utf-8")
        Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def render(rows: list[dict], args, lex: Path) -> str:
    lines = [f"{args.model} on the Hansards test, beam 5, {date.today()}, {machine(2)}; each configuration in "
             f"its own process, one after the other (`python benchmarks/bench_shortlist.py "
             f"--sizes {' '.join(args.sizes)}`); lexicon {lex}.", "",
             "| threads | sentences | weights | shortlist | output tokens/s | ratio | BLEU | output tokens |",
             "|---:|---:|---|---|---:|---:|---:|---:|"]
    for r in rows:
        base = next(b for b in rows if b["threads"] == r["threads"] and b["weights"] == "float32"
                    and b["shortlist"] == "none")
        lines.append(f"| {r['threads']} | {r['sentences']:,} | {r['weights']} | {r['shortlist']} | "
                     f"{r['tokens_per_s']:,.0f} | {r['tokens_per_s'] / base['tokens_per_s']:.2f}x | {r['bleu']:.2f} | "
                     f"{r['output_tokens']:,} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
