"""``make bench-marian``: rnnsearch against Marian (benchmarks/marian_peer.py) on the Canadian Hansards
En->Fr, one after the other in one run, same machine, threads, pairs and tokens: training for the
same minutes each, then decoding the test sentences at beam 5 and 12, on 1 and 2 threads (N
single-thread workers each: Marian's ``--cpu-threads N``, rnnsearch's ``--workers N``), float32
and int8, with and without a lexical shortlist of 100 + 100 words; output Moses tokens per second
of the whole process less its start-up, BLEU beside each; and rnnsearch's training rate in bf16
autocast where bf16 is native. Sizes, settings and every difference: benchmarks/README.md ("Marian").

    python benchmarks/marian.py [--quick] [--record] [--reuse] [--venv DIR] [--pairs N] [--minutes M] [--test-lines N]
        [--bf16-minutes M] [--phase all|train-rnnsearch|train-marian|decode] [--resume]

A long run goes in parts: ``--phase train-rnnsearch``, ``--phase train-marian``, then ``--phase
decode --resume``; SIGTERM stops a training phase with its model saved, and the same command with
``--resume`` goes on from there until the system has trained its ``--minutes`` in all; a decode phase
keeps each measured row in race.jsonl, and ``--resume`` goes on after the last one. The tables, and the
targets read off them: benchmarks/marian_report.py.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
from datetime import date
from pathlib import Path

import flops
import marian_peer as mp
from marian_report import STARTUP_RUNS, table
from common import ROOT, machine, record, run, say
from rnnsearch.cpu import bf16_native

HANSARDS = ROOT.parent / "shared" / "data" / "hansards"
EMB, RNN, VOCAB, BATCH, POOL, MAX_LEN, LR = 256, 512, 30000, 80, 20, 50, 0.001
OURS = ["--set", f"model.emb={EMB}", "--set", f"model.enc_hidden={RNN}", "--set", f"model.dec_hidden={RNN}",
        "--set", f"model.att={RNN}", "--set", "model.maxout=256", "--set", "model.encoder_cell=fused",
        "--set", "train.optimizer=adam", "--set", f"train.lr={LR}", "--set", "train.loss_scale=token",
        "--set", f"train.batch_size={BATCH}", "--set", f"train.sort_pool={POOL}",
        "--set", "train.valid_every=100000000", "--set", "train.progress=false", "--set", "train.log_every=20",
        "--set", f"vocab.size={VOCAB}", "--set", f"data.max_len={MAX_LEN}"]


def prepare(work: Path, pairs: int, test_lines: int) -> dict:
    """Raw and tokenised training, dev and test files under ``work``."""
    from rnnsearch.data.tokenize import pretokenize
    raw, tok = work / "data", work / "tok"
    raw.mkdir(parents=True, exist_ok=True), tok.mkdir(exist_ok=True)
    counts = {}
    for split, limit in (("train", pairs), ("dev", 500), ("test", test_lines)):
        for lang in ("en", "fr"):
            path = HANSARDS / (f"{split}.{lang}.gz" if split == "train" else f"{split}.{lang}")
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:
                lines = [line.rstrip("\n") for _, line in zip(range(limit), fh)]
            (raw / f"{split}.{lang}").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
            cached = tok / f"{split}.{lang}"  # tokenised once; again where another run read other lines
            if not cached.exists() or cached.read_text(encoding="utf-8").count("\n") != len(lines):
                words = [" ".join(pretokenize(x, "moses", lang)) for x in lines]
                (tok / f"{split}.{lang}").write_text("".join(x + "\n" for x in words), encoding="utf-8")
            counts[f"{split}.{lang}"] = len(lines)
    (raw / "one.en").write_text((raw / "test.en").read_text(encoding="utf-8").splitlines()[0] + "\n")
    (tok / "one.en").write_text((tok / "test.en").read_text(encoding="utf-8").splitlines()[0] + "\n")
    return counts


def token_ratio(work: Path) -> tuple[float, float]:
    """Mean source tokens per training pair, and source tokens per target token (for the FLOPs)."""
    counts = [sum(len(x.split()) for x in (work / "tok" / f"train.{lang}").open(encoding="utf-8")) for lang in ("en", "fr")]
    pairs = sum(1 for _ in (work / "tok" / "train.en").open(encoding="utf-8"))
    return counts[0] / pairs, counts[0] / counts[1]


def env_for(threads: int) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}


def steady(log: list[dict]) -> float | None:
    """The mean rate of a training log past its first fifth (None for a log of no display line yet)."""
    warm = log[len(log) // 5:] or log
    return sum(e["tok_per_s"] for e in warm) / len(warm) if warm else None


def train_ours(work: Path, minutes: float, threads: int, resume: bool = False, bf16: bool = False,
               extra: tuple[str, ...] = ()) -> dict:
    """rnnsearch's training for ``minutes`` in all (``resume``: on from the last run's last.pt; the
    trainer counts its minutes over every run); float32 as Marian's, or ``bf16`` autocast; ``extra``:
    more ``--set`` arguments after the race's own (benchmarks/race_quality.py: the recommended config)."""
    out = work / ("rnnsearch_bf16" if bf16 else "rnnsearch")
    cmd = [str(ROOT / ".venv" / "bin" / "rnnsearch"), "train", str(ROOT / "configs" / "hansards_rnnsearch.yaml"),
           "--out", str(out), *OURS, *extra, "--set", f"data.dir={work / 'data'}", "--set", f"train.max_minutes={minutes}",
           "--set", f"train.threads={threads}", "--set", f"train.bf16={str(bf16).lower()}"]
    if resume and (out / "last.pt").exists():
        cmd.append("--resume")
    elif out.exists():
        import shutil
        shutil.rmtree(out)
    result = run(cmd, env_for(threads), work / f"{out.name}_train.log")
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines() if '"tok_per_s"' in x]
    return {**result, "tok_per_s": steady(log), "updates": log[-1]["step"] if log else 0, "checkpoint": out / "last.pt",
            "minutes": minutes}


