"""The Hansards campaign (recipes/hansards.sh) over several invocations: stopped with SIGTERM
twice and continued, it ends where one uninterrupted invocation ends (bit-identical on CPU), and
the core-hour budget counts over all invocations."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from conftest import REPO
from rnnsearch import checkpoint
from rnnsearch.data.guided import parse_pharaoh
from rnnsearch.data.tokenize import pretokenize

pytestmark = pytest.mark.slow
TINY = ("--set model.emb=16 --set model.enc_hidden=16 --set model.dec_hidden=16 --set model.att=16 "
        "--set model.maxout=8 --set vocab.size=200 --set train.valid_every=25 --set train.valid_max_sentences=20 "
        "--set train.save_every=3 --set train.log_every=1 --set train.batch_size=20 --set data.max_len=40")


@pytest.fixture(scope="module")
def data_dir(synth_dir, tmp_path_factory) -> Path:
    """A stand-in for ../shared/data with the recipe's layout, from the synthetic corpus."""
    root = tmp_path_factory.mktemp("data")
    (root / "hansards").mkdir()
    (root / "wmt14").mkdir()
    for split in ("train", "dev", "test"):
        for lang in ("en", "fr"):
            (root / "hansards" / f"{split}.{lang}").write_bytes((synth_dir / f"{split}.{lang}").read_bytes())
    for lang in ("en", "fr"):
        (root / "wmt14" / f"newstest2014.{lang}").write_bytes((synth_dir / f"test.{lang}").read_bytes())
    return root


