"""``rnnsearch report``: the paper's study for any set of checkpoints and a test set.

Writes ``report.md`` and a self-contained ``report.html`` (figures embedded) with PNGs:
Table 1 (BLEU All / No UNK, with the paper's numbers beside), Figure 2 (BLEU by source
length), Figure 3 (alignments of one model with attention, by default the first: one given
sentence and three random test sentences of 10-20 words without unknown words, seeded; the paper
shows RNNsearch-50's), long-sentence examples, and training
curves from each checkpoint's ``log.jsonl``.
"""
from __future__ import annotations

import base64
import contextlib
import html
import json
import random
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnsearch.analysis.evaluate import chrf_table, evaluate, length_table, length_unit, table1  # noqa: E402
from rnnsearch.analysis.plot import plot_alignment, plot_bleu_by_length  # noqa: E402
from rnnsearch.decoding import pretrained  # noqa: E402
from rnnsearch.decoding.average import describe  # noqa: E402
from rnnsearch.decoding.translator import Translator  # noqa: E402
from rnnsearch.errors import UsageError
from rnnsearch.data.vocab import EOS_TOKEN

PAPER_TABLE1 = {  # Bahdanau et al. (2014), Table 1: BLEU on newstest2014, All / No UNK
    "RNNencdec-30": (13.93, 24.19), "RNNsearch-30": (21.50, 31.44),
    "RNNencdec-50": (17.82, 26.71), "RNNsearch-50": (26.75, 34.16), "RNNsearch-50*": (28.45, 36.15),
    "Moses": (33.30, 35.63),
}


def figure3_sentences(translator, srcs: list[str], given: str | None, seed: int, k: int = 3) -> list[str]:
    """The given sentence (default: the first) and ``k`` random others of 10-20 words, no UNK (none the given)."""
    codec, first = translator.src_codec, given if given is not None else srcs[0]
    pool = [s for s in dict.fromkeys(srcs) if 10 <= len(codec.words(s)) <= 20 and not codec.has_unk(s) and s != first]
    picked = random.Random(seed).sample(pool, min(k, len(pool)))
    return [first] + picked


def long_examples(srcs, refs, hyps: dict[str, list[str]], codec, n: int, seed: int, over: int = 30) -> list[str]:
    idx = [i for i, s in enumerate(srcs) if len(codec.words(s)) > over]
    idx = sorted(random.Random(seed).sample(idx, min(n, len(idx))))
    lines = [f"{len(idx)} of the {sum(len(codec.words(s)) > over for s in srcs)} test sentences "
             f"of more than {over} {length_unit(codec)} (seeded sample)."]
    for i in idx:
        lines += ["", f"**Line {i + 1}** ({len(codec.words(srcs[i]))} {length_unit(codec)})", "", f"- source: {srcs[i]}",
                  f"- reference: {refs[i]}"] + [f"- {name}: {h[i]}" for name, h in hyps.items()]
    return lines


