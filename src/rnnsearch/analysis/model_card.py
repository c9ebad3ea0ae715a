"""A release's model card (README.md): what it is, its data, compute, scores, alignment head and
limits, written from its manifest (release.json) and checkpoint by ``rnnsearch release`` and each
command that records a measurement into it (``record``)."""
from __future__ import annotations

from pathlib import Path

import yaml

from rnnsearch.config import from_dict
from rnnsearch.decoding.average import describe
from rnnsearch.decoding.pretrained import clone_models


def in_clone(folder: Path | None) -> bool:
    """Whether a release lies in the clone's models/ (None: it does)."""
    return folder is None or Path(folder).resolve().parent == clone_models().resolve()


def use_lines(name: str, src_lang: str, folder: Path | None) -> list[str]:
    """How to use a release: by its name under the clone's models/ (and through torch.hub), else by its folder's
    path (a name resolves only under models/ or a folder of RNNSEARCH_MODELS)."""
    if in_clone(folder):
        return ["## Use", "", "```bash", f"rnnsearch translate models/{name} --input text.{src_lang}", "```", "",
                "```python", "import torch", "from rnnsearch import Translator",
                f"translator = Translator.from_pretrained({name!r})",
                f"torch.hub.load(CLONE, {name!r}, source='local')  # the same, through hubconf.py", "```", ""]
    path = str(Path(folder).resolve())
    return ["## Use", "", f"This release is outside the clone's `models/`: give its folder's path (or put its parent "
            f"folder in `RNNSEARCH_MODELS` and give its name, `{name}`).", "", "```bash",
            f"rnnsearch translate {path} --input text.{src_lang}", "```", "", "```python",
            "from rnnsearch import Translator", f"translator = Translator.from_pretrained({path!r})", "```", ""]


def model_card(m: dict, payload: dict, folder: Path | None = None) -> str:
    """README.md of a release: what it is, its data, recipe, compute and scores, and how to use it (``folder``:
    where it is, None: the clone's models/)."""
    cfg = from_dict(payload["config"])
    s = m.get("train_state") or {}
    src, tgt = payload["src_codec"], payload["tgt_codec"]
    lines = [f"# {m['name']}", "", m["description"] or f"An {m['arch']} model trained with rnnsearch.", "",
             *use_lines(m["name"], cfg.data.src_lang, folder),
             "## Model", "",
             f"- {m['arch']}, {m['parameters']:,} parameters, weights stored in {STORED[m['dtype']]} "
             f"({m['bytes'] / 2**20:.1f} MiB, SHA-256 `{m['sha256']}`)",
             f"- {cfg.data.src_lang} -> {cfg.data.tgt_lang}; vocabularies: {len(src['itos'])} / {len(tgt['itos'])} "
             f"units ({cfg.vocab.mode}, {cfg.data.tokenizer} tokenisation)",
             "", "## Data", "",
             f"- training: `{cfg.data.dir}` split `{cfg.data.train}`, pairs of at most {cfg.data.max_len} units"
             f" ({cfg.data.max_train_pairs or 'all'} pairs read); dev: `{cfg.data.dev}`", "",
             "## Compute", "",
             f"- {s.get('step', 0):,} updates, epoch {s.get('epoch', 0)}, {s.get('tgt_tokens', 0) / 1e6:.1f}M target "
             f"tokens; {s.get('cpu_s', 0) / 3600:.2f} core-hours (CPU time of the training loop), "
             f"{s.get('elapsed_s', 0) / 3600:.2f} wall hours; best dev BLEU {s.get('best_bleu', 0):.2f} "
             f"at update {s.get('best_step', 0):,}", f"- source checkpoint: `{m['source']}`; released {m['created']} "
             f"by rnnsearch {m['rnnsearch']}", *averaged_lines(payload.get("meta") or {}),
             *parent_lines(payload.get("meta") or {}, s), ""]
    lines += test_lines(m.get("test")) + limits_lines(m, cfg, len(src["itos"]))
    handle = f"models/{m['name']}" if in_clone(folder) else str(Path(folder).resolve())
    lines += head_lines(payload.get("align_head"), handle)
    lines += alignment_lines(m.get("alignment") or [], handle)
    lines += ["## Recipe (the resolved config)", "", "```yaml",
              yaml.safe_dump(payload["config"], sort_keys=False).rstrip(), "```", ""]
    return "\n".join(lines)