def _recipe(data_dir: Path, out: Path, step: str, sets: str, models: str = "rnnsearch50") -> subprocess.Popen:
    env = {**os.environ, "OUT": str(out), "DATA": str(data_dir), "PROFILE": "cpu", "THREADS": "1",
           "BIN": str(Path(sys.executable).parent), "MODELS": models, "JOBS": "1", "SETS": sets,
           "PYTHONPATH": str(REPO / "src"), "RELEASES": str(out / "models"), "SNAPSHOTS": str(out / "snapshots"),
           "AVERAGE": os.environ.get("AVERAGE", "0")}
    return subprocess.Popen([str(REPO / "recipes" / "hansards.sh"), step], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _log(run: Path) -> list[dict]:
    try:
        lines = (run / "log.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out


def _stop_when(proc: subprocess.Popen, run: Path, ready, timeout: float = 300) -> None:
    """SIGTERM to the recipe (not its trainer) once ``ready(log entries)``; then wait for it."""
    deadline = time.monotonic() + timeout
    while not ready(_log(run)):
        assert proc.poll() is None, f"the recipe ended early: {proc.communicate()[0][-3000:]}"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=300)
    assert "stopping: the trainers save last.pt" in output, output[-3000:]
    trainers = subprocess.run(["pgrep", "-f", f"--out {run}"], capture_output=True, text=True).stdout
    assert not trainers.strip(), f"a trainer outlived the recipe: {trainers}"


def _finish(proc: subprocess.Popen) -> str:
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output[-3000:]
    return output


def _last_step(entries: list[dict]) -> int:
    return max((e["step"] for e in entries), default=0)


def test_three_invocations_equal_one(data_dir, tmp_path):
    sets = TINY + " --set train.max_steps=70"
    whole = tmp_path / "whole"
    _finish(_recipe(data_dir, whole, "train", sets))
    parts = tmp_path / "parts"
    _stop_when(_recipe(data_dir, parts, "train", sets), parts / "rnnsearch50", lambda e: _last_step(e) >= 12)
    first = _last_step(_log(parts / "rnnsearch50"))
    _stop_when(_recipe(data_dir, parts, "train", sets), parts / "rnnsearch50", lambda e: _last_step(e) >= first + 25)
    output = _finish(_recipe(data_dir, parts, "train", sets))
    assert "reached train.max_steps=70" in output
    a = checkpoint.load(whole / "rnnsearch50" / "last.pt")
    b = checkpoint.load(parts / "rnnsearch50" / "last.pt")
    assert a["train_state"]["step"] == b["train_state"]["step"] == 70
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name
    recipe = (parts / "recipe.txt").read_text()
    assert recipe.count("profile: cpu") == 3 and recipe.count("rnnsearch50:") == 3
    # finished, the model was released with its test BLEU, measured from the released file
    release = parts / "models" / "hansards_enfr_rnnsearch50"
    assert f"rnnsearch50: releasing {parts / 'rnnsearch50' / 'best.pt'} as {release}" in output, output[-3000:]
    manifest = json.loads((release / "release.json").read_text())
    assert manifest["train_state"]["best_step"] == checkpoint.load(parts / "rnnsearch50" / "best.pt")[
        "train_state"]["best_step"]
    assert manifest["test"]["beam"] == 12 and manifest["test"]["n"] == len(
        (data_dir / "hansards" / "test.en").read_text().splitlines())
    again = _finish(_recipe(data_dir, parts, "release", sets))
    assert "rnnsearch50: " + str(release) + " is up to date" in again, again[-3000:]
    # the report reads the release, so that its Table 1 is the model card's BLEU
    os.environ["REPORT_SETS"] = "hansards"
    try:
        _finish(_recipe(data_dir, parts, "report", sets))
    finally:
        del os.environ["REPORT_SETS"]
    results = json.loads((parts / "report_hansards" / "results.json").read_text())
    assert results["RNNsearch-50"]["bleu"] == manifest["test"]["bleu"]
    assert str(release) in (parts / "report_hansards" / "report.md").read_text()
    status = subprocess.run([str(REPO / "recipes" / "hansards.sh"), "status"], capture_output=True, text=True,
                            env={**os.environ, "OUT": str(parts), "BIN": str(Path(sys.executable).parent),
                                 "PROFILE": "cpu", "MODELS": "rnnsearch50"})
    assert status.returncode == 0 and "step 70," in status.stdout, status.stdout + status.stderr


def test_a_new_machine_continues_from_the_committed_snapshot(data_dir, tmp_path):
    """`snapshot` keeps the model's state in $SNAPSHOTS; with $OUT gone (a new machine), `train`
    restores it and continues from its update with the same batches; once released, the model
    needs no snapshot."""
    sets = TINY + " --set train.max_steps=70"
    out, run = tmp_path / "campaign", tmp_path / "campaign" / "rnnsearch50"
    _stop_when(_recipe(data_dir, out, "train", sets), run, lambda e: _last_step(e) >= 30)
    output = _finish(_recipe(data_dir, out, "snapshot", sets))
    manifest = json.loads((out / "snapshots" / "rnnsearch50" / "snapshot.json").read_text())
    step = checkpoint.load(run / "last.pt")["train_state"]["step"]
    assert manifest["step"] == step and f"at update {step}" in output, output
    lost = tmp_path / "lost"  # runs/ with the machine; the snapshots (committed) stay
    shutil.move(out, lost)
    shutil.copytree(lost / "snapshots", out / "snapshots")
    output = _finish(_recipe(data_dir, out, "train", sets))
    assert f"restored {run} from {out / 'snapshots' / 'rnnsearch50'}: update {step}" in output, output[-3000:]
    assert "reached train.max_steps=70" in output
    entries = _log(run)
    assert [e["event"] for e in entries if "event" in e] == ["restored"]
    tokens = lambda entries: {e["step"]: e["tgt_tokens"] for e in entries if "loss" in e}  # noqa: E731
    _finish(_recipe(data_dir, lost, "train", sets))  # the run that was not lost, to its end
    assert tokens(entries) == tokens(_log(lost / "rnnsearch50"))  # the same batches in the same order
    output = _finish(_recipe(data_dir, out, "snapshot", sets))
    assert "rnnsearch50: released" in output and "no snapshot needed" in output, output
    status = _finish(_recipe(data_dir, out, "status", sets))
    assert f"restored from the snapshot {out / 'snapshots' / 'rnnsearch50'} at step {step}" in status, status
    release = out / "models" / "hansards_enfr_rnnsearch50" / "release.json"
    released = release.read_text()
    shutil.rmtree(lost)
    shutil.move(out, lost)  # the machine lost again, after the release: the snapshot is older
    for kept in ("snapshots", "models"):
        shutil.copytree(lost / kept, out / kept)
    output = _finish(_recipe(data_dir, out, "train", sets))
    assert f"rnnsearch50: released as {release.parent} and {run} has no last.pt: nothing to train" in output, output
    assert "restored" not in output and not (run / "last.pt").exists()
    assert release.read_text() == released


def test_the_release_is_the_average_of_the_last_saves_where_it_scores_higher_on_dev(data_dir, tmp_path):
    """AVERAGE=3: the trainer keeps its last 3 saves (train.keep_last), and the release is their
    mean where that has the higher dev BLEU (greedy, valid_max_sentences, as validation), else
    best.pt. Then best.pt is put back to the model of update 50, which the mean of the last saves
    outscores: the release must be the mean."""
    sets = TINY + " --set train.lr=0.01 --set train.valid_every=50 --set train.save_every=10"
    out = tmp_path / "campaign"
    run, release = out / "rnnsearch50", out / "models" / "hansards_enfr_rnnsearch50"
    os.environ["AVERAGE"] = "3"
    try:
        _finish(_recipe(data_dir, out, "train", sets + " --set train.max_steps=50"))
        early = tmp_path / "early.pt"
        shutil.copy(run / "best.pt", early)
        output = _finish(_recipe(data_dir, out, "train", sets + " --set train.max_steps=200"))
        kept = sorted(run.glob("step-*.pt"))
        assert [int(p.stem.split("-")[1]) for p in kept] == [180, 190, 200]
        assert "saves averaged: 3" in (out / "recipe.txt").read_text()
        _check_release(run, release, output, kept)
        shutil.copy(early, run / "best.pt")  # newer than the release: it is made again
        output = _finish(_recipe(data_dir, out, "release", sets))
        assert _check_release(run, release, output, kept) == run / "average.pt"
        kept[0].unlink()  # fewer saves than AVERAGE (as after a restore): the mean and the card say 2
        os.utime(run / "best.pt")
        output = _finish(_recipe(data_dir, out, "release", sets))
    finally:
        del os.environ["AVERAGE"]
    _check_release(run, release, output, kept[1:])


def _check_release(run: Path, release: Path, output: str, kept: list[Path]) -> Path:
    """The release is the checkpoint average.json tells; average.pt is the mean of ``kept``;
    best.pt's dev BLEU there is the one its run logged. Returns the released checkpoint."""
    compared = json.loads((run / "average.json").read_text())
    chosen = run / ("average.pt" if compared["average"]["bleu"] > compared["best"]["bleu"] else "best.pt")
    assert f"rnnsearch50: releasing {chosen} as {release}" in output, output[-3000:]
    saves = [checkpoint.load(p)["model"] for p in kept]
    for name, tensor in checkpoint.load(run / "average.pt")["model"].items():
        torch.testing.assert_close(tensor, sum(s[name] for s in saves) / len(saves), msg=name)
    description = json.loads((release / "release.json").read_text())["description"]
    assert (f"mean of its last {len(kept)} saves" in description) == (chosen.name == "average.pt"), description
    card = (release / "README.md").read_text()
    assert (f"the mean of {len(kept)} checkpoints (`rnnsearch average`): " + ", ".join(f"`{p.name}`" for p in kept)
            in card) == (chosen.name == "average.pt"), card
    released = checkpoint.load(release / "model.pt")["model"]
    for name, tensor in checkpoint.load(chosen)["model"].items():
        torch.testing.assert_close(released[name].float(), tensor.to(torch.bfloat16).float(), msg=name)
    best = checkpoint.load(run / "best.pt")["train_state"]
    logged = [e["dev_bleu"] for e in _log(run) if e.get("step") == best["best_step"] and "dev_bleu" in e]
    assert logged and compared["best"]["bleu"] == pytest.approx(logged[-1], abs=0.01)
    return chosen


def test_the_core_hour_budget_counts_over_invocations(data_dir, tmp_path):
    budget_s = 12.0
    sets = TINY + " --set train.max_steps=0"
    out, run = tmp_path / "campaign", tmp_path / "campaign" / "rnnsearch50"
    env_budget = {"BUDGET": str(budget_s / 3600)}

    def recipe():
        os.environ.update(env_budget)
        try:
            return _recipe(data_dir, out, "train", sets)
        finally:
            for key in env_budget:
                os.environ.pop(key)

    cpu = lambda entries: max((e.get("cpu_s", 0) for e in entries), default=0)  # noqa: E731
    _stop_when(recipe(), run, lambda e: cpu(e) >= 3.0)
    _stop_when(recipe(), run, lambda e: cpu(e) >= 7.0)
    before = cpu(_log(run))
    assert 7.0 <= before < budget_s
    output = _finish(recipe())
    assert "reached train.max_core_hours" in output
    total = checkpoint.load(run / "last.pt")["train_state"]["cpu_s"]
    assert budget_s <= total < budget_s + 5  # the third invocation used only what was left
    steps = _last_step(_log(run))
    output = _finish(recipe())  # the budget is spent: a fourth invocation trains nothing
    assert "reached train.max_core_hours" in output and _last_step(_log(run)) == steps


def test_a_trainer_stopped_on_its_own_starts_no_further_model(data_dir, tmp_path):
    """SIGTERM to the trainer, not the recipe (as a session's end or a user may send it): the
    trainer saves and exits 0, but the queue must not take that for its end and start the next
    model; the next invocation continues the stopped one, then trains the next."""
    sets, out = TINY + " --set train.max_steps=40", tmp_path / "campaign"
    run = out / "rnnsearch50"
    proc = _recipe(data_dir, out, "train", sets, models="rnnsearch50 rnnencdec50")
    deadline = time.monotonic() + 300
    while _last_step(_log(run)) < 10:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0][-3000:]
        time.sleep(0.01)
    subprocess.run(["pkill", "-TERM", "-f", f"rnnsearch train .* --out {run} "], check=True)  # the trainer only
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 143, output[-3000:]
    assert "no further model was started" in output and not (out / "rnnencdec50").exists(), output[-3000:]
    stopped_at = checkpoint.load(run / "last.pt")["train_state"]["step"]
    assert 10 <= stopped_at < 40
    output = _finish(_recipe(data_dir, out, "train", sets, models="rnnsearch50 rnnencdec50"))
    assert f"last.pt at step {stopped_at} (" in (run / "train.log").read_text()  # resumed, not restarted
    for name in ("rnnsearch50", "rnnencdec50"):
        assert checkpoint.load(out / name / "last.pt")["train_state"]["step"] == 40, name