def training_curves(logs: dict[str, Path], path: Path) -> Path | None:
    """Dev BLEU and training loss against updates and against core-hours (the CPU time of the
    training loop, ``cpu_s``), or wall hours where a log does not count CPU time, one line per model."""
    series = {}
    for name, log in logs.items():
        if log.exists():
            series[name] = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    if not series:
        return None
    plotted = [e for es in series.values() for e in es if e.get("dev_bleu") is not None or e.get("loss") is not None]
    hours = "cpu_s" if all("cpu_s" in e for e in plotted) else "elapsed_s"
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for name, entries in series.items():
        for row, key in enumerate(("dev_bleu", "loss")):
            points = [e for e in entries if e.get(key) is not None]
            for col, x in enumerate(("step", hours)):
                xs = [e[x] / (1 if x == "step" else 3600) for e in points]
                axes[row][col].plot(xs, [e[key] for e in points], label=name)
    for row, key in enumerate(("dev BLEU", "training loss (nats/token)")):
        for col, x in enumerate(("updates", "core-hours" if hours == "cpu_s" else "wall hours")):
            axes[row][col].set_xlabel(x)
            axes[row][col].set_ylabel(key)
            axes[row][col].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def compute_table(translators: dict) -> list[str]:
    """Markdown rows: each model's training as its checkpoint records it."""
    rows = ["| Model | updates | epochs | target tokens | wall hours | core-hours | best dev BLEU (step) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, t in translators.items():
        s = getattr(t, "train_state", None)
        if not s:
            rows.append(f"| {name} | - | - | - | - | - | - |")
            continue
        core = f"{s['cpu_s'] / 3600:.2f}" if s.get("cpu_s") else "-"
        rows.append(f"| {name} | {s['step']:,} | {s['epoch']} | {s['tgt_tokens'] / 1e6:.1f}M | "
                    f"{s['elapsed_s'] / 3600:.2f} | {core} | {s['best_bleu']:.2f} ({s['best_step']:,}) |")
    averaged = [(name, t.averaged_from) for name, t in translators.items() if getattr(t, "averaged_from", None)]
    if averaged:
        rows += [""] + [f"{name}: {describe(paths)}; not its best dev BLEU checkpoint." for name, paths in averaged]
    return rows


def hyp_file(name: str, lang: str) -> str:
    """``RNNsearch-50.hyp.fr``: a model's test output, one line per sentence."""
    return re.sub(r"[^A-Za-z0-9._*+-]", "_", name) + f".hyp.{lang}"


@contextlib.contextmanager
def _no_progress(total: int, name: str):
    yield None


def read_outputs(outputs: list[tuple[str, str]], n: int) -> dict[str, list[str]]:
    """Systems given by their test output (NAME, FILE: one line per test sentence, such as Moses'
    committed hypotheses) -> {NAME: lines}, refused unless each has ``n`` lines."""
    given = {}
    for name, path in outputs:
        given[name] = Path(path).read_text(encoding="utf-8").splitlines()
        if len(given[name]) != n:
            raise UsageError(f"--output {name}={path}: {len(given[name])} lines for the {n} test sentences")
    return given


def score_outputs(given: dict[str, list[str]], srcs: list[str], refs: list[str], first) -> dict[str, dict]:
    """``read_outputs``'s systems scored as the models are, No UNK under ``first``'s vocabularies."""
    from rnnsearch.analysis.evaluate import score_translations
    return {name: {**score_translations(hyps, refs, srcs, first.src_codec, first.tgt_codec), "beam": None,
                   "hypotheses": hyps} for name, hyps in given.items()}


def build_report(models: list[tuple[str, str]], src_path, ref_path, out_dir, settings=None,
                 sentence: str | None = None, seed: int = 1, n_long: int = 5, figure3: str | None = None,
                 notes: str | None = None, log=print, device: str = "cpu", progress=None,
                 outputs: list[tuple[str, str]] = (), keep_unk: bool = False) -> dict:
    """``settings``: SearchSettings, each model's unset fields its own decode section's (None: all).
    ``progress(total, name)``: a context manager yielding a callback of the sentences done (the
    CLI's tqdm bar), entered for each model's translation of the test set; None: no progress.
    ``outputs``: (NAME, FILE) of systems given by their output (``read_outputs``), rows after the models'.
    ``keep_unk``: count each ``<unk>`` as written, as the paper's Table 1 does (else as each model writes by
    default: a release replaces it by its aligned source word, as Moses passes an unknown word through)."""
    from rnnsearch.data.io import read_parallel
    names = [name for name, _ in models]
    if figure3 is not None and figure3 not in names:
        raise UsageError(f"--figure3 {figure3!r}: not one of the models ({', '.join(names)})")
    srcs, refs = read_parallel(src_path, ref_path)
    if not srcs:
        raise UsageError(f"{src_path} is empty: no sentences to report on")
    given = read_outputs(list(outputs), len(srcs))
    translators = {name: Translator.from_pretrained(ckpt, device=device) for name, ckpt in models}
    for t in translators.values() if keep_unk else ():
        t.set_unk_replacement(None)
    attending = [n for n in names if translators[n].model.arch == "rnnsearch"]
    aligner = figure3 or (attending[0] if attending else None)
    if aligner is not None and aligner not in attending:  # refused before the long translations
        raise UsageError(f"--figure3 {aligner!r}: an {translators[aligner].model.arch} model has no attention")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name, ckpt in models:
        log(f"translating {len(srcs)} sentences with {name} ({ckpt})")
        with (progress or _no_progress)(len(srcs), name) as advance:
            results[name] = evaluate(translators[name], srcs, refs, settings, advance)
    first = translators[models[0][0]]
    results.update(score_outputs(given, srcs, refs, first))
    hyps = {name: r.pop("hypotheses") for name, r in results.items()}
    lang = first.tgt_codec.lang
    for name, lines in hyps.items():  # anyone can score them again with the sacrebleu command line
        (out / hyp_file(name, lang)).write_text("".join(h + "\n" for h in lines), encoding="utf-8")
    plot_bleu_by_length({n: r["by_length"] for n, r in results.items()}, out / "figure2.png",
                        unit=results[names[0]]["length_unit"])
    figures3 = []
    if aligner is not None:
        for k, text in enumerate(figure3_sentences(translators[aligner], srcs, sentence, seed)):
            t = translators[aligner].translate([text], settings)[0]
            path = plot_alignment(t.attention, t.source_tokens, t.tokens + [EOS_TOKEN], out / f"figure3_{k}.png",
                                  title=t.text)
            figures3.append((text, t.text, path))
    curves = training_curves({n: pretrained.resolve(c).parent / "log.jsonl" for n, c in models}, out / "curves.png")
    lines = _markdown(models, results, src_path, ref_path, figures3, curves, aligner,
                      long_examples(srcs, refs, hyps, first.src_codec, n_long, seed),
                      compute_table(translators), notes,
                      {name: hyp_file(name, lang) for name in results}, outputs, keep_unk)
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "report.html").write_text(_html(lines, out), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return results


def _markdown(models, results, src_path, ref_path, figures3, curves, aligner, long_lines, compute, notes,
              hyp_files, outputs=(), keep_unk: bool = False) -> list[str]:
    any_r = next(iter(results.values()))
    lines = ["# Translation report", "",
             f"Test set: `{src_path}` -> `{ref_path}` ({any_r['n']} sentences), beam {any_r['beam']}.",
             f"sacreBLEU signature: `{any_r['signature']}`.", "",
             "Models: " + ", ".join(f"{n} (`{c}`)" for n, c in models) + ".", ""]
    if outputs:
        lines += ["Systems given by their output (scored alike, No UNK under the first model's vocabularies): "
                  + ", ".join(f"{n} (`{f}`)" for n, f in outputs) + ".", ""]
    lines += [
             "Each model's test output, one line per sentence: " + ", ".join(f"`{f}`" for f in hyp_files.values())
             + f" (e.g. `sacrebleu {ref_path} -i {next(iter(hyp_files.values()))}`).", ""]
    if notes:
        lines += [notes.rstrip(), ""]
    lines += ["## Compute", "", "What each checkpoint was trained with (core-hours: CPU time of the training "
              "loop, all threads; - where the run did not count it).", ""] + compute + [""]
    lines += ["## Table 1: BLEU", "",
             "All: every test sentence. No UNK: sentences with no unknown unit on either side. The paper's "
             "numbers (newstest2014, its own vocabularies) are beside for reference. "
             + ("Outputs as written, `<unk>` included, as the paper's Table 1 counts them." if keep_unk else
                "Outputs as each model writes them by default: a release replaces each `<unk>` by its aligned "
                "source word (an RNNencdec, which has no alignment, keeps it); `--keep-unk` counts them as written, "
                "as the paper's Table 1 does."), ""]
    lines += table1(results, PAPER_TABLE1)
    lines += ["", f"chrF on every sentence (sacreBLEU, `{any_r['chrf_signature']}`):", ""] + chrf_table(results)
    lines += ["", "## Figure 2: BLEU by source sentence length", "", "![Figure 2](figure2.png)", ""]
    lines += [f"BLEU by source length ({any_r['length_unit']}), with the number of sentences:", ""]
    lines += length_table(results)
    if aligner is None:
        lines += ["", "## Figure 3: alignments", "", "None: no model here has attention (all are RNNencdec)."]
    else:
        lines += ["", f"## Figure 3: alignments of {aligner}", ""]
        for text, output, path in figures3:
            lines += [f"- {text}", f"  -> {output}", "", f"![alignment]({path.name})", ""]
    lines += ["", "## Long sentences", ""] + long_lines
    if curves:
        lines += ["", "## Training curves", "", "![curves](curves.png)"]
    return lines


def _html(lines: list[str], out: Path) -> str:
    """The Markdown as simple HTML (tables, headings, paragraphs), images embedded as data URIs."""
    body, rows = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            if "---" not in line:
                rows.append("".join(f"<td>{html.escape(c.strip())}</td>" for c in line.strip().strip("|").split("|")))
            continue
        if rows:
            body.append("<table>" + "".join(f"<tr>{r}</tr>" for r in rows) + "</table>")
            rows = []
        image = re.fullmatch(r"!\[(.*)\]\((.+)\)", line.strip())
        if image:
            data = base64.b64encode((out / image[2]).read_bytes()).decode()
            body.append(f'<img alt="{html.escape(image[1])}" src="data:image/png;base64,{data}">')
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.strip():
            body.append(f"<p>{html.escape(line)}</p>")
    style = "body{font-family:sans-serif;max-width:60em;margin:auto}td{border:1px solid #ccc;padding:2px 6px}"
    return (f"<!doctype html><meta charset='utf-8'><title>Translation report</title><style>{style}</style>\n"
            + "\n".join(body) + "\n")
