"""The Python parts of recipes/moses.sh (Moses itself is never imported): each phase's compute from
GNU time, the MERT curve from mert-moses.pl's working directory, moses.ini without the machine's
paths, the scores of Moses' outputs as Table 1 scores the RNN rows (sacreBLEU on the detokenised
text; No UNK over the sentences without an unknown word under a release's vocabularies), decoding
speed, and the export to docs/results/hansards/moses/.

    .venv/bin/python recipes/moses_peer.py export --out runs/moses --data ../shared/data \
        --vocab models/hansards_enfr_rnnsearch50 --threads 2 --to docs/results/hansards/moses
    .venv/bin/python recipes/moses_peer.py score --hyp H --src S --ref R --vocab RELEASE
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

PHASES = ("build", "data", "align", "lm", "train", "tune", "test")
TIME_FIELDS = {"user": "User time (seconds)", "system": "System time (seconds)",
               "peak_kib": "Maximum resident set size (kbytes)", "wall": "Elapsed (wall clock) time (h:mm:ss or m:ss)",
               "status": "Exit status"}
BEST_POINT = re.compile(r"Best point:\s*([\s\d.eE+-]+?)\s*=>\s*([-\d.eE+]+)")
ABS_PATH = re.compile(r"(?<![\w.~$-])/(?:[^\s/=]+/)*([^\s/=]+)")


def clock_seconds(text: str) -> float:
    """GNU time's elapsed clock, ``1:02:03`` or ``2:03.45`` -> seconds."""
    seconds = 0.0
    for part in text.strip().split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def gnu_time(text: str) -> dict:
    """The fields of ``/usr/bin/time -v``'s report: CPU core-hours of all the processes (user +
    system), peak resident memory of the largest one (GiB), wall seconds and the exit status."""
    fields = {}
    for line in text.splitlines():
        name, _, value = line.strip().rpartition(": ")
        for key, label in TIME_FIELDS.items():
            if name == label:
                fields[key] = value
    missing = [TIME_FIELDS[k] for k in TIME_FIELDS if k not in fields]
    if missing:
        raise ValueError(f"not a GNU time -v report: no {missing[0]!r}")
    cpu = float(fields["user"]) + float(fields["system"])
    return {"core_hours": cpu / 3600, "peak_gib": int(fields["peak_kib"]) / 2**20,
            "wall_s": clock_seconds(fields["wall"]), "status": int(fields["status"])}


def phase_compute(compute_dir: Path) -> dict[str, dict]:
    """{phase: gnu_time(...)} for each phase of recipes/moses.sh with a report, in the phases' order,
    each followed by its steps (``train.N``: train-model.perl's step N), then the decoding runs
    (``decode.SET.THREADS``)."""
    found: dict[str, list[Path]] = {}
    for p in sorted(compute_dir.glob("*.time"), key=lambda p: (len(p.name), p.name)):
        found.setdefault(p.stem.partition("+")[0], []).append(p)  # tune+2.time: tune's second invocation
    order = [k for phase in PHASES for k in [phase] * (phase in found) + sorted(
        (k for k in found if k.startswith(phase + ".")), key=lambda k: int(k.rpartition(".")[2]))]
    order += sorted(k for k in found if k not in order)
    return {name: _summed([gnu_time(p.read_text()) for p in found[name]]) for name in order}


def _summed(reports: list[dict]) -> dict:
    """One phase's invocations as one: their core-hours and wall time added, the largest peak, the last status."""
    if len(reports) == 1:
        return reports[0]
    return {"core_hours": sum(r["core_hours"] for r in reports), "peak_gib": max(r["peak_gib"] for r in reports),
            "wall_s": sum(r["wall_s"] for r in reports), "status": reports[-1]["status"], "invocations": len(reports)}


def mert_curve(tune_dir: Path) -> list[dict]:
    """Each MERT iteration of mert-moses.pl's working directory (``runN.mert.log`` of a run with its decode,
    ``runN.out``): its number, the
    BLEU (0-1, Moses' own tokenised BLEU on the n-best lists gathered so far) at the best point
    found, and that point's weights."""
    runs = []
    for log in tune_dir.glob("run*.mert.log"):
        number = re.fullmatch(r"run(\d+)\.mert\.log", log.name)
        decoded = number and (tune_dir / f"run{number[1]}.out").exists()  # mert-moses.pl copies the last log
        found = BEST_POINT.findall(log.read_text(errors="replace")) if decoded else []  # on to a run it never decodes
        if found:
            weights, bleu = found[-1]
            runs.append({"run": int(number[1]), "bleu": float(bleu), "weights": [float(w) for w in weights.split()]})
    return sorted(runs, key=lambda r: r["run"])


def without_paths(ini: str) -> str:
    """moses.ini with every absolute path cut to its file name (``path=/a/b/phrase-table.gz`` ->
    ``path=phrase-table.gz``), so that it says what the model is and not where it lay."""
    return ABS_PATH.sub(lambda m: m[1], ini)


