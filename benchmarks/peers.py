"""The peers of ``make bench`` (benchmarks/bench.py): JoeyNMT 2.3.0 and OpenNMT-py 3.5.1, each
trained for the same minutes and decoding the same test set as rnnsearch, through their own
command lines in their own virtual environments (benchmarks/joey.py, benchmarks/opennmt.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import flops
import joey
import opennmt as onmt
from common import DATA, mean_rate, rel, run, say, write_config


def train_joey(work: Path, venv: Path, spm_model: Path, pieces: list[str], minutes: float, env: dict) -> dict:
    vocab = work / "joey_vocab.txt"
    joey.write_vocab(pieces, vocab)
    model_dir = work / "joeynmt"
    cfg = write_config(joey.config(DATA, spm_model, vocab, model_dir), work / "joey_train.yaml")
    cmd = [str(venv / "bin" / "python"), "-m", "joeynmt", "train", rel(cfg), "--skip-test"]
    shutil.rmtree(model_dir, ignore_errors=True)
    result = run(cmd, env, work / "joey_train.out", limit_s=60 * minutes, marker="EPOCH 1",
                 marker_file=model_dir / "train.log")
    text = (model_dir / "train.log").read_text(errors="replace")
    log = joey.training_log(text)
    return {**result, "tok_per_s": mean_rate(log), "updates": log[-1]["step"],
            "precision": "float32",
            "epochs": log[-1]["epoch"], "loss": log[-1]["loss"], "parameters": joey.parameters(text),
            "checkpoint": model_dir / "latest.ckpt", "command": " ".join(cmd[1:])}


def decode_joey(work: Path, venv: Path, spm_model: Path, pieces: list[str], ckpt: Path, beam: int,
                limit: int, env: dict) -> dict:
    data = DATA
    if limit:  # JoeyNMT decodes whole files: give it the first `limit` lines
        data = work / "joey_test_data"
        data.mkdir(exist_ok=True)
        for lang in ("en", "fr"):
            lines = (DATA / f"test_2016_flickr.{lang}").read_text(encoding="utf-8").splitlines()[:limit]
            (data / f"test_2016_flickr.{lang}").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    cfg = joey.config(data, spm_model, work / "joey_vocab.txt", work / "joeynmt", beam=beam, test_only=True,
                      checkpoint=ckpt)
    path = write_config(cfg, work / f"joey_test_beam{beam}.yaml")
    prefix = work / f"joey_beam{beam}"
    cmd = [str(venv / "bin" / "python"), "-m", "joeynmt", "test", str(path), "-o", str(prefix)]
    log = work / f"joey_test_beam{beam}.log"
    run(cmd, env, log)
    return {"seconds": joey.generation_seconds(log.read_text(errors="replace")), "hyps": Path(f"{prefix}.test")}


def train_onmt(work: Path, venv: Path, spm_model: Path, pieces: list[str], minutes: float, env: dict,
               limit: int) -> dict:
    data = onmt.prepare(DATA, spm_model, pieces, work, limit)
    model_dir, log_file = work / "onmt", work / "onmt_train.out"  # its log: standard output
    shutil.rmtree(model_dir, ignore_errors=True)
    save_every = 10 if limit else 50  # a quick run (limit: its test lines) is a few dozen updates
    settings = onmt.config(data, model_dir, save_every)
    cfg = write_config(settings, work / "onmt_train.yaml")
    cmd = [str(venv / "bin" / "onmt_train"), "-config", rel(cfg)]
    result = run(cmd, env, log_file, limit_s=60 * minutes, marker="Start training loop",
                 marker_file=log_file, interrupted_ok=True)
    text = log_file.read_text(errors="replace")
    log = onmt.training_log(text)
    if not log:
        raise RuntimeError(f"OpenNMT-py logged no training step in {minutes:g} min; see {log_file}")
    updates = log[-1]["step"]
    pairs = len((data / "train.en").read_text(encoding="utf-8").splitlines())
    return {**result, "tok_per_s": mean_rate(log), "updates": updates, "precision": "float32",
            "epochs": updates * settings["batch_size"] // pairs, "parameters": onmt.parameters(text),
            "checkpoint": onmt.last_checkpoint(model_dir), "command": "onmt_train " + " ".join(cmd[1:]),
            "data": data}


def decode_onmt(work: Path, venv: Path, spm_model: Path, data: Path, ckpt: Path, beam: int, env: dict) -> dict:
    pieces_out, log = work / f"onmt_beam{beam}.pieces", work / f"onmt_test_beam{beam}.log"
    cmd = [str(venv / "bin" / "onmt_translate"), "-model", str(ckpt), "-src", str(data / "test_2016_flickr.en"),
           "-output", str(pieces_out), "-beam_size", str(beam), "-batch_size", "64", "-batch_type", "sents",
           "-gpu", "-1", "-report_time"]
    # OpenNMT-py 3.5.1 pickles its options into the checkpoint: torch >= 2.6 loads it only with
    # weights_only off (our own file, just written)
    run(cmd, {**env, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, log)
    hyps = work / f"onmt_beam{beam}.fr"
    lines = onmt.detokenize(pieces_out.read_text(encoding="utf-8").splitlines(), spm_model)
    hyps.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return {"seconds": onmt.translation_seconds(log.read_text(errors="replace")), "hyps": hyps}


PEERS = {"joey": f"JoeyNMT {joey.JOEY_VERSION}", "onmt": f"OpenNMT-py {onmt.ONMT_VERSION}"}


def train_peer(name: str, args, work: Path, spm_model: Path, pieces: list[str], minutes: float, env: dict,
               limit: int, lengths: dict) -> dict:
    """Train peer ``name`` for ``minutes``; its result with the analytic training FLOPs per token
    (``lengths``: bench.piece_lengths)."""
    if name == "joey":
        result = train_joey(work, Path(args.joey_venv), spm_model, pieces, minutes, env)
        result["flops"] = flops.joeynmt_rnn(256, 512, 512, len(pieces), **lengths)["train"]
    else:  # OpenNMT-py: the same model kind with 256 encoder units per direction (benchmarks/opennmt.py)
        result = train_onmt(work, Path(args.onmt_venv), spm_model, pieces, minutes, env, limit)
        result["flops"] = flops.joeynmt_rnn(256, 256, 512, len(pieces), **lengths)["train"]
    say(f"{PEERS[name]}: {result['tok_per_s']:.0f} tok/s, {result['updates']} updates, "
        f"peak {result['peak_rss_mib']:.0f} MiB")
    return result


def decode_peer(name: str, result: dict, args, work: Path, spm_model: Path, pieces: list[str], beam: int,
                limit: int, env: dict) -> dict:
    """Decode the test set with peer ``name``'s checkpoint: {seconds, hyps}."""
    if name == "joey":
        return decode_joey(work, Path(args.joey_venv), spm_model, pieces, result["checkpoint"], beam, limit, env)
    return decode_onmt(work, Path(args.onmt_venv), spm_model, result["data"], result["checkpoint"], beam, env)
