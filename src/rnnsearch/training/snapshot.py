"""Snapshots: a training run's state, small enough to commit, that another machine continues.

A run's ``last.pt`` holds the weights in float32 and Adam's two moments (three times the weights'
bytes), and runs/ is not in git: a machine lost takes the run along. ``write_snapshot`` keeps what
the run needs to go on, in a sixth of last.pt's bytes:

- ``last.pt``: the weights in bfloat16; the optimiser's hyperparameters (its param_groups: the rate
  as decayed so far) without its per-parameter state; the rate schedule; the counters (update,
  epoch, place in the epoch's plan, core-hours, best dev BLEU, early-stopping count); the random
  streams; the config and the vocabularies;
- ``best.pt``: best.pt's weights in int8 with a float32 scale per row (``checkpoint.pack_int8``),
  when best.pt is not the same update as last.pt (else the snapshot says best = last);
- ``log.jsonl``: the run's log; ``snapshot.json``: what it holds, with each file's SHA-256.

``restore_snapshot`` writes a run directory back from it, weights in float32, that
``rnnsearch train --resume`` continues: the same data order, rate, schedule, counters and random
streams. Two things differ from the run that was saved, and the log says so in a ``restored``
entry: Adam's moments start again from zero (its bias correction makes the first updates as large
as later ones, and the moments rebuild over the next updates: docs/training.md), and the weights
carry bf16's rounding (a relative change of at most 2^-9, below one update of Adam at its usual
rates).
"""
from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

from rnnsearch import __version__, checkpoint
from rnnsearch.analysis.release import slim_payload
from rnnsearch.errors import UsageError
from rnnsearch.files import sha256, whole_or_absent

FORMAT = "rnnsearch-snapshot"
VERSION = 1
MANIFEST = "snapshot.json"
RESUME = ("scheduler", "rng", "rng_ranks")  # what a resume needs beyond a release's slim payload


def _step(payload: dict) -> int:
    return int((payload.get("train_state") or {}).get("step", -1))


def _float32(model: dict) -> dict:
    return {k: v.float() if v.is_floating_point() else v for k, v in model.items()}


def _resumable(path: Path) -> dict:
    payload = checkpoint.load(path)
    if "optimizer" not in payload or "train_state" not in payload:
        raise UsageError(f"{path}: holds no optimiser state or counters (an average or a release?): "
                         "a snapshot is taken of a training run's last.pt")
    return payload


def read_manifest(snapshot: str | Path) -> dict:
    """``snapshot.json`` of a snapshot folder, checked; a clear error for anything else."""
    path = Path(snapshot) / MANIFEST
    if not path.is_file():
        raise UsageError(f"{snapshot}: not a snapshot (no {MANIFEST}); `rnnsearch snapshot RUN --out DIR` writes one")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise UsageError(f"{path}: not an rnnsearch snapshot of version {VERSION}")
    return manifest