def source_words(path: Path) -> int:
    """Whitespace-separated words of a raw (untokenised) source file."""
    return sum(len(line.split()) for line in path.open(encoding="utf-8"))


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def score(hyp: Path, src: Path, ref: Path, vocab: str) -> dict:
    """Table 1's numbers for a finished output: sacreBLEU All, No UNK (sentences with no unknown
    word on either side under the release ``vocab``'s vocabularies, as for the RNN rows), chrF and
    BLEU by source length."""
    from rnnsearch.analysis.evaluate import score_translations
    from rnnsearch.decoding.translator import Translator
    hyps, srcs, refs = read_lines(hyp), read_lines(src), read_lines(ref)
    codecs = Translator.from_pretrained(vocab)
    return score_translations(hyps, refs, srcs, codecs.src_codec, codecs.tgt_codec)


SYSTEMS = {"decode": "Moses", "rnnsearch": "rnnsearch"}


def speed(compute: dict[str, dict], sets: dict[str, Path], timed: str = "speed") -> list[dict]:
    """Source words per second of each decode of the set ``timed`` (``decode.SET.THREADS``: Moses, model filtered
    to the set; ``rnnsearch.SET.THREADS``: the release at beam 12), the whole process, loading included; the
    other sets' decodes may have shared the machine (``test``), their compute is in the phases' table only."""
    rows = []
    for name, c in compute.items():
        parts = name.split(".")
        if len(parts) == 3 and parts[0] in SYSTEMS and parts[1] == timed and parts[1] in sets:
            words = source_words(sets[parts[1]])
            rows.append({"system": SYSTEMS[parts[0]], "set": parts[1], "threads": int(parts[2]), "words": words,
                         "wall_s": c["wall_s"],
                         "words_per_s": words / c["wall_s"], "peak_gib": c["peak_gib"]})
    return rows


def markdown(compute: dict[str, dict], curve: list[dict], scores: dict[str, dict], speeds: list[dict]) -> list[str]:
    """The summary: Table 1's numbers, the tuning curve, each phase's compute and the decoding speed."""
    lines = ["| set | BLEU All | No UNK (sentences) | chrF |", "| --- | ---: | ---: | ---: |"]
    for name, r in scores.items():
        nounk = "-" if r["bleu_no_unk"] is None else f"{r['bleu_no_unk']:.2f} ({r['n_no_unk']})"
        lines.append(f"| {name} | {r['bleu']:.2f} | {nounk} | {r['chrf']:.2f} |")
    lines += ["", "MERT, each iteration's best point (Moses' BLEU on the n-best lists so far):", "",
              "| iteration | BLEU |", "| ---: | ---: |"] + [f"| {r['run']} | {100 * r['bleu']:.2f} |" for r in curve]
    lines += ["", "| phase | core-hours | wall | peak memory (GiB) |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {name} | {c['core_hours']:.3f} | {c['wall_s'] / 60:.1f} min | {c['peak_gib']:.2f} |"
              for name, c in compute.items()]
    lines += ["", "| system | set | threads | source words/s | peak memory (GiB) |", "| --- | --- | ---: | ---: | ---: |"]
    lines += [f"| {s['system']} | {s['set']} | {s['threads']} | {s['words_per_s']:.1f} | {s['peak_gib']:.2f} |"
              for s in speeds]
    return lines


def export(out: Path, to: Path, vocab: str) -> dict:
    """docs/results/hansards/moses/: moses.ini without paths, tuning.json, compute.json, scores.json
    and summary.md from a finished run in ``out`` (recipes/moses.sh's OUT)."""
    to.mkdir(parents=True, exist_ok=True)
    data, test = out / "data", out / "test"
    sets = {"test": data / "test.en", "newstest2014": data / "newstest2014.en", "tune": data / "tune.en",
            "speed": data / "speed.en"}
    scores = {"test": score(test / "test.hyp.fr", data / "test.en", data / "test.fr", vocab),
              "newstest2014": score(test / "newstest2014.hyp.fr", data / "newstest2014.en", data / "newstest2014.fr", vocab),
              "tune (untuned weights)": score(test / "tune.untuned.hyp.fr", data / "tune.en", data / "tune.fr", vocab),
              "tune (tuned)": score(test / "tune.hyp.fr", data / "tune.en", data / "tune.fr", vocab)}
    compute, curve = phase_compute(out / "compute"), mert_curve(out / "tune")
    speeds = speed(compute, sets)
    (to / "moses.ini").write_text(without_paths((out / "tune" / "moses.ini").read_text()), encoding="utf-8")
    for name, value in (("tuning", curve), ("compute", compute), ("scores", scores), ("speed", speeds)):
        (to / f"{name}.json").write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    (to / "summary.md").write_text("\n".join(markdown(compute, curve, scores, speeds)) + "\n", encoding="utf-8")
    return scores


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="docs/results/hansards/moses/ from a finished run")
    e.add_argument("--out", type=Path, required=True), e.add_argument("--to", type=Path, required=True)
    e.add_argument("--vocab", required=True)
    s = sub.add_parser("score", help="Table 1's numbers for one output")
    for name in ("hyp", "src", "ref"):
        s.add_argument(f"--{name}", type=Path, required=True)
    s.add_argument("--vocab", required=True)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "export":
            result = export(args.out, args.to, args.vocab)
        else:
            result = score(args.hyp, args.src, args.ref, args.vocab)
    except (OSError, ValueError) as err:
        print(f"moses_peer {args.cmd}: {err}", file=sys.stderr)
        return 1
    print(json.dumps({k: {f: v[f] for f in ("bleu", "bleu_no_unk", "n", "n_no_unk", "chrf")} if "bleu" in v else v
                      for k, v in (result.items() if args.cmd == "export" else [("score", result)])}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
