"""``rnnsearch average CKPT... --out F``: one checkpoint whose parameters are the mean of several
checkpoints' of one model (e.g. the last saves of a run, ``train.keep_last``). The checkpoints must
share the model, vocabulary and data config and the vocabularies themselves; the first key that
differs is named; checkpoints of different trainings (unrelated parameters) are refused. The result
translates like any checkpoint; it holds no optimiser state, so it is not resumed."""
from __future__ import annotations

from pathlib import Path

from rnnsearch import checkpoint
from rnnsearch.config import first_difference
from rnnsearch.errors import UsageError


def average_checkpoints(paths: list[str], out: str | Path) -> dict:
    if len(paths) < 2:
        raise UsageError("give at least two checkpoints to average")
    payloads = [checkpoint.load(p) for p in paths]
    first = payloads[0]
    for path, payload in zip(paths[1:], payloads[1:]):
        diff = first_difference(first["config"], payload["config"])
        if diff is not None:
            key, a, b = diff
            raise UsageError(f"{path}: {key} is {b!r} but {a!r} in {paths[0]}: only checkpoints of one model average")
        for side in ("src_codec", "tgt_codec"):
            if payload[side] != first[side]:
                raise UsageError(f"{path}: its {side.split('_')[0]} vocabulary differs from {paths[0]}'s")
    _related(paths, payloads)
    model = {}
    for name, tensor in first["model"].items():
        total = sum(p["model"][name].double() for p in payloads)
        model[name] = (total / len(payloads)).to(tensor.dtype)
    averaged = {key: first[key] for key in ("config", "src_codec", "tgt_codec")}
    heads = [p.get("align_head") for p in payloads]
    if all(heads) and all(h["dims"] == heads[0]["dims"] for h in heads):  # a release's alignment head (it was lost:
        averaged["align_head"] = {**heads[0], "state": {  # the mean's output wrote <unk> and placed items otherwise)
            name: (sum(h["state"][name].double() for h in heads) / len(heads)).to(t.dtype)
            for name, t in heads[0]["state"].items()}}
    averaged.update(model=model, train_state=payloads[-1].get("train_state"),
                    meta={**first.get("meta", {}), "averaged_from": [str(p) for p in paths]})
    checkpoint.save(out, averaged)
    return averaged


RELATED = 0.5  # the least cosine between two checkpoints' parameters that average


def _related(paths: list[str], payloads: list[dict]) -> None:
    """A UsageError naming a checkpoint whose parameters are unrelated to the first's: the cosine of the two
    parameter vectors is near 1 for saves of one run (0.96 between updates 8,525 and 10,657 of the subword
    release's run; 0.65 between the tiny test model and its initialisation) and near 0 for two trainings from
    different initialisations (-0.0004 between two initialisations), whose mean translates nothing."""
    def flat(payload: dict):
        import torch
        return torch.cat([t.double().flatten() for t in payload["model"].values() if t.is_floating_point()])
    first = flat(payloads[0])
    for path, payload in zip(paths[1:], payloads[1:]):
        other = flat(payload)
        cosine = float(first @ other / (first.norm() * other.norm()).clamp_min(1e-30))
        if cosine < RELATED:
            raise UsageError(f"{path}: its parameters are unrelated to {paths[0]}'s (cosine {cosine:.2f}; saves of one "
                             "run, or fine-tunings of one model, are near 1): they come from different trainings, "
                             "whose mean translates nothing; average saves of one run")


def describe(paths: list[str]) -> str:
    """What a model card and a report say of parameters averaged over ``paths``."""
    return f"the mean of {len(paths)} checkpoints (`rnnsearch average`): " + ", ".join(f"`{Path(p).name}`" for p in paths)
