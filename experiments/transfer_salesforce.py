"""Tags into a translator's own translation on the Salesforce help strings (#88): each English string
with inline XML, its reference French with the tags taken out, the source's tags placed back into it
(``rnnsearch transfer-tags``), scored against the reference's own tags by exact tag position, the
metric of Zenkel, Wuebker and DeNero (2021), read from the public repository lilt/markup-tag-evaluation
(the ``fetch`` tool's mirror; not copied here), permissive: a string whose reference holds other tags
than its source, or whose output's text is not the reference's, counts as inconsistent.

Four readings of the alignment: the En->Fr release's alignment head, the heads of both directions
symmetrised (``--reverse`` release: beta_ij times beta_ji), eflomal's links (grow-diag-final-and,
trained on the strings with ``--pairs`` Hansards pairs beside them; a peer, ``pip install eflomal``),
and the attention; the model's readings with identical tokens linked (analysis/transfer_tags.py).
Segments/s: the strings with tags through transfer_tags, the second time (the first makes each batch
shape's kernels), on this machine's threads;
eflomal's: its whole run over the strings and the Hansards pairs.

Ids 1-1000 (``--half a``, ../shared) are the ones the issue scores; ids 1001-2000 (``--half b``, from
the dataset's repository) the half to look at while building.

    python experiments/transfer_salesforce.py [--half a] [--out runs/transfer] [--pairs 200000]
"""
from __future__ import annotations

import argparse
import html
import json
import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from aer import eflomal_links as run_eflomal  # noqa: E402  (experiments/, this script's folder)
from text_salesforce import SALESFORCE, strings  # noqa: E402

from rnnsearch.analysis.transfer_tags import read_pairs, transfer_tags  # noqa: E402
from rnnsearch.decoding.translator import Translator  # noqa: E402

LILT = Path("/work/.mirror/lilt+markup-tag-evaluation/repo")
METRIC = ("markup_tag_evaluation/__init__.py", "markup_tag_evaluation/constants.py",
          "markup_tag_evaluation/parse_tags.py", "markup_tag_evaluation/tag_evaluation.py")


def metric(lilt: Path, out: Path):
    """lilt/markup-tag-evaluation's ``evaluate_segments`` and ``extract_positions``, read from its git directory."""
    for name in METRIC:
        (out / "lilt" / name).parent.mkdir(parents=True, exist_ok=True)
        (out / "lilt" / name).write_bytes(subprocess.run(["git", "-C", str(lilt), "show", f"HEAD:{name}"], check=True,
                                                         capture_output=True).stdout)
    sys.path.insert(0, str(out / "lilt"))
    from markup_tag_evaluation.parse_tags import extract_positions
    from markup_tag_evaluation.tag_evaluation import TagMetric, evaluate_segments
    return evaluate_segments, extract_positions, TagMetric


def tagged_pairs(half: str, out: Path) -> list[tuple[str, str, str]]:
    """(id, tagged source, tagged reference) of each string of the half whose source holds a tag."""
    source, target = strings(half, SALESFORCE, out)
    refs = json.loads(target.read_text(encoding="utf-8"))["text"]
    return [(k, s, r) for (k, r), s in zip(refs.items(), source.read_text(encoding="utf-8").splitlines()) if "<" in s]


def eflomal_links(pairs, n_pairs: int, work: Path) -> tuple[list[set], float]:
    """eflomal's grow-diag-final-and links (source, target) over each pair's tokens, and its wall time (s)."""
    test = [(" ".join(w.lower() for w in p.src_tokens), " ".join(w.lower() for w in p.tgt_tokens)) for p in pairs]
    work.mkdir(parents=True, exist_ok=True)
    links, seconds = run_eflomal(n_pairs, test, work, reuse=False)
    return [set(x) for x in links["grow-diag-final-and"]], seconds


def score(scorer, refs: list[str], hyps: list[str]) -> dict:
    """The metric's totals over the strings (permissive: an inconsistent string counts apart)."""
    import contextlib
    import io
    evaluate_segments, extract, TagMetric = scorer
    with contextlib.redirect_stdout(io.StringIO()):  # permissive mode prints each inconsistent string
        found = evaluate_segments(reference_with_tags_list=refs, hypothesis_with_tags_list=hyps,
                                  tag_extraction_function=extract, permissive=True)
    total = sum(found, start=TagMetric.create_empty("en", "fr"))
    return {"accuracy": total.accuracy(), "correct": total.num_correct_tags, "tags": total.num_ref_tags,
            "inconsistent": total.number_of_inconsistent_sentences(),
            "inconsistent_tags": total.num_tags_inconsistent_sentences,
            "text": total.num_inconsistent_text, "tag_count": total.num_inconsistent_tag_count,
            "strings": total.num_sentences, "char_diff": total.average_character_difference()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="hansards_enfr_rnnsearch50")
    p.add_argument("--reverse", default="hansards_fren_rnnsearch50", help="the other direction's model, for the "
                   "symmetrised heads ('': none, that row left out: a model with no reverse, as the subword release)")
    p.add_argument("--half", choices=("a", "b"), default="a")
    p.add_argument("--pairs", type=int, default=200000, help="Hansards pairs eflomal reads beside the strings")
    p.add_argument("--no-eflomal", action="store_true")
    p.add_argument("--out", type=Path, default=Path("runs/transfer"))
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scorer = metric(LILT, args.out)
    data = tagged_pairs(args.half, args.out)
    sources, refs = [s for _, s, _ in data], [r for _, _, r in data]
    plains = [html.unescape(scorer[1](r)[0]) for r in refs]  # the reference without its tags, as plain text
    translator = Translator.from_pretrained(args.model)
    reverse = Translator.from_pretrained(args.reverse) if args.reverse else None
    rows = []
    for reading in ("head", "symmetrised", "attention") if reverse else ("head", "attention"):
        transfer_tags(translator, sources, plains, reading=reading, reverse=reverse)  # warm: each batch shape once
        start = time.perf_counter()
        done = transfer_tags(translator, sources, plains, reading=reading, reverse=reverse)
        seconds = time.perf_counter() - start
        rows.append({"reading": reading, "seconds": seconds, **score(scorer, refs, [d.text for d in done])})
        (args.out / f"hyp.{reading}.fr").write_text("".join(d.text + "\n" for d in done), encoding="utf-8")
        print(json.dumps(rows[-1]), flush=True)
    if not args.no_eflomal:
        links, seconds = eflomal_links(read_pairs(translator, sources, plains, "xml"), args.pairs, args.out / "eflomal")
        done = transfer_tags(translator, sources, plains, links=links)
        rows.append({"reading": "eflomal", "seconds": seconds, **score(scorer, refs, [d.text for d in done])})
        print(json.dumps(rows[-1]), flush=True)
    (args.out / f"transfer_{args.half}.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(table(rows, len(data), args))


def table(rows: list[dict], n: int, args) -> str:
    lines = ["| alignment | exact tag position | tags placed exactly | strings inconsistent (tags, text) | segments/s |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['reading']} | {r['accuracy']:.1%} | {r['correct']}/{r['tags']} | {r['inconsistent']} "
                     f"({r['tag_count']}, {r['text']}) | {n / r['seconds']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