def train_marian(work: Path, venv: Path, minutes: float, threads: int, resume: bool = False) -> dict:
    """Marian's training for ``minutes`` in all (``resume``: on from its model.npz, its optimiser and
    progress; the minutes trained so far are kept in marian/trained_s.json, each run's log beside the last)."""
    folder = work / "marian"
    folder.mkdir(exist_ok=True)
    log_file, spent_file = folder / "train.log", folder / "trained_s.json"
    old_logs = sorted(folder.glob("train.log.*"), key=lambda p: int(p.suffix[1:]))
    if resume and (folder / "model.npz").exists():
        spent = json.loads(spent_file.read_text())["seconds"] if spent_file.exists() else 0.0
        if log_file.exists():
            log_file.rename(folder / f"train.log.{len(old_logs) + 1}")
            old_logs = sorted(folder.glob("train.log.*"), key=lambda p: int(p.suffix[1:]))
    else:
        spent = 0.0
        for stale in [log_file, spent_file, *old_logs, *folder.glob("model.npz*")]:
            stale.unlink(missing_ok=True)
        old_logs = []
    args = mp.train_args(folder / "model.npz", vocabs(work), [work / "tok" / "train.en", work / "tok" / "train.fr"],
                         EMB, RNN, VOCAB, BATCH, POOL, MAX_LEN, threads, LR, log_file)
    result = run([str(venv / "bin" / "pymarian"), *args], env_for(threads), work / "marian_train.out",
                 limit_s=max(60 * minutes - spent, 1.0), marker="Training started", marker_file=log_file,
                 stop="term", interrupted_ok=True)  # minutes from its first update, as rnnsearch's trainer counts
    spent_file.write_text(json.dumps({"seconds": spent + result["marked_s"]}))
    log = mp.training_log("".join(p.read_text(errors="replace") for p in [*old_logs, log_file]))
    return {**result, "tok_per_s": steady(log), "updates": log[-1]["step"] if log else 0, "checkpoint": folder / "model.npz",
            "trained_s": spent + result["marked_s"]}


