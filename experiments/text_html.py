"""HTML fragments through a released model with ``--markup html`` (#85), scored by what a reader of
the page would see (``rnnsearch.analysis.markup_check.damage``): tags (with their attributes),
comments and entities lost or added, elements that held text left empty (list items merged), tags
written inside a word, and lines not translated.

Reads experiments/data/html_en.jsonl (fragments of our own writing; dev: the issue's cases and
others looked at while building; held-out: looked at once, after which rules changed; held-out 2:
written then, and measured once, at the end) and translates them with ``rnnsearch translate
MODEL --markup html`` in a subprocess of the Python given (``--python``: another tree's, to measure
it as it was), or scores the outputs of an earlier run (``--outputs FILE``, one line per fragment).

    python experiments/text_html.py hansards_enfr_rnnsearch50 [--python PY] [--outputs FILE] [--show]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rnnsearch.analysis.markup_check import damage

DATA = Path(__file__).parent / "data" / "html_en.jsonl"
KINDS = ("lost or added", "emptied", "inside a word")


def translate(model: str, fragments: list[str], python: str, beam: int | None) -> tuple[list[str], int]:
    """The outputs of ``rnnsearch translate --markup html`` and its exit status."""
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as f:
        f.write("".join(line + "\n" for line in fragments))
    args = [python, "-m", "rnnsearch", "translate", model, "--markup", "html", "--input", f.name]
    done = subprocess.run(args + (["--beam", str(beam)] if beam else []), capture_output=True, text=True)
    Path(f.name).unlink()
    sys.stderr.write(done.stderr)
    return done.stdout.splitlines(), done.returncode


def kind(fault: str) -> str:
    """Which of KINDS a fault of ``damage`` is."""
    return next((k for k in KINDS[1:] if fault.endswith(k)), KINDS[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--python", default=sys.executable, help="the Python whose rnnsearch translates")
    ap.add_argument("--outputs", help="score these outputs (one line per fragment) instead of translating")
    ap.add_argument("--beam", type=int, default=None)
    ap.add_argument("--show", action="store_true", help="print each fragment, its output and its faults")
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    fragments = [r["html"] for r in rows]
    if args.outputs:
        outputs, status = Path(args.outputs).read_text(encoding="utf-8").splitlines(), None
    else:
        outputs, status = translate(args.model, fragments, args.python, args.beam)
    if len(outputs) != len(fragments):
        raise SystemExit(f"{len(outputs)} outputs for {len(fragments)} fragments")
    print("| split | fragments | damaged | tags, comments, entities lost or added | elements emptied "
          "| tags inside a word | empty outputs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for split in dict.fromkeys(r["split"] for r in rows):
        mine = [(r["html"], o) for r, o in zip(rows, outputs) if r["split"] == split]
        faults = [damage(src, out) for src, out in mine]
        counts = {k: sum(kind(f) == k for fs in faults for f in fs) for k in KINDS}
        print(f"| {split} | {len(mine)} | {sum(bool(fs) for fs in faults)} | "
              + " | ".join(str(counts[k]) for k in KINDS) + f" | {sum(not o.strip() for _, o in mine)} |")
        if args.show:
            for (src, out), fs in zip(mine, faults):
                print(f"\n    {src}\n    {out}\n    {'; '.join(fs) or 'ok'}")
    if status is not None:
        print(f"\nexit status {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
