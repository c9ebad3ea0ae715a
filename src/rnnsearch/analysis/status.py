"""``rnnsearch status RUN...``: where a training run stands, from its ``log.jsonl`` alone (no
checkpoint is read, so it is instant even for large models and safe while the run trains).

For each run: updates, epochs, wall hours, core-hours (the CPU time of the training loop, all
threads; ``train.max_core_hours`` is the budget, read from ``RUN/config.yaml``), target tokens,
the latest training loss and speed, the dev BLEU curve against core-hours, and a projection of
the core-hours to a target dev BLEU: a least-squares fit of BLEU = a + b ln(core-hours) over the
later half of the validations (learning curves are close to logarithmic in compute at this
stage). The projection is an extrapolation, said as such; a slope <= 0 says the curve is flat.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import yaml

from rnnsearch.errors import UsageError


def read_log(path: Path) -> list[dict]:
    """The entries of a ``log.jsonl``; a torn last line (a run killed while writing) is skipped."""
    entries = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _hours(entry: dict) -> float:
    """Core-hours of an entry; wall hours for logs written before core-hours were logged."""
    return entry.get("cpu_s", entry.get("elapsed_s", 0.0)) / 3600


def fit_log_curve(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least squares y = a + b ln(x) over (x, y) with x > 0; None with fewer than 3 points."""
    points = [(x, y) for x, y in points if x > 0]
    if len(points) < 3:
        return None
    xs = [math.log(x) for x, _ in points]
    ys = [y for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var
    return my - b * mx, b


def project(curve: list[tuple[float, float]], target: float, budget: float | None = None) -> dict:
    """Core-hours to reach ``target`` on the fitted curve of the later half of ``curve``, and the
    dev BLEU that curve gives at ``budget`` core-hours (``at_budget``), if there is one."""
    now = curve[-1][0] if curve else 0.0
    later = [p for p in curve if p[0] >= now / 2]
    fit = fit_log_curve(later if len(later) >= 3 else curve)
    out = {"target": target, "fit": None, "core_hours_total": None, "core_hours_more": None, "at_budget": None}
    if fit is None:
        out["note"] = "fewer than 3 validations: no projection yet"
        return out
    a, b = fit
    out["fit"] = {"a": round(a, 3), "b": round(b, 3), "points": len(later if len(later) >= 3 else curve)}
    if budget:
        out["at_budget"] = {"core_hours": budget, "dev_bleu": round(a + b * math.log(budget), 2)}
    best = max(y for _, y in curve)
    if best >= target:
        out["note"] = "reached"
        out["core_hours_total"], out["core_hours_more"] = now, 0.0
    elif b <= 0:
        out["note"] = "flat: the fitted slope is <= 0, the target is not reached at this rate"
    else:
        total = math.exp(min((target - a) / b, 50.0))
        out["core_hours_total"], out["core_hours_more"] = round(total, 2), round(max(total - now, 0.0), 2)
        far = total / now if now > 0 else math.inf
        out["note"] = "extrapolated" if far <= 2 else \
            f"extrapolated to {far:.0f}x the core-hours so far (an early curve's fit: a rough guide at best)"
    return out


def run_status(run: str | Path, target: float | None = None) -> dict:
    """The numbers ``rnnsearch status`` prints for one run directory."""
    run = Path(run)
    log = run / "log.jsonl"
    if not log.exists():
        raise UsageError(f"{run}: no log.jsonl (not a run directory, or the run has not started)")
    entries = read_log(log)
    budget = None
    config = run / "config.yaml"
    if config.exists():
        cfg = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        budget = (cfg.get("train") or {}).get("max_core_hours") or None
    last = entries[-1] if entries else {}
    train = [e for e in entries if e.get("loss") is not None]
    valid = [e for e in entries if e.get("dev_bleu") is not None]
    curve = [(_hours(e), float(e["dev_bleu"])) for e in valid]
    best = max(valid, key=lambda e: e["dev_bleu"]) if valid else None
    status = {
        "run": str(run), "step": last.get("step", 0), "epoch": max((e.get("epoch", 0) for e in entries), default=0),
        "wall_hours": round(last.get("elapsed_s", 0.0) / 3600, 3),
        "core_hours": round(last["cpu_s"] / 3600, 3) if "cpu_s" in last else None,
        "budget_core_hours": budget, "tgt_tokens": last.get("tgt_tokens", 0),
        "loss": train[-1]["loss"] if train else None, "align_cost": train[-1].get("align_cost") if train else None,
        "tok_per_s": train[-1].get("tok_per_s") if train else None,
        "tok_per_core_s": tokens_per_core_second(train),
        "dev": [{"step": e["step"], "core_hours": round(_hours(e), 3), "dev_bleu": e["dev_bleu"],
                 "dev_loss": e.get("dev_loss")} for e in valid],
        "best": None if best is None else {"step": best["step"], "dev_bleu": best["dev_bleu"]},
        "rates": rate_changes(valid),
        "restored": [{"step": e["step"], "snapshot": e.get("snapshot")} for e in entries if e.get("event") == "restored"],
    }
    if target is not None:
        status["projection"] = project(curve, target, budget)
    return status


def rate_changes(valid: list[dict]) -> list[dict]:
    """The learning rate at the first validation and wherever it changed (``train.lr_decay``):
    [{"step", "lr"}]; empty for logs without a rate."""
    out: list[dict] = []
    for e in valid:
        if e.get("lr") is not None and (not out or e["lr"] != out[-1]["lr"]):
            out.append({"step": e["step"], "lr": e["lr"]})
    return out


def tokens_per_core_second(train: list[dict]) -> float | None:
    """Target tokens per second of CPU time between the last two training entries of one
    invocation (the logged tok/s is per wall second, which a paused run, SIGSTOP, drags down)."""
    pairs = [(a, b) for a, b in zip(train, train[1:]) if "cpu_s" in a and "cpu_s" in b
             and b.get("tgt_tokens", 0) > a.get("tgt_tokens", 0) and b["cpu_s"] > a["cpu_s"]]
    if not pairs:
        return None
    a, b = pairs[-1]
    return round((b["tgt_tokens"] - a["tgt_tokens"]) / (b["cpu_s"] - a["cpu_s"]), 1)


def format_status(s: dict) -> str:
    core = "-" if s["core_hours"] is None else f"{s['core_hours']:.2f}"
    budget = f" of {s['budget_core_hours']:g}" if s["budget_core_hours"] else ""
    speed = "" if s["tok_per_s"] is None else f", {s['tok_per_s']:,.0f} tok/s"
    if s.get("tok_per_core_s") is not None:
        speed += f" ({s['tok_per_core_s']:,.0f} per core-second)"
    loss = "" if s["loss"] is None else f", train loss {s['loss']:.3f}"
    if s.get("align_cost") is not None:  # guided alignment (train.guided_alignment)
        loss += f", alignment cost {s['align_cost']:.3f}"
    lines = [f"{s['run']}: step {s['step']:,}, epoch {s['epoch']}, {s['wall_hours']:.2f} h wall, "
             f"{core}{budget} core-hours, {s['tgt_tokens'] / 1e6:.1f}M target tokens{speed}{loss}"]
    if s["dev"]:
        cells = [f"{d['step']}: {d['dev_bleu']:.2f} ({d['core_hours']:.1f} h)" for d in s["dev"]]
        lines.append("  dev BLEU (step: BLEU (core-hours)): " + ", ".join(cells))
        lines.append(f"  best dev BLEU {s['best']['dev_bleu']:.2f} at step {s['best']['step']}")
        if s.get("rates"):
            lines.append("  learning rate (at the validations): " + ", ".join(
                f"{r['lr']:g} from step {r['step']:,}" for r in s["rates"]))
    else:
        lines.append("  no validation yet")
    for r in s.get("restored") or []:  # `rnnsearch restore`: Adam's moments started again there
        lines.append(f"  restored from the snapshot {r['snapshot']} at step {r['step']:,} (Adam's moments from zero)")
    p = s.get("projection")
    if p is not None:
        if p["fit"] is None or p["core_hours_more"] is None:
            lines.append(f"  to dev BLEU {p['target']:g}: {p['note']}")
        else:
            f = p["fit"]
            lines.append(f"  to dev BLEU {p['target']:g}: {p['core_hours_more']:.1f} more core-hours "
                         f"({p['core_hours_total']:.1f} in all; {p['note']}: BLEU = {f['a']:.2f} + "
                         f"{f['b']:.2f} ln(core-hours), fitted on {f['points']} validations)")
        if p.get("at_budget"):  # the same fitted curve, read at the run's budget
            lines.append(f"  at the budget of {p['at_budget']['core_hours']:g} core-hours: dev BLEU "
                         f"{p['at_budget']['dev_bleu']:.2f} on the fitted curve (an extrapolation)")
    return "\n".join(lines)
