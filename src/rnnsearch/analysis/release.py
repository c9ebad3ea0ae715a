"""``rnnsearch release``: a trained checkpoint as a model that ships (decoding/pretrained.py says
what a release folder holds and how it is found).

The weights are stored in bfloat16 (half the bytes, and about 70% of that as byte planes with
the high bytes deflated: ``checkpoint.pack_bf16``; decoding loads them into float32 or bf16 as
asked), without the optimiser's state; or, with ``dtype="int8"``, every matrix in int8 with a scale
per row (a quarter of the bytes; ``checkpoint.pack_int8``), vectors in bf16, where parity holds:
the test BLEU of the int8 weights must be within ``parity`` of the bf16 weights', both measured.
With a test set, the test BLEU is measured from the release's own file, so the model card's number
is what ``rnnsearch evaluate models/NAME`` prints. The folder is written under a temporary name and
renamed: whole or absent.
"""
from __future__ import annotations

import datetime
import json
import os
import shutil
from pathlib import Path

import yaml

from rnnsearch import __version__, checkpoint
from rnnsearch.analysis.evaluate import evaluate
from rnnsearch.config import from_dict
from rnnsearch.data.io import read_parallel
from rnnsearch.decoding import pretrained, unk
from rnnsearch.decoding.average import describe
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.translator import Translator
from rnnsearch.errors import UsageError
from rnnsearch.files import sha256, whole_or_absent

WEIGHTS = "model.pt"
# what a translation needs, the record, and an alignment head (float32: small, and read beside the model)
KEEP = ("config", "src_codec", "tgt_codec", "train_state", "align_head", "meta")


DTYPES = ("bfloat16", "int8")


def slim_payload(payload: dict, dtype: str = "bfloat16") -> dict:
    """The checkpoint without optimiser, scheduler and RNG state, floating weights in bf16 stored as
    byte planes (``checkpoint.pack_bf16``); with ``dtype="int8"`` the matrices packed in int8
    (``checkpoint.pack_int8``), the other floating weights in bf16 planes."""
    model, packed = checkpoint.pack_int8(payload["model"]) if dtype == "int8" else (payload["model"], None)
    model, planes = checkpoint.pack_bf16(model)
    slim = {**{k: payload[k] for k in KEEP if k in payload}, "model": model, checkpoint.BF16: planes}
    return {**slim, checkpoint.INT8: packed} if packed is not None else slim


def make_release(ckpt: str | Path, out: str | Path, test: tuple[str, str] | None = None, beam: int | None = None,
                 description: str = "", force: bool = False, log=print, dtype: str = "bfloat16",
                 parity: float = 0.1) -> dict:
    """Write the release folder ``out`` from ``ckpt``; returns its manifest."""
    if dtype not in DTYPES:
        raise UsageError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    if dtype == "int8" and not test:
        raise UsageError("an int8 release needs a test set (--src, --ref): its BLEU is checked against bf16's")
    out = Path(out)
    name = out.name
    if not pretrained.NAME.match(name):
        raise UsageError(f"--out {out}: a release's folder name is its name: letters, digits, '.', '_', '-'")
    if out.exists() and not force:
        raise UsageError(f"{out}: exists; choose another name or pass --force to replace it")
    payload = checkpoint.load(ckpt)
    with whole_or_absent(out) as tmp:
        checkpoint.save(tmp / WEIGHTS, slim_payload(payload, dtype))
        logfile = Path(ckpt).parent / "log.jsonl"
        if logfile.is_file():
            shutil.copyfile(logfile, tmp / "log.jsonl")
        scores = measure(tmp / WEIGHTS, test, beam, tmp, log) if test else None
        if dtype == "int8":
            scores["parity"] = check_parity(payload, scores["bleu"], test, beam, tmp, parity, log)
        manifest = manifest_of(name, tmp, payload, ckpt, scores, description, dtype)
        (tmp / pretrained.RELEASE_FILE).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(model_card(manifest, payload), encoding="utf-8")
    log(f"released {ckpt} as {out} ({manifest['bytes'] / 2**20:.1f} MiB"
        + (f"; test BLEU {scores['bleu']:.2f}" if scores else "") + ")")
    return manifest


