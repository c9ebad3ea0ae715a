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

from rnnsearch import __version__, checkpoint
from rnnsearch.analysis.evaluate import evaluate
from rnnsearch.analysis.model_card import model_card
from rnnsearch.data.io import read_parallel
from rnnsearch.decoding import pretrained, unk
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
        (tmp / "README.md").write_text(model_card(manifest, payload, out), encoding="utf-8")
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
        (tmp / "README.md").write_text(model_card(manifest, payload, folder), encoding="utf-8")
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


def record_alignment(folder: str | Path, entry: dict) -> dict:
    """Add a measured alignment (``rnnsearch align --gold --record``: the gold file, the reading's
    flags, AER, precision, recall) to a release's manifest and model card; an entry of the same gold
    file and flags replaces the earlier one. The weights are not touched. Returns the manifest."""
    return _record(folder, "alignment", entry, ("gold", "flags"), "--record")


def record_domain(folder: str | Path, entry: dict) -> dict:
    """Add a measurement on text unlike the training data (``rnnsearch evaluate --record SET``,
    experiments/text_salesforce.py ``--record``: the set, its scores by name, the command that printed
    them) to a release's manifest and its card's "Intended use and limitations"; an entry of the same
    set and command replaces the earlier one. Returns the manifest."""
    return _record(folder, "out_of_domain", entry, ("set", "command"), "--record")


def _record(folder: str | Path, key: str, entry: dict, same: tuple[str, ...], flag: str) -> dict:
    """``entry`` into the list ``key`` of a release's manifest (replacing one equal on ``same``), and
    the card written again; each file whole: the old or the new. The weights are not touched."""
    folder = Path(folder)
    if not pretrained.is_release(folder):
        raise UsageError(f"{folder}: not a release folder (no {pretrained.RELEASE_FILE}): {flag} writes into a "
                         "release's model card")
    manifest = pretrained.read_manifest(folder)
    kept = [e for e in manifest.get(key) or [] if tuple(e[k] for k in same) != tuple(entry[k] for k in same)]
    manifest[key] = kept + [entry]
    card = model_card(manifest, checkpoint.load(folder / manifest["weights"]), folder)
    for name, text in (("README.md", card), (pretrained.RELEASE_FILE, json.dumps(manifest, indent=1) + "\n")):
        tmp = folder / f".{name}.partial"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / name)
    return manifest
