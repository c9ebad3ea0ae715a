"""The tables of ``make bench-marian`` (benchmarks/marian.py): every measured row, then the issue's
targets read off them (#62): rnnsearch's fastest configuration whose test BLEU is within ``BLEU_WITHIN``
of its own full float32 search, against Marian's float32 and Marian's fastest configuration (int8
and/or shortlist, whatever its BLEU), per beam and thread count; each system's 2-thread speed-up.
"""
from __future__ import annotations

BLEU_WITHIN = 0.1  # a faster configuration counts where its BLEU is this close to the full float32 search's
STARTUP_RUNS = 3  # the start-up is the median of this many whole processes (benchmarks/marian.py's startup)


def speed(value: float | None) -> str:
    return "n/a (too short)" if value is None else f"{value:,.0f}"


def table(train: dict, rows: list[dict], dev: dict, fl: dict) -> str:
    ours, theirs = train["rnnsearch"], train["marian"]
    lines = ["| | rnnsearch | Marian | rnnsearch / Marian |", "|---|---:|---:|---:|",
             f"| training, target tokens/s (steady) | {ours['tok_per_s']:,.0f} | {theirs['tok_per_s']:,.0f} | "
             f"{ours['tok_per_s'] / theirs['tok_per_s']:.2f}x |",
             *([] if "rnnsearch_bf16" not in train else [
                 f"| training, target tokens/s (steady), rnnsearch in bf16 autocast ({train['rnnsearch_bf16']['minutes']:g} "
                 f"min; Marian's CPU training is float32 only) | {train['rnnsearch_bf16']['tok_per_s']:,.0f} | "
                 f"{theirs['tok_per_s']:,.0f} | {train['rnnsearch_bf16']['tok_per_s'] / theirs['tok_per_s']:.2f}x |"]),
             f"| training peak RSS | {ours['peak_rss_mib'] / 1024:.2f} GiB | {theirs['peak_rss_mib'] / 1024:.2f} GiB | |",
             f"| updates in the budget | {ours['updates']:,} | {theirs['updates']:,} | |",
             f"| dev BLEU (500 sentences, beam 5) | {dev['rnnsearch']:.2f} | {dev['marian']:.2f} | |",
             f"| GFLOP per target token (forward) | {fl['rnnsearch'] / 1e9:.3f} | {fl['marian'] / 1e9:.3f} | |"]
    for r in rows:
        a, b = r["rnnsearch"], r["marian"]
        name = f"decoding, beam {r['beam']}, {r['threads']} thread{'s' if r['threads'] > 1 else ''}" + \
            (", int8" if r["int8"] else "") + (", shortlist 100 + 100" if r.get("shortlist") else "")
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        lines.append(f"| {name}: output tokens/s (BLEU; tokens) | {speed(a['tok_per_s'])} ({a['bleu']:.2f}; "
                     f"{a['tokens']:,}) | {speed(b['tok_per_s'])} ({b['bleu']:.2f}; {b['tokens']:,}) | {ratio} |")
    start = rows[0]
    lines.append(f"| start-up (1 sentence, whole process, median of {STARTUP_RUNS}) | "
                 f"{start['rnnsearch']['startup_s']:.2f} s | {start['marian']['startup_s']:.2f} s | |")
    return "\n".join(lines) + "\n\n" + targets(rows)


def _name(row: dict) -> str:
    return " + ".join([*(["int8"] if row["int8"] else []), *(["shortlist"] if row["shortlist"] else [])]) or "float32"