FAKE_ALIGNER = """#!/usr/bin/env python3
# A stand-in for eflomal-align: links word k to word k (and the last source word to the rest).
import sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
src = open(args["-s"]).read().split("\\n")[:-1]
tgt = open(args["-t"]).read().split("\\n")[:-1]
for key, extra in (("-f", ""), ("-r", " 0-0")):
    with open(args[key], "w") as f:
        for s, t in zip(src, tgt):
            n, m = len(s.split()), len(t.split())
            f.write(" ".join(f"{min(k, n - 1)}-{k}" for k in range(m)) + (extra if n and m else "") + "\\n")
"""


def _aligner(tmp_path: Path) -> Path:
    aligner = tmp_path / "aligner"
    aligner.write_text(FAKE_ALIGNER)
    aligner.chmod(0o755)
    return aligner


def _links(data_dir: Path, out: Path, tmp_path: Path) -> None:
    """`links` with FAKE_ALIGNER as eflomal."""
    os.environ["EFLOMAL"] = str(_aligner(tmp_path))
    try:
        _finish(_recipe(data_dir, out, "links", TINY))
    finally:
        del os.environ["EFLOMAL"]


def test_links_then_the_guided_and_the_fr_en_variants(data_dir, tmp_path):
    """A -guided model on a machine without the links: `train` makes them first, as `links` does
    (one line of links per training line, symmetrised from both directions), and without an aligner
    it is not trained and says why. The -guided variant trains with them, the -fren variant the
    other way round; both releases have an alignment head, the Fr->En one's trained on the links flipped."""
    out = tmp_path / "out"
    steps = TINY + " --set train.max_steps=3"
    os.environ.update(GUIDE_WEIGHT="0.5", EFLOMAL=str(tmp_path / "no_such_aligner"))
    try:
        proc = _recipe(data_dir, out, "train", steps, models="rnnsearch50-guided")
        output = proc.communicate(timeout=600)[0]
        assert proc.returncode == 1 and "rnnsearch50-guided: not trained: `links` failed" in output, output[-3000:]
        assert "no_such_aligner not found" in output and not (out / "rnnsearch50-guided" / "last.pt").exists()
        assert not (out / "align" / "train.links").exists() and not list((out / "align").glob(".*.partial"))
        os.environ["EFLOMAL"] = str(_aligner(tmp_path))
        output = _finish(_recipe(data_dir, out, "train", steps, models="rnnsearch50-guided rnnsearch50-fren"))
    finally:
        del os.environ["GUIDE_WEIGHT"], os.environ["EFLOMAL"]
    assert "rnnsearch50-guided: " + str(out / "align" / "train.links") + " is missing: making it first" in output
    assert output.count("reached train.max_steps=3") == 2, output[-3000:]
    train = (data_dir / "hansards" / "train.en").read_text().splitlines()
    links = (out / "align" / "train.links").read_text().splitlines()
    assert len(links) == len(train)
    fr = (data_dir / "hansards" / "train.fr").read_text().splitlines()
    for line, en_line, fr_line in zip(links[:50], train, fr):
        n, m = len(pretokenize(en_line, "moses", "en")), len(pretokenize(fr_line, "moses", "fr"))
        assert line.split() == [f"{min(k, n - 1)}-{k}" for k in range(m)], (line, en_line, fr_line)
    guided = yaml.safe_load((out / "rnnsearch50-guided" / "config.yaml").read_text())["train"]
    assert guided["guided_alignment"] == str(out / "align" / "train.links")
    assert (guided["guided_alignment_weight"], guided["guided_alignment_cost"]) == (0.5, "ce")
    assert "guided alignment (the -guided variant): weight 0.5, cost ce" in (out / "recipe.txt").read_text()
    fren = checkpoint.load(out / "rnnsearch50-fren" / "last.pt")["config"]["data"]
    assert (fren["src_lang"], fren["tgt_lang"]) == ("fr", "en")
    # the finished En->Fr RNNsearch is released with an alignment head trained on the links; Fr->En without
    from rnnsearch.decoding.translator import Translator
    guided_release = out / "models" / "hansards_enfr_rnnsearch50_guided"
    assert Translator.from_pretrained(str(guided_release)).align_head is not None
    assert "with an alignment head" in json.loads((guided_release / "release.json").read_text())["description"]
    # the Fr->En one's head learned the same links flipped (French first)
    flipped = (out / "align" / "train.fren.links").read_text().splitlines()
    assert [sorted(parse_pharaoh(line)) for line in flipped] == [
        sorted((t, s) for s, t in parse_pharaoh(line)) for line in links]
    fren_release = Translator.from_pretrained(str(out / "models" / "hansards_fren_rnnsearch50"))
    assert fren_release.align_head is not None
    assert fren_release.align_head.dims["context"] == 256  # HEAD_CONTEXT's default: it reads the target side
    assert checkpoint.load(out / "rnnsearch50-fren" / "best.head.pt")["align_head"]["record"]["links"] == str(
        out / "align" / "train.fren.links")