def measure(weights: Path, test: tuple[str, str], beam: int | None, folder: Path, log) -> dict:
    """BLEU, No-UNK BLEU and chrF of the released weights on ``test``, as the release translates by default
    (<unk> replaced where it can be: the scores as written beside); the output goes beside them."""
    srcs, refs = read_parallel(*test)
    translator = Translator.from_checkpoint(weights)
    unk.release_default(translator, folder)  # the folder is not yet a release while it is being made
    log(f"translating {len(srcs)} test sentences with the released weights")
    result = evaluate(translator, srcs, refs, SearchSettings(beam=beam))
    hyps = result.pop("hypotheses")
    hyp_name = f"test.hyp.{translator.tgt_codec.lang}"
    (folder / hyp_name).write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    keep = ("bleu", "signature", "bleu_no_unk", "n_no_unk", "n", "chrf", "chrf_signature", "beam", "unk_replaced")
    return {**{k: result[k] for k in keep if k in result}, "src": str(test[0]), "ref": str(test[1]),
            "output": hyp_name}


def measure_release(folder: str | Path, test: tuple[str, str], beam: int | None = None, log=print) -> dict:
    """Measure a release on ``test`` again, in place (``rnnsearch release NAME --measure``): its test
    output, the scores in release.json and the card; the weights and everything else untouched."""
    folder = Path(folder)
    if not pretrained.is_release(folder):
        raise UsageError(f"{folder}: not a release folder (release.json): --measure measures a release again")
    manifest = pretrained.read_manifest(folder)
    payload = checkpoint.load(folder / manifest["weights"])
    with whole_or_absent(folder) as tmp:
        for item in folder.iterdir():
            if item.is_file() and item.name != (manifest.get("test") or {}).get("output"):
                shutil.copy2(item, tmp / item.name)
        scores = measure(tmp / manifest["weights"], test, beam, tmp, log)
        if (manifest.get("test") or {}).get("parity"):
            scores["parity"] = manifest["test"]["parity"]  # int8 against bf16, as measured at release
        manifest = {**manifest, "test": scores, "measured": datetime.date.today().isoformat()}
        (tmp / pretrained.RELEASE_FILE).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(model_card(manifest, payload), encoding="utf-8")
    log(f"measured {folder} again: test BLEU {scores['bleu']:.2f}")
    return manifest


def check_parity(payload: dict, bleu: float, test: tuple[str, str], beam: int | None, folder: Path,
                 tolerance: float, log) -> dict:
    """The bf16 weights' test BLEU beside the int8 weights' ``bleu``; an error past ``tolerance``."""
    side = folder / "bf16"
    side.mkdir()
    checkpoint.save(side / WEIGHTS, slim_payload(payload, "bfloat16"))
    log("the same test with the bf16 weights, for parity")
    reference = measure(side / WEIGHTS, test, beam, side, log)["bleu"]
    shutil.rmtree(side)
    if abs(bleu - reference) > tolerance:
        raise UsageError(f"int8 weights score {bleu:.2f} BLEU on {test[0]} against {reference:.2f} in bf16, "
                         f"more than the parity tolerance of {tolerance}: release in bf16 (no --dtype int8)")
    return {"bfloat16_bleu": reference, "tolerance": tolerance}


def manifest_of(name: str, folder: Path, payload: dict, ckpt, scores: dict | None, description: str,
                dtype: str = "bfloat16") -> dict:
    weights = folder / WEIGHTS
    params = sum(v.numel() for v in payload["model"].values() if v.is_floating_point())
    return {"format": pretrained.FORMAT, "version": pretrained.VERSION, "name": name, "description": description,
            "weights": WEIGHTS, "dtype": dtype, "bytes": weights.stat().st_size, "sha256": sha256(weights),
            "parameters": params, "arch": payload["config"]["model"]["arch"], "source": str(ckpt),
            "created": datetime.date.today().isoformat(), "rnnsearch": __version__,
            "train_state": payload.get("train_state"), "test": scores}


def model_card(m: dict, payload: dict) -> str:
    """README.md of a release: what it is, its data, recipe, compute and scores, and how to use it."""
    cfg = from_dict(payload["config"])
    s = m.get("train_state") or {}
    src, tgt = payload["src_codec"], payload["tgt_codec"]
    lines = [f"# {m['name']}", "", m["description"] or f"An {m['arch']} model trained with rnnsearch.", "",
             "## Use", "", "```bash", f"rnnsearch translate models/{m['name']} --input text.{cfg.data.src_lang}",
             "```", "", "```python", "import torch", "from rnnsearch import Translator",
             f"translator = Translator.from_pretrained({m['name']!r})",
             f"torch.hub.load(CLONE, {m['name']!r}, source='local')  # the same, through hubconf.py", "```", "",
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
             *parent_lines(payload.get("meta") or {}), ""]
    lines += test_lines(m.get("test")) + head_lines(payload.get("align_head"), m["name"])
    lines += alignment_lines(m.get("alignment") or [], m["name"])
    lines += ["## Recipe (the resolved config)", "", "```yaml",
              yaml.safe_dump(payload["config"], sort_keys=False).rstrip(), "```", ""]
    return "\n".join(lines)