def averaged_lines(meta: dict) -> list[str]:
    """The card's line on parameters averaged over checkpoints (`rnnsearch average`), if they are."""
    paths = meta.get("averaged_from") or []
    return [f"- parameters: {describe(paths)}"] if paths else []


def parent_lines(meta: dict, state: dict) -> list[str]:
    """The card's line on the model it was started from (`rnnsearch train --init`), if it was, with the
    updates and core-hours of both together (``state``: this run's train_state)."""
    init = meta.get("init")
    if not init:
        return []
    was = f" (update {init['updates']:,}" + (f", {init['core_hours']} core-hours" if init.get("core_hours") else "") + ")"
    total = ""
    if init.get("updates"):
        total = (f"; with it, {init['updates'] + state.get('step', 0):,} updates and "
                 f"{(init.get('core_hours') or 0) + state.get('cpu_s', 0) / 3600:.2f} core-hours in all")
    return [f"- started from `{init['name']}`{was if init.get('updates') else ''} by `rnnsearch train --init`: "
            f"its weights and vocabularies, a new optimiser{total}"]


STORED = {"bfloat16": "bfloat16 (byte planes, the high bytes deflated)",
          "int8": "int8 (matrices, a float32 scale per row; vectors in bfloat16)"}


def test_lines(t: dict | None) -> list[str]:
    if not t:
        return ["## Test", "", "Not measured at release (`rnnsearch release --src F --ref F`).", ""]
    nounk = "-" if t["bleu_no_unk"] is None else f"{t['bleu_no_unk']:.2f}"
    return ["## Test", "", f"`{t['src']}` -> `{t['ref']}` ({t['n']} sentences), beam {t['beam']}, measured "
            "from this release's weights:", "", "| BLEU (All) | BLEU (No UNK) | chrF |", "|---:|---:|---:|",
            f"| {t['bleu']:.2f} | {nounk} ({t['n_no_unk']} sentences) | {t['chrf']:.2f} |", "",
            f"sacreBLEU: `{t['signature']}`; chrF: `{t['chrf_signature']}`. The output is `{t['output']}` "
            f"(`sacrebleu {t['ref']} -i {t['output']}`: the reference's path as `rnnsearch release` was given it, from "
            "the folder it ran in; here, the output beside this card).", ""] + unk_lines(t.get("unk_replaced")) + ([
             f"Parity: the same weights in bfloat16 score {t['parity']['bfloat16_bleu']:.2f} BLEU (tolerance "
             f"{t['parity']['tolerance']}).", ""] if t.get("parity") else [])


def unk_lines(u: dict | None) -> list[str]:
    """The card's line on <unk> replacement, the default output's, and the scores without it."""
    if not u:
        return []
    return [f"The output replaces each `<unk>` the model writes ({u['tokens']:,} of them) by its aligned source "
            f"word (`{u['mode']}`, the default of a release); with each `<unk>` kept as written (`--keep-unk`) "
            f"the same search scores BLEU {u['bleu_keep_unk']:.2f}, chrF {u['chrf_keep_unk']:.2f}.", ""]


def head_lines(entry: dict | None, handle: str) -> list[str]:
    """The model card's section on an alignment head (`rnnsearch train-align-head`), if there is one."""
    if not entry:
        return []
    r, dims = entry.get("record") or {}, entry["dims"]
    held = [x for x in r.get("held_out_ce") or [] if x is not None]
    return ["## Alignment head", "", f"`rnnsearch align {handle} --head` reads word alignments from a head of size "
            f"{dims['att']}" + (f" (a bidirectional GRU of {dims['context']} a direction over its queries: `--context "
                                f"{dims['context']}`)" if dims.get("context") else "") +
            " trained over the frozen model (the translation is the model's alone) on "
            f"{r.get('pairs', 0):,} training pairs with the links of `{r.get('links', '?')}`, {r.get('epochs', 0)} epochs, "
            f"{r.get('cpu_s', 0) / 3600:.2f} core-hours" + (f"; ce per linked target word on {r.get('held_out', 0):,} "
                                                           f"held-out pairs: {held[-1]:.4f}" if held else "") + "." +
            (f" It was trained for the weights of `{r['for_parent']}`, which this model was adapted from (`rnnsearch "
             "train --init`), not for these: `rnnsearch train-align-head` trains one for them." if r.get("for_parent")
             else ""), ""]