def vocabs(work: Path) -> list[Path]:
    return [work / "marian" / "vocab.en.yml", work / "marian" / "vocab.fr.yml"]


def decode(system: str, work: Path, venv: Path, model: Path, split: str, beam: int, threads: int,
           int8: bool, shortlist: bool = False) -> dict:
    """One whole-process decode of ``split`` -> wall seconds, peak memory and the detokenised lines;
    ``shortlist``: each system with its lexical shortlist (``shortlists``), 100 + 100 words."""
    from rnnsearch.data.tokenize import detokenize
    tag = f"{system}_{split}_b{beam}_t{threads}{'_int8' if int8 else ''}{'_sl' if shortlist else ''}"
    out = work / f"{tag}.out"
    ours, theirs = shortlist_files(work)
    if system == "rnnsearch":
        cmd = [str(ROOT / ".venv" / "bin" / "rnnsearch"), "translate", str(model), "--input",
               str(work / "data" / f"{split}.en"), "--output", str(out), "--beam", str(beam), "--keep-unk",
               "--workers", str(threads),  # N single-thread searches, as Marian's --cpu-threads N
               *(["--quantize", "int8"] if int8 else []),
               *(["--shortlist", str(ours), "--shortlist-frequent", "100", "--shortlist-best", "100"] if shortlist else [])]
    else:
        cmd = [str(venv / "bin" / "pymarian"), *mp.decode_args(model, vocabs(work), work / "tok" / f"{split}.en", out,
                                                             beam, threads, "packed8" if int8 else "float32"),
               *(["--shortlist", str(theirs), "100", "100"] if shortlist else [])]
    result = run(cmd, env_for(threads), work / f"{tag}.log")
    if result["stopped"]:  # its output is cut short: nothing of it is measured
        sys.exit(f"stopped by SIGTERM while decoding {tag} (the rows measured before it are kept in "
                 f"{work / 'race.jsonl'}): go on with --phase decode --resume")
    lines = out.read_text(encoding="utf-8").splitlines()
    if system == "marian":
        lines = [detokenize(x.split(), "moses", "fr") for x in lines]
    return {**result, "lines": lines}


def shortlist_files(work: Path) -> tuple[Path, Path]:
    return work / "lexicon.tsv", work / "marian" / "lex.s2t"


def shortlists(work: Path, model: Path) -> None:
    """Both systems' shortlists from one count: eflomal's links of the training pairs (grow-diag-final-and,
    as experiments/guided_links.py makes them) counted by ``rnnsearch lexicon --links --per-source 100``,
    and the same table in Marian's text form (``target source p(target | source)`` lines)."""
    import subprocess
    ours, theirs = shortlist_files(work)
    if ours.exists() and theirs.exists():
        return
    sys.path.insert(0, str(ROOT / "experiments"))
    import guided_links
    tok, lower = work / "tok", {lang: work / "tok" / f"train.{lang}.lower" for lang in ("en", "fr")}
    for lang, path in lower.items():
        path.write_text((tok / f"train.{lang}").read_text(encoding="utf-8").lower(), encoding="utf-8")
    fwd, rev, links = tok / "train.fwd", tok / "train.rev", tok / "train.links"
    subprocess.run([guided_links.eflomal_binary("eflomal-align"), "-s", str(lower["en"]), "-t", str(lower["fr"]),
                    "-f", str(fwd), "-r", str(rev), "--overwrite"], check=True)
    lines = sum(1 for _ in (tok / "train.en").open(encoding="utf-8"))
    say(f"shortlists: {guided_links.symmetrise(fwd, rev, links, lines):,} links on {lines:,} pairs")
    data = work / "data"
    subprocess.run([str(ROOT / ".venv" / "bin" / "rnnsearch"), "lexicon", str(model), "--src", str(data / "train.en"),
                    "--tgt", str(data / "train.fr"), "--links", str(links), "--per-source", "100", "--out", str(ours)],
                   check=True)
    rows = [line.split("\t") for line in ours.read_text(encoding="utf-8").splitlines()]
    theirs.write_text("".join(f"{t} {s} {p}\n" for s, t, p, _ in rows), encoding="utf-8")