def averaged_lines(meta: dict) -> list[str]:
    """The card's line on parameters averaged over checkpoints (`rnnsearch average`), if they are."""
    paths = meta.get("averaged_from") or []
    return [f"- parameters: {describe(paths)}"] if paths else []


def parent_lines(meta: dict) -> list[str]:
    """The card's line on the model it was adapted from (`rnnsearch train --init`), if it was."""
    init = meta.get("init")
    if not init:
        return []
    was = f" (update {init['updates']:,}" + (f", {init['core_hours']} core-hours" if init.get("core_hours") else "") + ")"
    return [f"- adapted from `{init['name']}`{was if init.get('updates') else ''} by `rnnsearch train --init`, "
            f"which started from its weights and vocabularies"]


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
            f"(`sacrebleu {t['ref']} -i {t['output']}`).", ""] + unk_lines(t.get("unk_replaced")) + ([
             f"Parity: the same weights in bfloat16 score {t['parity']['bfloat16_bleu']:.2f} BLEU (tolerance "
             f"{t['parity']['tolerance']}).", ""] if t.get("parity") else [])


def unk_lines(u: dict | None) -> list[str]:
    """The card's line on <unk> replacement, the default output's, and the scores without it."""
    if not u:
        return []
    return [f"The output replaces each `<unk>` the model writes ({u['tokens']:,} of them) by its aligned source "
            f"word (`{u['mode']}`, the default of a release); with each `<unk>` kept as written (`--keep-unk`) "
            f"the same search scores BLEU {u['bleu_keep_unk']:.2f}, chrF {u['chrf_keep_unk']:.2f}.", ""]


def head_lines(entry: dict | None, name: str) -> list[str]:
    """The model card's section on an alignment head (`rnnsearch train-align-head`), if there is one."""
    if not entry:
        return []
    r, dims = entry.get("record") or {}, entry["dims"]
    held = [x for x in r.get("held_out_ce") or [] if x is not None]
    return ["## Alignment head", "", f"`rnnsearch align models/{name} --head` reads word alignments from a head of size "
            f"{dims['att']}" + (f" (a bidirectional GRU of {dims['context']} a direction over its queries: `--context "
                                f"{dims['context']}`)" if dims.get("context") else "") +
            " trained over the frozen model (the translation is the model's alone) on "
            f"{r.get('pairs', 0):,} training pairs with the links of `{r.get('links', '?')}`, {r.get('epochs', 0)} epochs, "
            f"{r.get('cpu_s', 0) / 3600:.2f} core-hours" + (f"; ce per linked target word on {r.get('held_out', 0):,} "
                                                           f"held-out pairs: {held[-1]:.4f}" if held else "") + ".", ""]


def record_alignment(folder: str | Path, entry: dict) -> dict:
    """Add a measured alignment (``rnnsearch align --gold --record``: the gold file, the reading's
    flags, AER, precision, recall) to a release's manifest and model card; an entry of the same gold
    file and flags replaces the earlier one. The weights are not touched. Returns the manifest."""
    folder = Path(folder)
    if not pretrained.is_release(folder):
        raise UsageError(f"{folder}: not a release folder (no {pretrained.RELEASE_FILE}): --record writes into a "
                         "release's model card")
    manifest = pretrained.read_manifest(folder)
    kept = [e for e in manifest.get("alignment") or [] if (e["gold"], e["flags"]) != (entry["gold"], entry["flags"])]
    manifest["alignment"] = kept + [entry]
    card = model_card(manifest, checkpoint.load(folder / manifest["weights"]))
    for name, text in (("README.md", card), (pretrained.RELEASE_FILE, json.dumps(manifest, indent=1) + "\n")):
        tmp = folder / f".{name}.partial"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / name)  # each file whole: the old or the new
    return manifest


def alignment_lines(entries: list[dict], name: str) -> list[str]:
    """The model card's table of alignments measured against gold links (``record_alignment``)."""
    if not entries:
        return []
    rows = [f"| {'`' + e['flags'] + '`' if e['flags'] else '(none)'} | `{e['pairs']}` | `{e['gold']}` "
            f"({e['sentences']} sentences) | {e['aer']:.4f} | {e['precision']:.4f} | {e['recall']:.4f} | {e['date']} |"
            for e in entries]
    return ["## Alignment quality", "", f"Word alignments read by `rnnsearch align models/{name} --pairs PAIRS "
            "--gold GOLD FLAGS` (AER, precision and recall over the corpus, Och & Ney 2003):", "",
            "| FLAGS | PAIRS | GOLD | AER | precision | recall | measured |", "|---|---|---|---:|---:|---:|---|", *rows, ""]
