"""The benchmark's Markdown table and its targets (issue #4)."""
from __future__ import annotations


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _fraction(system: dict, gflops: float) -> float:
    """Analytic training FLOP/s of ``system`` over a matmul ceiling in GFLOP/s."""
    return system["flops"] * system["tok_per_s"] / (gflops * 1e9)


def render(info: dict, ours: dict, peer: dict, n: int, lengths: dict) -> str:
    m = info["minutes"]
    c, c16 = info["ceiling"], info["ceiling_bf16"]
    rows = [
        ("parameters", f"{ours['parameters']:,}", f"{peer['parameters']:,}" if peer["parameters"] else "?", None),
        ("analytic training FLOPs per target token", f"{ours['flops'] / 1e6:.1f} M", f"{peer['flops'] / 1e6:.1f} M",
         None),
        ("training: target tokens/s (steady state)", f"{ours['tok_per_s']:,.0f}", f"{peer['tok_per_s']:,.0f}",
         _ratio(ours["tok_per_s"], peer["tok_per_s"])),
        ("training: precision of the products", ours["precision"], peer["precision"], None),
        ("training: fraction of the float32 matmul ceiling", f"{_fraction(ours, c):.0%}",
         f"{_fraction(peer, c):.0%}", None),
        ("training: fraction of the bfloat16 matmul ceiling", f"{_fraction(ours, c16):.0%}",
         f"{_fraction(peer, c16):.0%}", None),
        ("training: peak resident memory", f"{ours['peak_rss_mib']:,.0f} MiB", f"{peer['peak_rss_mib']:,.0f} MiB",
         _ratio(ours["peak_rss_mib"], peer["peak_rss_mib"])),
        (f"updates (epochs) in {m:g} min", f"{ours['updates']:,} ({ours['epochs']})",
         f"{peer['updates']:,} ({peer['epochs']})", None),
        (f"BLEU, test_2016_flickr ({n} sentences), beam 5, after {m:g} min", f"{ours['beam5']['bleu']:.2f}",
         f"{peer['beam5']['bleu']:.2f}", None),
    ]
    for beam, name in ((5, "beam 5"), (1, "greedy")):
        o, p = ours[f"beam{beam}"], peer[f"beam{beam}"]
        rows += [
            (f"{name}: sentences/s", f"{o['sent_per_s']:.1f}", f"{p['sent_per_s']:.1f}",
             _ratio(o["sent_per_s"], p["sent_per_s"])),
            (f"{name}: output tokens/s", f"{o['tok_per_s']:,.0f}", f"{p['tok_per_s']:,.0f}",
             _ratio(o["tok_per_s"], p["tok_per_s"])),
            (f"{name}: mean output length (pieces)", f"{o['mean_len']:.1f}", f"{p['mean_len']:.1f}", None),
        ]
        if beam == 1:
            rows.append(("greedy: BLEU", f"{o['bleu']:.2f}", f"{p['bleu']:.2f}", None))
    mode = "QUICK (development: not a result)" if info["quick"] else "full"
    lines = [f"## {info['date']}: rnnsearch vs JoeyNMT 2.3.0, Multi30k En->Fr ({mode})", "",
             f"- Machine: {info['machine']}; torch {info['torch']}.",
             f"- Command: `{info['command']}` (`make bench`). Memory warmed first (18 GiB first-touched in "
             f"{info['warm_s']:.0f} s); 2048^3 matmul in the same run, the higher of before and after the runs: "
             f"float32 {info['ceiling']:.1f} GFLOP/s, bfloat16 {info['ceiling_bf16']:.1f} GFLOP/s "
             f"(before: {info['ceilings'][0][0]:.1f} / {info['ceilings'][0][1]:.1f}, "
             f"after: {info['ceilings'][1][0]:.1f} / {info['ceilings'][1][1]:.1f}).",
             f"- rnnsearch: `{ours['command']}`; JoeyNMT: `{peer['command']}` (stopped with SIGINT "
             f"{m:g} min after its training began; its last checkpoint is from its last validation, every 50 "
             "updates on 100 dev sentences).",
             f"- Shared joint SentencePiece BPE, 8000 pieces; mean source length {lengths['src_len']:.1f} pieces, "
             f"source/target {lengths['src_per_tgt']:.2f}. Output tokens are counted by re-encoding each "
             "system's output with that model.", "",
             "| | rnnsearch | JoeyNMT 2.3.0 | ratio |", "| --- | --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c_} | {d or ''} |" for a, b, c_, d in rows]
    return "\n".join(lines) + "\n"


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