def tokens(lines: list[str]) -> int:
    from rnnsearch.data.tokenize import pretokenize
    return sum(len(pretokenize(x, "moses", "fr")) for x in lines)


def bleu(lines: list[str], ref: Path) -> float:
    from rnnsearch.analysis.evaluate import corpus_bleu
    return round(corpus_bleu(lines, ref.read_text(encoding="utf-8").splitlines())[0], 2)


MIN_NET_S = 2.0  # a decode that took less beyond its start-up is too short to time: more --test-lines


def per_s(tokens: int, net_s: float) -> float | None:
    """Output tokens per second of a decode's time beyond its start-up; None when that is under MIN_NET_S."""
    return round(tokens / net_s, 1) if net_s >= MIN_NET_S else None


def startup(system: str, work: Path, venv: Path, model: Path, threads: int) -> float:
    """Whole-process seconds to translate one sentence: the median of STARTUP_RUNS runs (the first
    after the memory warm-up reads the libraries back from disk: 2.33 s where the median was 1.77)."""
    return statistics.median(decode(system, work, venv, model, "one", 1, threads, False)["wall_s"]
                             for _ in range(STARTUP_RUNS))


def race(work: Path, venv: Path, models: dict, beams, threads_list, resume: bool = False) -> list[dict]:
    """Every decode of the race, one row a configuration; each row is kept in ``race.jsonl`` as it is
    measured, and ``resume`` keeps the rows (and start-ups) a stopped run measured."""
    done_file = work / "race.jsonl"
    kept = [json.loads(x) for x in done_file.read_text().splitlines()] if resume and done_file.exists() else []
    if not resume:
        done_file.unlink(missing_ok=True)
    rows = []
    for threads in threads_list:
        start = next(({s: r[s]["startup_s"] for s in models} for r in kept if r["threads"] == threads), None) or \
            {s: startup(s, work, venv, m, threads) for s, m in models.items()}
        for beam in beams:
            for int8, listed in ((False, False), (True, False), (False, True), (True, True)):
                row = {"beam": beam, "threads": threads, "int8": int8, "shortlist": listed}
                old = next((r for r in kept if all(r[key] == v for key, v in row.items())), None)
                if old is not None:
                    rows.append(old)
                    continue
                for system, model in models.items():
                    d = decode(system, work, venv, model, "test", beam, threads, int8, listed)
                    n = tokens(d["lines"])
                    row[system] = {"wall_s": round(d["wall_s"], 1), "startup_s": round(start[system], 2),
                                   "tokens": n, "tok_per_s": per_s(n, d["wall_s"] - start[system]),
                                   "bleu": bleu(d["lines"], work / "data" / "test.fr"),
                                   "peak_rss_mib": round(d["peak_rss_mib"])}
                speeds = [row[s]["tok_per_s"] for s in ("rnnsearch", "marian")]
                row["ratio"] = round(speeds[0] / speeds[1], 2) if None not in speeds else None
                rows.append(row)
                with done_file.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                say(json.dumps(row))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", type=Path, default=ROOT / "benchmarks" / ".marian-venv")
    p.add_argument("--work", type=Path, default=ROOT / "runs" / "bench_marian")
    p.add_argument("--pairs", type=int, default=200_000)
    p.add_argument("--minutes", type=float, default=60.0, help="training minutes of each system")
    p.add_argument("--test-lines", type=int, default=1000)
    p.add_argument("--threads", type=int, default=2, help="training threads")
    p.add_argument("--bf16-minutes", type=float, default=15.0, help="then rnnsearch's training rate in bf16 "
                   "autocast, its fastest where bf16 is native (Marian trains in float32 only on a CPU); 0: not")
    p.add_argument("--quick", action="store_true", help="20,000 pairs, 3 minutes each, 50 test lines, beam 5")
    p.add_argument("--record", action="store_true", help="write the table to BENCHMARKS.md")
    p.add_argument("--reuse", action="store_true", help="decode with the models the last run trained in --work")
    p.add_argument("--phase", choices=["all", "train-rnnsearch", "train-marian", "decode"], default="all",
                   help="one part of the run (each fits a shorter session): train one system, or decode both")
    p.add_argument("--resume", action="store_true", help="go on with a training phase that SIGTERM stopped (its "
                   "minutes counted over every run), or skip the systems already trained and the decodes already "
                   "measured (race.jsonl)")
    args = p.parse_args()
    if args.quick:
        args.pairs, args.minutes, args.test_lines, args.bf16_minutes = 20_000, 3.0, 50, min(args.bf16_minutes, 1.0)
    if not (args.venv / "bin" / "pymarian").exists():
        sys.exit(f"{args.venv}: no pymarian there: `make marian` installs it")
    args.work.mkdir(parents=True, exist_ok=True)
    say(f"data: {prepare(args.work, args.pairs, args.test_lines)}")
    saved = args.work / "train.json"
    train = json.loads(saved.read_text()) if saved.exists() else {}  # every system's record: a phase redoes only its own
    jobs = {"rnnsearch": lambda resume: train_ours(args.work, args.minutes, args.threads, resume),
            "rnnsearch_bf16": lambda resume: train_ours(args.work, args.bf16_minutes, args.threads, resume, bf16=True),
            "marian": lambda resume: train_marian(args.work, args.venv, args.minutes, args.threads, resume)}
    if not (args.bf16_minutes > 0 and bf16_native()):  # emulated bf16 trains at 0.04x float32's speed
        del jobs["rnnsearch_bf16"]
    for system, trainer in jobs.items():
        phase = "train-marian" if system == "marian" else "train-rnnsearch"
        if args.reuse or (args.resume and train.get(system, {}).get("done")) or args.phase not in ("all", phase):
            continue
        before = train.get(system, {}) if args.resume else {}
        train[system] = trainer(args.resume and system in train)
        train[system]["peak_rss_mib"] = max(train[system]["peak_rss_mib"], before.get("peak_rss_mib", 0))  # all runs
        train[system]["done"] = not train[system]["stopped"]
        saved.write_text(json.dumps(train, default=str, indent=1))
        if train[system]["stopped"]:
            sys.exit(f"stopped by SIGTERM while training {system} (saved): go on with --phase {args.phase} --resume")
    if args.phase.startswith("train-"):
        return
    missing = [s for s in ("rnnsearch", "marian") if s not in train or not (args.reuse or train[s].get("done"))]
    if missing:
        sys.exit(f"{saved}: {', '.join(missing)} not trained to the end: --phase train-{missing[0]} --resume")
    say(json.dumps(train, default=str))
    models = {s: Path(train[s]["checkpoint"]) for s in ("rnnsearch", "marian")}
    shortlists(args.work, models["rnnsearch"])
    dev_file = args.work / "dev_bleu.json"
    dev = json.loads(dev_file.read_text()) if args.resume and dev_file.exists() else \
        {s: bleu(decode(s, args.work, args.venv, m, "dev", 5, args.threads, False)["lines"],
                 args.work / "data" / "dev.fr") for s, m in models.items()}
    dev_file.write_text(json.dumps(dev))
    rows = race(args.work, args.venv, models, (5,) if args.quick else (5, 12), (1, 2), args.resume)
    src_len, ratio = token_ratio(args.work)
    fl = {"rnnsearch": flops.rnnsearch(EMB, RNN, RNN, RNN, 256, VOCAB, src_len, ratio)["forward"],
          "marian": mp.s2s(EMB, RNN, VOCAB, src_len, ratio)["forward"]}
    body = table(train, rows, dev, fl)
    print(body)
    (args.work / "result.json").write_text(json.dumps({"train": train, "dev_bleu": dev, "rows": rows},
                                                      default=str, indent=1))
    if args.record:
        record("rnnsearch against Marian (Hansards, CPU)",
               f"`make bench-marian` on {date.today()}: {machine(args.threads)}; {args.pairs:,} Hansards pairs, "
               f"{args.minutes:g} training minutes each, {args.test_lines:,} test sentences.\n\n" + body)


if __name__ == "__main__":
    main()