def test_a_signal_while_train_makes_the_links_stops_the_aligner_too(data_dir, tmp_path):
    """SIGTERM to the recipe while `train` makes a -guided model's links: the aligner (in a process
    group of its own) stops with it, no links file is left half written, and no model is trained."""
    slow = tmp_path / "slow_aligner"
    slow.write_text("#!/bin/sh\nsleep 300\n")
    slow.chmod(0o755)
    out = tmp_path / "out"
    os.environ["EFLOMAL"] = str(slow)
    try:
        proc = _recipe(data_dir, out, "train", TINY, models="rnnsearch50-guided rnnsearch50")
    finally:
        del os.environ["EFLOMAL"]
    deadline = time.monotonic() + 300
    while not subprocess.run(["pgrep", "-f", str(slow)], capture_output=True).stdout:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0][-3000:]
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 143 and "stopping: the trainers save last.pt" in output, output[-3000:]
    time.sleep(0.5)
    assert not subprocess.run(["pgrep", "-f", str(slow)], capture_output=True).stdout, "the aligner outlived the recipe"
    assert not (out / "align" / "train.links").exists() and not (out / "rnnsearch50").exists()


def test_a_release_made_before_the_links_gets_its_head_once_they_exist(data_dir, tmp_path):
    """A model that finished before `links` ran was released without a head; once the links exist,
    that release is no longer up to date, and `release` makes it again with a head."""
    out = tmp_path / "out"
    release = out / "models" / "hansards_enfr_rnnsearch50"
    _finish(_recipe(data_dir, out, "train", TINY + " --set train.max_steps=3"))
    assert "with an alignment head" not in json.loads((release / "release.json").read_text())["description"]
    again = _finish(_recipe(data_dir, out, "release", TINY))
    assert f"{release} is up to date" in again, again[-3000:]
    _links(data_dir, out, tmp_path)
    output = _finish(_recipe(data_dir, out, "release", TINY))
    assert f"releasing {out / 'rnnsearch50' / 'best.head.pt'} as {release}" in output, output[-3000:]
    assert "with an alignment head" in json.loads((release / "release.json").read_text())["description"]
    assert f"{release} is up to date" in _finish(_recipe(data_dir, out, "release", TINY))