def targets(rows: list[dict]) -> str:
    """The race read against the targets: per beam and thread count, rnnsearch's fastest configuration
    within BLEU_WITHIN of its full float32 search against Marian's float32 (target 3x) and against Marian's
    fastest (target 2x); per beam, each system's 2-thread speed-up (float32, target 1.8x)."""
    lines = ["| beam, threads | rnnsearch's fastest within 0.1 BLEU | / Marian float32 (target 3x) | "
             "Marian's fastest | / Marian's fastest (target 2x) |", "|---|---|---:|---|---:|"]
    groups: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["beam"], r["threads"]), []).append(r)
    for (beam, threads), group in sorted(groups.items()):
        full = next(r for r in group if not r["int8"] and not r["shortlist"])
        ours = [r for r in group if r["rnnsearch"]["tok_per_s"] is not None
                and abs(r["rnnsearch"]["bleu"] - full["rnnsearch"]["bleu"]) <= BLEU_WITHIN + 1e-9]
        theirs = [r for r in group if r["marian"]["tok_per_s"] is not None]
        if not ours or not theirs or full["marian"]["tok_per_s"] is None:
            continue
        best = max(ours, key=lambda r: r["rnnsearch"]["tok_per_s"])
        fastest = max(theirs, key=lambda r: r["marian"]["tok_per_s"])
        a, f32, top = best["rnnsearch"]["tok_per_s"], full["marian"]["tok_per_s"], fastest["marian"]["tok_per_s"]
        lines.append(f"| {beam}, {threads} | {_name(best)}: {a:,.0f} (BLEU {best['rnnsearch']['bleu']:.2f}) | "
                     f"{a / f32:.2f}x | {_name(fastest)}: {top:,.0f} (BLEU {fastest['marian']['bleu']:.2f}) | "
                     f"{a / top:.2f}x |")
    lines += ["", "| beam | rnnsearch: 2 threads / 1 (float32) | Marian: 2 threads / 1 (float32) |", "|---|---:|---:|"]
    for beam in sorted({r["beam"] for r in rows}):
        full = {r["threads"]: r for r in rows if r["beam"] == beam and not r["int8"] and not r["shortlist"]}
        if 1 in full and 2 in full:
            ups = [full[2][s]["tok_per_s"] / full[1][s]["tok_per_s"]
                   if full[1][s]["tok_per_s"] and full[2][s]["tok_per_s"] else None for s in ("rnnsearch", "marian")]
            lines.append(f"| {beam} | " + " | ".join("n/a" if u is None else f"{u:.2f}x" for u in ups) + " |")
    return "\n".join(lines)


def minutes_to_reach(curve: dict[float, float], target: float) -> float | None:
    """The minutes at which a dev-BLEU curve ({minutes: BLEU} at its marks) first reaches ``target``,
    linear between the two marks around that point (from BLEU 0 at minute 0); None where it never does."""
    last_m, last_b = 0.0, 0.0
    for m, b in sorted(curve.items()):
        if b >= target:
            return last_m + (m - last_m) * (target - last_b) / (b - last_b) if b > last_b else m
        last_m, last_b = m, b
    return None


def quality_table(marks: dict[str, dict[float, dict]], speed_ratio: float | None) -> str:
    """``benchmarks/race_quality.py``'s tables: each system's dev BLEU (and updates) at every mark, then the
    minutes each needs to reach the other's dev BLEU at the last mark, read against #87's targets: rnnsearch
    at Marian's last-mark BLEU in at most 0.4 of the minutes (72 of 180), its own last-mark BLEU at least
    Marian's + 1.0, and its training at least 2.5x Marian's target tokens/s (``speed_ratio``)."""
    ours, theirs = marks["rnnsearch"], marks["marian"]
    lines = ["| minutes | rnnsearch: updates | rnnsearch: dev BLEU | Marian: updates | Marian: dev BLEU |",
             "|---:|---:|---:|---:|---:|"]
    for m in sorted(set(ours) | set(theirs)):
        a, b = ours.get(m), theirs.get(m)
        lines.append(f"| {m:g} | " + " | ".join(
            "-" if r is None else f"{r['updates']:,} | {r['bleu']:.2f}" for r in (a, b)) + " |")
    end = max(set(ours) & set(theirs), default=None)
    if end is None:
        return "\n".join(lines)
    curves = {s: {m: r["bleu"] for m, r in marks[s].items()} for s in ("rnnsearch", "marian")}
    finals = {s: curves[s][end] for s in curves}
    reach = {"rnnsearch": minutes_to_reach(curves["rnnsearch"], finals["marian"]),
             "marian": minutes_to_reach(curves["marian"], finals["rnnsearch"])}
    shown = {s: "not reached" if v is None else f"{v:.0f} min" for s, v in reach.items()}
    lines += ["", "| | rnnsearch | Marian | target |", "|---|---:|---:|---|",
              f"| dev BLEU at {end:g} minutes | {finals['rnnsearch']:.2f} | {finals['marian']:.2f} | "
              f"rnnsearch >= Marian + 1.0: {'met' if finals['rnnsearch'] >= finals['marian'] + 1.0 else 'missed'} |",
              f"| minutes to the other's {end:g}-minute dev BLEU (linear between marks) | {shown['rnnsearch']} | "
              f"{shown['marian']} | rnnsearch <= {0.4 * end:g} min: "
              f"{'met' if reach['rnnsearch'] is not None and reach['rnnsearch'] <= 0.4 * end else 'missed'} |"]
    if speed_ratio is not None:
        lines.append(f"| training target tokens/s, rnnsearch / Marian | {speed_ratio:.2f}x | | >= 2.5x: "
                     f"{'met' if speed_ratio >= 2.5 else 'missed'} |")
    return "\n".join(lines)
