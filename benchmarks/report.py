"""The benchmark's Markdown table and its targets (issue #4)."""
from __future__ import annotations


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _fraction(system: dict, gflops: float) -> float:
    """Analytic training FLOP/s of ``system`` over a matmul ceiling in GFLOP/s."""
    return system["flops"] * system["tok_per_s"] / (gflops * 1e9)


def _rows(m: float, n: int, c: float, c16: float) -> list[tuple]:
    """(label, format, ratio) of each row: ``format(system)`` is the cell text, ``ratio(system)`` the
    number rnnsearch's is divided by the peer's (None: no ratio)."""
    rows = [
        ("parameters", lambda s: f"{s['parameters']:,}" if s.get("parameters") else "?", None),
        ("analytic training FLOPs per target token", lambda s: f"{s['flops'] / 1e6:.1f} M", None),
        ("training: target tokens/s (steady state)", lambda s: f"{s['tok_per_s']:,.0f}", lambda s: s["tok_per_s"]),
        ("training: precision of the products", lambda s: s["precision"], None),
        ("training: fraction of the float32 matmul ceiling", lambda s: f"{_fraction(s, c):.0%}", None),
        ("training: fraction of the bfloat16 matmul ceiling", lambda s: f"{_fraction(s, c16):.0%}", None),
        ("training: peak resident memory", lambda s: f"{s['peak_rss_mib']:,.0f} MiB", lambda s: s["peak_rss_mib"]),
        (f"updates (epochs) in {m:g} min", lambda s: f"{s['updates']:,} ({s['epochs']})", None),
        (f"BLEU, test_2016_flickr ({n} sentences), beam 5, after {m:g} min", lambda s: f"{s['beam5']['bleu']:.2f}",
         None),
    ]
    for beam, name in ((5, "beam 5"), (1, "greedy")):
        k = f"beam{beam}"
        rows += [
            (f"{name}: sentences/s", lambda s, k=k: f"{s[k]['sent_per_s']:.1f}", lambda s, k=k: s[k]["sent_per_s"]),
            (f"{name}: output tokens/s", lambda s, k=k: f"{s[k]['tok_per_s']:,.0f}", lambda s, k=k: s[k]["tok_per_s"]),
            (f"{name}: mean output length (pieces)", lambda s, k=k: f"{s[k]['mean_len']:.1f}", None),
        ]
        if beam == 1:
            rows.append(("greedy: BLEU", lambda s: f"{s['beam1']['bleu']:.2f}", None))
    return rows


def render(info: dict, ours: dict, peers: dict[str, dict], n: int, lengths: dict) -> str:
    """The Markdown section: rnnsearch, each peer (name -> result), and rnnsearch's ratio to each."""
    m = info["minutes"]
    names, systems = list(peers), list(peers.values())
    header = ["", "rnnsearch"] + names + [f"ratio to {name.split()[0]}" for name in names]
    table = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for label, value, ratio in _rows(m, n, info["ceiling"], info["ceiling_bf16"]):
        cells = [label, value(ours)] + [value(s) for s in systems]
        cells += [_ratio(ratio(ours), ratio(s)) if ratio else "" for s in systems]
        table.append("| " + " | ".join(cells) + " |")
    mode = "QUICK (development: not a result)" if info["quick"] else "full"
    commands = "; ".join(f"{name}: `{s['command']}`" for name, s in peers.items())
    lines = [f"### {info['date']}: rnnsearch vs {' and '.join(names)}, Multi30k En->Fr ({mode})", "",
             f"- Machine: {info['machine']}; torch {info['torch']}.",
             f"- Command: `{info['command']}` (`make bench`). Memory warmed first ({info['warm_gib']} GiB first-touched in "
             f"{info['warm_s']:.0f} s); 2048^3 matmul in the same run, the higher of before and after the runs: "
             f"float32 {info['ceiling']:.1f} GFLOP/s, bfloat16 {info['ceiling_bf16']:.1f} GFLOP/s "
             f"(before: {info['ceilings'][0][0]:.1f} / {info['ceilings'][0][1]:.1f}, "
             f"after: {info['ceilings'][1][0]:.1f} / {info['ceilings'][1][1]:.1f}).",
             f"- rnnsearch: `{ours['command']}`; {commands} (each peer stopped with SIGINT {m:g} min after its "
             "training began and evaluated at its last checkpoint: JoeyNMT saves at its validations, every 50 "
             "updates, OpenNMT-py every 50 updates, 10 in a quick run).",
             f"- Shared joint SentencePiece BPE, 8000 pieces; mean source length {lengths['src_len']:.1f} pieces, "
             f"source/target {lengths['src_per_tgt']:.2f}. Output tokens are counted by re-encoding each "
             "system's output with that model.", ""]
    return "\n".join(lines + table) + "\n"


def targets(info: dict, ours: dict, peer: dict) -> list[str]:
    c = info["ceiling"]
    checks = [
        ("training throughput >= 2.0x JoeyNMT", ours["tok_per_s"] >= 2 * peer["tok_per_s"],
         _ratio(ours["tok_per_s"], peer["tok_per_s"])),
        ("training >= 60% of the matmul ceiling (float32 2048^3, as the issue measures it)",
         _fraction(ours, c) >= 0.6,
         f"{_fraction(ours, c):.0%} ({ours['precision']}; {_fraction(ours, info['ceiling_bf16']):.0%} of the "
         "bfloat16 ceiling)"),
        ("beam 5 output tokens/s >= 3x JoeyNMT", ours["beam5"]["tok_per_s"] >= 3 * peer["beam5"]["tok_per_s"],
         _ratio(ours["beam5"]["tok_per_s"], peer["beam5"]["tok_per_s"])),
        ("greedy output tokens/s >= 3x JoeyNMT", ours["beam1"]["tok_per_s"] >= 3 * peer["beam1"]["tok_per_s"],
         _ratio(ours["beam1"]["tok_per_s"], peer["beam1"]["tok_per_s"])),
        (f"BLEU after {info['minutes']:g} min >= 25", ours["beam5"]["bleu"] >= 25, f"{ours['beam5']['bleu']:.2f}"),
        ("peak training memory <= 1000 MiB", ours["peak_rss_mib"] <= 1000, f"{ours['peak_rss_mib']:.0f} MiB"),
    ]
    return ["", "Targets (issue #4):", ""] + [f"- [{'x' if ok else ' '}] {name}: {value}" for name, ok, value in checks]