def test_a_release_whose_run_is_gone_gets_its_head_over_the_release(data_dir, tmp_path, monkeypatch):
    """A new machine: the int8 release is committed, its run is gone. Once the links exist, `release`
    trains the head over the release itself and makes it again: the same translation weights, test
    output and BLEU, the release's training log and description kept; an RNNencdec's stays."""
    monkeypatch.setenv("RELEASE_DTYPE", "int8")
    out = tmp_path / "out"
    models = "rnnsearch50 rnnencdec50"
    release, plain = out / "models" / "hansards_enfr_rnnsearch50", out / "models" / "hansards_enfr_rnnencdec50"
    _finish(_recipe(data_dir, out, "train", TINY + " --set train.max_steps=3", models=models))
    before, plain_before = ({p.name: p.read_bytes() for p in d.iterdir()} for d in (release, plain))
    (tmp_path / "released.pt").write_bytes(before["model.pt"])
    manifest = json.loads((release / "release.json").read_text())
    for name in ("rnnsearch50", "rnnencdec50"):
        shutil.rmtree(out / name)  # lost with a machine
    _links(data_dir, out, tmp_path)
    output = _finish(_recipe(data_dir, out, "release", TINY, models=models))
    head = out / "rnnsearch50" / "from_release" / "release.head.pt"
    assert f"rnnsearch50: releasing {head} as {release}" in output, output[-3000:]
    assert f"rnnencdec50: {plain} is up to date" in output
    assert {p.name: p.read_bytes() for p in plain.iterdir()} == plain_before
    again = json.loads((release / "release.json").read_text())
    assert again["dtype"] == "int8" and again["source"] == str(head)
    assert again["description"] == manifest["description"].rstrip(".") + (
        ", with an alignment head (rnnsearch align --head) trained over its earlier release.")
    assert again["test"]["bleu"] == manifest["test"]["bleu"] and again["train_state"] == manifest["train_state"]
    for kept in ("log.jsonl", "test.hyp.fr"):
        assert (release / kept).read_bytes() == before[kept]
    old, new = checkpoint.load(tmp_path / "released.pt")["model"], checkpoint.load(release / "model.pt")
    assert new["align_head"]["record"]["links"] == str(out / "align" / "train.links")
    assert old.keys() == new["model"].keys() and all(torch.equal(old[k], new["model"][k]) for k in old)
    assert f"{release} is up to date" in _finish(_recipe(data_dir, out, "release", TINY, models=models))


