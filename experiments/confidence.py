"""A threshold for ``--min-confidence`` (#85), chosen on held-out data: the per-unit log-probability
(text/confidence.py) below which a translation is flagged as far from what the model knows.

Lines the release never trained on, translated with its defaults: in domain, the Hansards dev set; out
of domain, WMT newstest and (En->Fr) the Salesforce help strings with their tags taken out. The
threshold is chosen on one part of each (Hansards dev lines 1-400, newstest2012 1-400, Salesforce ids
1001-1400) as the one that best tells in-domain lines from the others (balanced accuracy), then
reported on parts not used to choose it (Hansards dev 401-800, newstest2014 1-400, Salesforce ids
1-400): the share of each set flagged, and the sentence chrF of flagged and kept lines.

    python experiments/confidence.py hansards_enfr_rnnsearch50 [--lines 400]
"""
from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
from pathlib import Path

import sacrebleu

from rnnsearch import Translator
from rnnsearch.text.confidence import confidence
from rnnsearch.text.pipeline import translate_lines

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SALESFORCE = Path("/work/.mirror/salesforce+localization-xml-mt/repo")


def plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def salesforce(half: str, n: int) -> tuple[list[str], list[str]]:
    """n English strings and their references from ids 1-1000 (a, ../shared) or 1001-2000 (b, the repository)."""
    if half == "a":
        d = DATA / "markup_salesforce"
        src, ref = (d / "dev_a.en").read_text().splitlines(), (d / "dev_a.fr").read_text().splitlines()
    else:
        texts = [json.loads(subprocess.run(["git", "-C", str(SALESFORCE), "show", f"HEAD:data/enfr/enfr_{x}_dev.json"],
                                           check=True, capture_output=True).stdout)["text"] for x in ("en", "fr")]
        ids = [k for k in texts[1] if int(k.rsplit("_", 1)[1]) > 1000]
        src, ref = [texts[0][k] for k in ids], [texts[1][k] for k in ids]
    return [plain(s) for s in src[:n]], [plain(r) for r in ref[:n]]


def sets(src: str, tgt: str, n: int) -> dict[str, dict[str, tuple[list[str], list[str]]]]:
    """{"choose": {name: (sources, references)}, "report": {...}}; the first set of each is in domain."""
    def lines(path: Path, first: int = 0) -> list[str]:
        return path.read_text(encoding="utf-8").splitlines()[first:first + n]
    hans, wmt = DATA / "hansards", DATA / "wmt14"
    out = {"choose": {"hansards dev 1-": (lines(hans / f"dev.{src}"), lines(hans / f"dev.{tgt}")),
                      "newstest2012": (lines(wmt / f"newstest2012.{src}"), lines(wmt / f"newstest2012.{tgt}"))},
           "report": {f"hansards dev {n + 1}-": (lines(hans / f"dev.{src}", n), lines(hans / f"dev.{tgt}", n)),
                      "newstest2014": (lines(wmt / f"newstest2014.{src}"), lines(wmt / f"newstest2014.{tgt}"))}}
    if (src, tgt) == ("en", "fr"):
        out["choose"]["salesforce 1001-"] = salesforce("b", n)
        out["report"]["salesforce 1-"] = salesforce("a", n)
    return out


def best_threshold(inside: list[float], outside: list[float]) -> float:
    """The threshold t (flag x < t) of the best balanced accuracy, midway between two scores."""
    values = sorted(set(inside + outside))
    cuts = [(a + b) / 2 for a, b in zip(values, values[1:])]

    def balanced(t: float) -> float:
        return (sum(x >= t for x in inside) / len(inside) + sum(x < t for x in outside) / len(outside)) / 2
    return max(cuts, key=balanced)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--lines", type=int, default=400, help="lines of each set")
    args = p.parse_args()
    translator = Translator.from_pretrained(args.model)
    src, tgt = translator.src_codec.lang, translator.tgt_codec.lang
    scored = {}
    for part, named in sets(src, tgt, args.lines).items():
        for name, (sources, refs) in named.items():
            outs = [t for chunk in translate_lines(translator, sources) for t in chunk]
            scored[part, name] = [(c.logprob, sacrebleu.sentence_chrf(t.text, [r]).score)
                                  for t, r in zip(outs, refs) if (c := confidence(t)) is not None]
    choose = [v for (part, _), v in scored.items() if part == "choose"]
    threshold = best_threshold([x for x, _ in choose[0]], [x for rows in choose[1:] for x, _ in rows])
    print(f"{args.model}: threshold {threshold:.3f} (per-unit log-probability; chosen on the 'choose' sets)")
    print("| part | set | lines | flagged | chrF flagged | chrF kept |\n|---|---|---:|---:|---:|---:|")
    for (part, name), rows in scored.items():
        low = [c for x, c in rows if x < threshold]
        kept = [c for x, c in rows if x >= threshold]
        mean = lambda v: f"{sum(v) / len(v):.1f}" if v else "-"  # noqa: E731
        print(f"| {part} | {name} | {len(rows)} | {100 * len(low) / len(rows):.1f}% | {mean(low)} | {mean(kept)} |")


if __name__ == "__main__":
    main()
