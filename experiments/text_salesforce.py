"""The Salesforce help strings (dev ids 1-1000, ../shared/data/markup_salesforce) through a release
with ``--markup xml``, scored by the dataset's official scripts/evaluate.py (#85): XML structure
accuracy and matching, NE&NUM precision and recall (numbers, and the English product terms of its
scripts/english_terms.json, as the reference writes them), BLEU and XML BLEU (Moses' tokenizer.perl
and multi-bleu.perl).

The scorer is not copied here: it is read from git directories of the public repositories
salesforce/localization-xml-mt and moses-smt/mosesdecoder (the ``fetch`` tool's mirrors by default)
into a scoring folder laid out as evaluate.py expects (scripts/, tools/mosesdecoder/scripts/), under
``--out``. The translation is ``rnnsearch translate MODEL --markup xml --beam 5`` in a subprocess of the
Python given (``--python``: another tree's, to measure it as it was); extra flags after ``--``.

Ids 1-1000 (``--half a``, the default) are the ones the issue scores; ids 1001-2000 (``--half b``, read
from the repository: not in ../shared) are the half to look at while building.

    python experiments/text_salesforce.py hansards_enfr_rnnsearch50 [--half b] [--out runs/salesforce] [-- --no-split]
    python experiments/text_salesforce.py MODEL --bounds   # what copying source items alone scores
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "markup_salesforce"
MIRROR = Path("/work/.mirror")
SALESFORCE = MIRROR / "salesforce+localization-xml-mt" / "repo"
MOSES = MIRROR / "moses-smt+mosesdecoder" / "repo"
SCORER = ("scripts/evaluate.py", "scripts/calc_bleu.sh", "scripts/english_terms.json")
MOSES_PARTS = ("scripts/tokenizer", "scripts/generic/multi-bleu.perl", "scripts/share/nonbreaking_prefixes")


def scorer(out: Path, salesforce: Path, moses: Path) -> Path:
    """A folder holding evaluate.py and what it runs, read from the two git directories."""
    folder = out / "scorer"
    for name in SCORER:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(subprocess.run(["git", "-C", str(salesforce), "show", f"HEAD:{name}"],
                                                   check=True, capture_output=True).stdout)
    (folder / "scripts" / "calc_bleu.sh").chmod(0o755)  # evaluate.py runs it as ./scripts/calc_bleu.sh
    tools = folder / "tools" / "mosesdecoder"
    tools.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(moses), "archive", "HEAD", *MOSES_PARTS], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tools)], input=archive, check=True)
    return folder


def strings(half: str, salesforce: Path, out: Path) -> tuple[Path, Path]:
    """The English strings (a file of lines) and the reference JSON of one half of the dev set: ``a``,
    ids 1-1000 (../shared: the half the issue scores), or ``b``, ids 1001-2000 (read from the
    repository: the half to look at while building)."""
    if half == "a":
        return DATA / "dev_a.en", DATA / "enfr_fr_dev_a.json"
    texts = {}
    for lang in ("en", "fr"):
        whole = json.loads(subprocess.run(["git", "-C", str(salesforce), "show", f"HEAD:data/enfr/enfr_{lang}_dev.json"],
                                          check=True, capture_output=True).stdout)
        texts[lang] = {k: v for k, v in whole["text"].items() if int(k.rsplit("_", 1)[1]) > 1000}
    source, target = out / "dev_b.en", out / "enfr_fr_dev_b.json"
    source.write_text("".join(texts["en"][k] + "\n" for k in texts["fr"]), encoding="utf-8")
    reference = {"lang": "fr", "type": "target", "text": texts["fr"]}
    target.write_text(json.dumps(reference, ensure_ascii=False), encoding="utf-8")
    return source, target


def subset(source: Path, target: Path, ids: str, out: Path) -> tuple[Path, Path]:
    """The strings whose id (the number ending the reference's key) is in FIRST-LAST, as strings() gives them."""
    first, last = (int(x) for x in ids.split("-"))
    reference = json.loads(target.read_text(encoding="utf-8"))
    keep = [n for n, k in enumerate(reference["text"]) if first <= int(k.rsplit("_", 1)[1]) <= last]
    if not keep:
        sys.exit(f"text_salesforce: no string of this half has an id in {ids}")
    lines = source.read_text(encoding="utf-8").splitlines()
    items = list(reference["text"].items())
    sub_source, sub_target = out / f"{source.stem}.{ids}.en", out / f"{target.stem}.{ids}.json"
    sub_source.write_text("".join(lines[n] + "\n" for n in keep), encoding="utf-8")
    sub_target.write_text(json.dumps({**reference, "text": dict(items[n] for n in keep)}, ensure_ascii=False),
                          encoding="utf-8")
    return sub_source, sub_target


def translate(model: str, python: str, extra: list[str], source: Path, out: Path) -> list[str]:
    """The outputs, one per string (the command's warnings to stderr)."""
    hyp = out / "hyp.fr"
    args = [python, "-m", "rnnsearch", "translate", model, "--markup", "xml", "--beam", "5",
            "--input", str(source), "--output", str(hyp), *extra]
    done = subprocess.run(args, stderr=subprocess.PIPE, text=True)
    (out / "warnings.txt").write_text(done.stderr)
    lines = done.stderr.splitlines()
    print(f"translate: exit status {done.returncode}; {sum('warning' in x for x in lines)} warnings"
          + (f"; {lines[-1]}" if lines and "not translated" in lines[-1] else ""))
    return hyp.read_text(encoding="utf-8").splitlines()


def score(folder: Path, outputs: list[str], target: Path) -> str:
    """evaluate.py's report on ``outputs`` against the reference JSON ``target``."""
    ids = list(json.loads(target.read_text(encoding="utf-8"))["text"])
    if len(outputs) != len(ids):
        sys.exit(f"text_salesforce: {len(outputs)} outputs for {len(ids)} strings")
    translation = folder / "translation.json"
    translation.write_text(json.dumps({"lang": "fr", "type": "translation", "text": dict(zip(ids, outputs))},
                                      ensure_ascii=False, indent=1), encoding="utf-8")
    done = subprocess.run([sys.executable, "scripts/evaluate.py", "--target", str(target.resolve()),
                           "--translation", translation.name, "--english_term", "scripts/english_terms.json"],
                          cwd=folder, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"text_salesforce: evaluate.py failed: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def bounds(folder: Path, source: Path, target: Path) -> None:
    """What copying alone can score on NE&NUM, by evaluate.py's own regular expressions: outputs made of
    (a) every item of the source string, (b) only the source items its reference also holds (an
    oracle: the most recall copying can reach; the rest are the reference's own French words that
    the English-term pattern reads, such as 'S' of 'Sélectionnez', and numbers it writes)."""
    sys.path.insert(0, str(folder / "scripts"))
    import evaluate  # the fetched script (its functions only: main is not run)
    terms = set(json.loads((folder / "scripts" / "english_terms.json").read_text()))

    def items(text: str) -> list[str]:
        for tag in ("<[a-z]+>", "</[a-z]+>"):
            text = re.sub(tag, " ", text)
        text = evaluate.de_escape(text)
        return re.findall(evaluate.num_regex, text) + [e for e in re.findall(evaluate.eng_regex, text) if e in terms]

    src = source.read_text(encoding="utf-8").splitlines()
    ref = list(json.loads(target.read_text(encoding="utf-8"))["text"].values())
    every = [" ".join(items(s)) for s in src]
    kept = [" ".join((Counter(items(s)) & Counter(items(r))).elements()) for s, r in zip(src, ref)]
    for name, outputs in (("every source item copied", every), ("the source items the reference keeps", kept)):
        lines = [x for x in score(folder, outputs, target).splitlines() if x.startswith("NE&NUM")]
        print(f"{name}: " + "; ".join(" ".join(x.split()) for x in lines))


def record(model: str, report: str, extra: list[str]) -> None:
    """The report's scores in the release's card ("Intended use and limitations") and release.json."""
    import datetime
    from rnnsearch.analysis.release import record_domain
    from rnnsearch.decoding import pretrained
    names = {"XML matching accuracy": "XML matching", "NE&NUM precision": "NE&NUM precision",
             "NE&NUM recall": "NE&NUM recall", "BLEU": "BLEU"}
    scores = {}
    for line in report.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in names:
            scores[names[key.strip()]] = round(float(value.strip().rstrip("%").strip()), 1 if "%" in value else 2)
    folder = pretrained.resolve(model).parent
    record_domain(folder, {"set": "Salesforce help strings, dev ids 1-1000 (--markup xml, beam 5, the dataset's "
                           "evaluate.py)", "scores": scores, "sentences": 1000, "beam": 5,
                           "command": " ".join(["python experiments/text_salesforce.py", model,
                                                *(["--", *extra] if extra else [])]),
                           "date": datetime.date.today().isoformat()})
    print(f"recorded in {folder / 'README.md'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--out", default="runs/salesforce", help="the scoring folder and the outputs go here")
    p.add_argument("--python", default=sys.executable, help="the Python whose rnnsearch translates")
    p.add_argument("--outputs", help="score these outputs (one line per string) instead of translating")
    p.add_argument("--half", choices=("a", "b"), default="a", help="a: ids 1-1000 (../shared); b: ids "
                   "1001-2000 (from the repository), the half to build on")
    p.add_argument("--ids", help="score these ids of the half only, FIRST-LAST (e.g. 801-1000: the strings a "
                   "model adapted on 1-800 did not see)")
    p.add_argument("--record", action="store_true", help="ids 1-1000 only: the scores into the release's card")
    p.add_argument("--bounds", action="store_true", help="print what copying source items alone scores")
    p.add_argument("--salesforce", type=Path, default=SALESFORCE, help="git directory of salesforce/localization-xml-mt")
    p.add_argument("--moses", type=Path, default=MOSES, help="git directory of moses-smt/mosesdecoder")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = p.parse_args(argv[:cut]), argv[cut + 1:]  # after --: flags for rnnsearch translate
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    folder = scorer(out, args.salesforce, args.moses)
    if args.record and (args.half != "a" or args.outputs or args.ids):
        sys.exit("text_salesforce: --record records a release's own translation of ids 1-1000 (no --half b, --outputs)")
    source, target = strings(args.half, args.salesforce, out)
    if args.ids:
        source, target = subset(source, target, args.ids, out)
    if args.bounds:
        return bounds(folder, source, target)
    if args.outputs:
        outputs = Path(args.outputs).read_text(encoding="utf-8").splitlines()
    else:
        outputs = translate(args.model, args.python, extra, source, out)
    report = score(folder, outputs, target)
    print(report, end="")
    if args.record:
        record(args.model, report, extra)


if __name__ == "__main__":
    main()