def test_the_subword_variant_trains_on_its_pieces_and_is_released_with_a_head_over_them(data_dir, tmp_path):
    """MODELS=rnnsearch-sp: `links` trains the joint SentencePiece model first and links its pieces;
    `train` prepares the pairs once (rnnsearch prepare) and trains the config's recipe over that
    vocabulary (the summed sentence loss, the mean initial state), then releases it as
    hansards_enfr_rnnsearch_sp with an alignment head trained on the pieces' links."""
    out = tmp_path / "out"
    os.environ["SP_SIZE"] = "120"
    try:
        os.environ["EFLOMAL"] = str(_aligner(tmp_path))
        try:
            _finish(_recipe(data_dir, out, "links", TINY, models="rnnsearch-sp"))
        finally:
            del os.environ["EFLOMAL"]
        output = _finish(_recipe(data_dir, out, "train", TINY + " --set vocab.size=120 --set train.max_steps=3",
                                 models="rnnsearch-sp"))
    finally:
        del os.environ["SP_SIZE"]
    assert not (out / "align" / "train.links").exists()  # no word links: only the pieces' were asked for
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(out / "sp" / "joint120.model"))
    train = (data_dir / "hansards" / "train.fr").read_text().splitlines()
    links = (out / "align_sp" / "train.links").read_text().splitlines()
    assert len(links) == len(train)
    for line, fr_line in zip(links[:50], train):  # the fake aligner links each target piece once
        assert len(line.split()) == len(sp.encode(fr_line)), (line, fr_line)
    assert (out / "prepared_sp120_slots0.5" / "manifest.json").exists() and "reached train.max_steps=3" in output
    config = checkpoint.load(out / "rnnsearch-sp" / "last.pt")["config"]
    assert config["data"]["slot_rate"] == 0.5  # the config's slots (data/slotting.py), in the prepared pairs too
    assert config["vocab"]["mode"] == "sentencepiece" and config["vocab"]["sp_model"] == str(out / "sp" / "joint120.model")
    assert (config["train"]["loss_scale"], config["model"]["init_state"]) == ("sentence", "mean")
    from rnnsearch.decoding.translator import Translator
    release = out / "models" / "hansards_enfr_rnnsearch_sp"
    assert Translator.from_pretrained(str(release)).align_head is not None
    assert "with an alignment head" in json.loads((release / "release.json").read_text())["description"]