def write_snapshot(run: str | Path, out: str | Path, log=print) -> dict:
    """The snapshot folder ``out`` of the run directory ``run`` (whole or absent); returns its
    manifest. An ``out`` that already holds this run's update is left as it is."""
    run, out = Path(run), Path(out)
    last = _resumable(run / "last.pt")
    step = _step(last)
    previous = read_manifest(out) if (out / MANIFEST).is_file() else {}
    if previous.get("step") == step and previous.get("source") == str(run):
        log(f"{out}: already holds update {step:,} of {run}: left as it is")
        return previous
    best_path = run / "best.pt"
    best = checkpoint.load(best_path) if best_path.is_file() else None
    with whole_or_absent(out) as tmp:
        checkpoint.save(tmp / "last.pt", {**slim_payload(last), **{k: last[k] for k in RESUME if k in last},
                                          "optimizer": {"state": {}, "param_groups": last["optimizer"]["param_groups"]}})
        best_kind = None if best is None else "last" if _step(best) == step else "best.pt"
        if best_kind == "best.pt":
            checkpoint.save(tmp / "best.pt", slim_payload(best, "int8"))
        if (run / "log.jsonl").is_file():
            shutil.copyfile(run / "log.jsonl", tmp / "log.jsonl")
        state = last["train_state"]
        files = {p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for p in sorted(tmp.iterdir())}
        manifest = {"format": FORMAT, "version": VERSION, "source": str(run), "step": step,
                    "epoch": state.get("epoch"), "core_hours": round(state.get("cpu_s", 0.0) / 3600, 4),
                    "best_bleu": state.get("best_bleu"), "best_step": state.get("best_step"),
                    "lr": [g.get("lr") for g in last["optimizer"]["param_groups"]],
                    "best": best_kind, "best_update": None if best is None else _step(best),
                    "left_out": "the optimiser's per-parameter state (Adam's moments); last.pt's weights are "
                                "bfloat16, best.pt's int8 with a float32 scale per row",
                    "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "rnnsearch": __version__, "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    mib = sum(f["bytes"] for f in files.values()) / 2**20
    replaced = sum(f.get("bytes", 0) for f in (previous.get("files") or {}).values()) / 2**20
    log(f"snapshot of {run} at update {step:,} ({manifest['core_hours']:.2f} core-hours) in {out}: {mib:.1f} MiB"
        f"; best.pt: {best_kind or 'none yet'}" + (
            f"; it replaces a snapshot of {replaced:.2f} MiB, so a commit of it adds {mib + replaced:.2f} MiB to "
            "the submission's diffs (256 MiB at most: recipes/diff_size.sh)" if previous else ""))
    return manifest


def _checked(snapshot: Path, manifest: dict, name: str) -> Path:
    """``snapshot/name``, its bytes checked against the manifest's SHA-256."""
    path, entry = snapshot / name, (manifest.get("files") or {}).get(name)
    if entry is None or not path.is_file():
        raise UsageError(f"{path}: missing from the snapshot ({MANIFEST} lists {sorted(manifest.get('files') or {})})")
    if sha256(path) != entry.get("sha256"):
        raise UsageError(f"{path}: its SHA-256 differs from {snapshot / MANIFEST}'s (a damaged or partial copy)")
    return path


def restore_snapshot(snapshot: str | Path, run: str | Path, log=print) -> dict:
    """Write the run directory ``run`` (last.pt, best.pt, log.jsonl) from ``snapshot`` for
    ``rnnsearch train --resume``; refuses a ``run`` that already holds a last.pt. Returns the
    manifest."""
    snapshot, run = Path(snapshot), Path(run)
    manifest = read_manifest(snapshot)
    if (run / "last.pt").exists():
        raise UsageError(f"{run} already holds a run (last.pt): restore into a run directory without one")
    last = checkpoint.load(_checked(snapshot, manifest, "last.pt"))
    best = checkpoint.load(_checked(snapshot, manifest, "best.pt")) if manifest.get("best") == "best.pt" else None
    logged = _checked(snapshot, manifest, "log.jsonl") if "log.jsonl" in (manifest.get("files") or {}) else None
    run.mkdir(parents=True, exist_ok=True)
    restored = {**last, "model": _float32(last["model"]),
                "meta": {**(last.get("meta") or {}), "restored_from": str(snapshot), "snapshot_step": manifest["step"]}}
    if manifest.get("best") == "last":
        checkpoint.save(run / "best.pt", restored)
    elif best is not None:
        checkpoint.save(run / "best.pt", {**best, "model": _float32(best["model"])})
    state = last["train_state"]
    entry = {"step": state["step"], "event": "restored", "snapshot": str(snapshot),
             "note": "Adam's moments start from zero; weights from bfloat16", "elapsed_s": state.get("elapsed_s", 0.0),
             "cpu_s": state.get("cpu_s", 0.0), "tgt_tokens": state.get("tgt_tokens", 0)}
    text = logged.read_text(encoding="utf-8") if logged else ""
    (run / "log.jsonl").write_text(text + json.dumps(entry) + "\n", encoding="utf-8")
    checkpoint.save(run / "last.pt", restored)  # last: a run directory with last.pt is a whole one
    log(f"restored {run} from {snapshot}: update {state['step']:,}, {state.get('cpu_s', 0.0) / 3600:.2f} core-hours, "
        f"rate {manifest.get('lr')}; Adam's moments start again from zero. Continue with "
        f"`rnnsearch train CONFIG --out {run} --resume`")
    return manifest