def alignment_lines(entries: list[dict], handle: str) -> list[str]:
    """The model card's table of alignments measured against gold links (``record_alignment``)."""
    if not entries:
        return []
    rows = [f"| {'`' + e['flags'] + '`' if e['flags'] else '(none)'} | `{e['pairs']}` | `{e['gold']}` "
            f"({e['sentences']} sentences) | {e['aer']:.4f} | {e['precision']:.4f} | {e['recall']:.4f} | {e['date']} |"
            for e in entries]
    return ["## Alignment quality", "", f"Word alignments read by `rnnsearch align {handle} --pairs PAIRS "
            "--gold GOLD FLAGS` (AER, precision and recall over the corpus, Och & Ney 2003):", "",
            "| FLAGS | PAIRS | GOLD | AER | precision | recall | measured |", "|---|---|---|---:|---:|---:|---|", *rows, ""]


def limits_lines(m: dict, cfg, vocab: int) -> list[str]:
    """The card's "Intended use and limitations": what the model was trained on, what that leaves out,
    and what was measured on other text (``release.record_domain``)."""
    d = cfg.data
    rows = [f"| {e['set']} | {', '.join(f'{k} {v}' for k, v in e['scores'].items())} | `{e['command']}` | {e['date']} |"
            for e in m.get("out_of_domain") or []]
    measured = (["Measured on text unlike the training data, each with its command's defaults (for `rnnsearch "
                 "evaluate`: each `<unk>` replaced by its aligned source word, as `translate` writes; `--keep-unk` "
                 "counts them as written, as the paper's Table 1 does, which on news text, whose names the "
                 "vocabulary lacks, scores lower):", "",
                 "| set | scores | command | measured |", "|---|---|---|---|", *rows, ""] if rows else
                ["Not measured on text unlike the training data (`rnnsearch evaluate models/NAME --src F --ref F "
                 "--record SET`).", ""])
    return ["## Intended use and limitations", "",
            f"Trained only on the `{d.train}` split of `{d.dir}`, single sentences of at most {d.max_len} units: "
            "it translates text of that kind. Far from it (other domains, imperatives and interface labels, "
            "headlines, chat) expect fluent but wrong output; the test score above says nothing about such text.",
            "",
            f"- Vocabulary: {vocab:,} source units ({cfg.vocab.mode}). {carrying(cfg)}",
            "- What still goes wrong, and how often on our own test text: docs/text.md (\"Measured\"): words the "
            "model garbles or drops around carried items, an inline tag on a neighbouring word, a known word "
            "mistranslated in an unfamiliar sense.",
            "- Each translation carries a confidence (its log-probability per unit, its share of `<unk>`: "
            "`translate --json-output`, the API); `--min-confidence` flags those below a threshold (docs/text.md "
            "gives the one chosen on held-out data).", "", *measured]


def carrying(cfg) -> str:
    """The card's sentence on what `rnnsearch translate` carries through slots for this model (text/segments.py)."""
    if cfg.model.arch != "rnnsearch":
        return ("`rnnsearch translate` splits each line into sentences (docs/text.md); without an alignment it "
                "gets no slots: URLs, numbers and names are the model's to write.")
    if cfg.vocab.mode == "word":
        return ("`rnnsearch translate` carries URLs, e-mail addresses, numbers, amounts and names outside it "
                "through slots, verbatim, and splits each line into sentences (docs/text.md); any other word "
                "outside it is copied from the source (`<unk>` replacement) and so stays in the source language.")
    if cfg.data.slot_rate:
        return ("`rnnsearch translate` carries URLs, e-mail addresses, numbers, amounts and labels (`C-45`) "
                "through slots, verbatim (it was trained to copy them: `data.slot_rate`), and splits each line "
                "into sentences (docs/text.md); names and rare words it spells piece by piece.")
    return ("`rnnsearch translate` splits each line into sentences (docs/text.md); it was trained without slots "
            "(`data.slot_rate`), so URLs, numbers and names are spelt piece by piece by the model, not carried.")