def test_rnnsearch50_star_continues_the_campaign_run_or_starts_from_the_release(data_dir, tmp_path, monkeypatch):
    """MODELS=rnnsearch50-star (Table 1's RNNsearch-50*): where the campaign's rnnsearch50 run is still
    there, it goes on from its last.pt (the same run: updates, optimiser state, STAR_BUDGET more
    core-hours on top of its own); where only the release is left, a new run starts from the release's
    weights (`train --init`) at its last learning rate. Either stops after STAR_PATIENCE validations
    without a new best, and is released as hansards_enfr_rnnsearch50star saying why it ended."""
    monkeypatch.setenv("STAR_BUDGET", "2.5")
    monkeypatch.setenv("STAR_PATIENCE", "2")
    out = tmp_path / "out"
    _finish(_recipe(data_dir, out, "train", TINY + " --set train.max_steps=3"))
    had = checkpoint.load(out / "rnnsearch50" / "last.pt")["train_state"]
    star = out / "rnnsearch50-star"
    more = TINY + " --set train.max_steps=9 --set train.valid_every=2"
    output = _finish(_recipe(data_dir, out, "train", more, models="rnnsearch50-star"))
    assert "continuing the campaign's rnnsearch50 run" in (star / "train.log").read_text(), output[-3000:]
    last = checkpoint.load(star / "last.pt")
    assert not (last.get("meta") or {}).get("init") and last["train_state"]["step"] > had["step"]
    entries = _log(star)
    assert entries[0]["step"] <= had["step"]  # its log goes on from the campaign run's
    config = last["config"]["train"]
    assert config["max_core_hours"] == pytest.approx(had["cpu_s"] / 3600 + 2.5, abs=1e-5) and config["patience"] == 2
    assert (out / "models" / "hansards_enfr_rnnsearch50star" / "release.json").exists()
    # a new machine with the release alone: a new run from its weights, at its last learning rate
    shutil.rmtree(out / "rnnsearch50")
    shutil.rmtree(star)
    shutil.rmtree(out / "models" / "hansards_enfr_rnnsearch50star")
    released = out / "models" / "hansards_enfr_rnnsearch50"
    lr = [json.loads(line)["lr"] for line in (released / "log.jsonl").read_text().splitlines() if '"lr"' in line][-1]
    output = _finish(_recipe(data_dir, out, "train", more, models="rnnsearch50-star"))
    last = checkpoint.load(star / "last.pt")
    assert last["meta"]["init"]["name"] == str(released), output[-3000:]
    config = last["config"]["train"]
    assert (config["lr"], config["max_core_hours"], config["patience"]) == (lr, 2.5, 2)
    manifest = json.loads((out / "models" / "hansards_enfr_rnnsearch50star" / "release.json").read_text())
    ended = next(line for line in (star / "train.log").read_text().splitlines()[::-1] if ". step " in line)
    assert f" Its training ended: {ended.split('. step ')[0]} (update {last['train_state']['step']})." in \
        manifest["description"]
    card = (out / "models" / "hansards_enfr_rnnsearch50star" / "README.md").read_text()
    assert f"started from `{released}`" in card and "core-hours in all" in card
    # without either, it says what to train first
    for gone in (released, star, out / "models" / "hansards_enfr_rnnsearch50star"):
        shutil.rmtree(gone)
    proc = _recipe(data_dir, out, "train", more, models="rnnsearch50-star")
    output = proc.communicate(timeout=600)[0]
    assert proc.returncode == 1 and "train rnnsearch50 first" in output, output[-3000:]
