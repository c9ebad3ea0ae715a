"""Checkpoints: written atomically (temporary file, fsync, rename), loaded with clear errors.

A release may store its matrices in int8 (``pack_int8``): each row of a 2-D weight as int8 with
one float32 scale (symmetric, the row's largest magnitude maps to 127), under ``model_int8``
beside the other weights under ``model``. A release or a snapshot stores its bfloat16 weights in two
byte planes (``pack_bf16``), under ``model_bf16``: the high bytes (sign, exponent and the first
bit of the mantissa: few distinct values) deflated with zlib, the low bytes (the mantissa's other
seven bits, as good as random) as they are; lossless, about 70% of bf16's bytes. ``load`` turns
both back into weights under ``model`` (int8 into float32, bf16 planes into bf16), so every reader
of a checkpoint sees one kind of state dict. Files without either key load as they always did.

Each vocabulary (``src_codec`` and ``tgt_codec``'s ``itos``) is stored as one string, its units
one a line, under ``itos_lines``: torch's safe (weights-only) unpickler reads a list of 60,000
strings in 0.25 s, a quarter of a translator's start-up beside torch's import, and one string in
no time. ``load`` gives the list back; files with the list load as they always did."""
from __future__ import annotations

import math
import os
import tempfile
import zlib
from pathlib import Path

import torch

from rnnsearch.errors import UserError, existing_file

FORMAT = "rnnsearch-checkpoint"
VERSION = 1
INT8 = "model_int8"
BF16 = "model_bf16"
CODECS = ("src_codec", "tgt_codec")


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be written or read, with the reason."""


def _umask() -> int:
    """The process's umask (read by setting it: there is no other way), left as it was."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def save(path: str | Path, payload: dict) -> None:
    """Write ``payload`` to ``path`` so that ``path`` is always either the old or the new file."""
    path = Path(path)
    payload = {"format": FORMAT, "version": VERSION, **payload}
    for key in CODECS:
        if isinstance(payload.get(key), dict) and "itos" in payload[key]:
            payload[key] = _join_units(payload[key], key, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot write checkpoint: {exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(payload, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as open() makes a file (mkstemp's 0600: a service's user could not read it)
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise CheckpointError(f"{path}: cannot write checkpoint: {exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path, map_location="cpu") -> dict:
    path = existing_file(path, CheckpointError, "checkpoint", f"a checkpoint file (e.g. {path}/best.pt)")
    try:
        # mapped, not read: what a reader does not touch (a training checkpoint's Adam moments, when
        # it translates) is never read from disk (1.76 s against 0.51 s for a 327 MB last.pt)
        payload = torch.load(path, map_location=map_location, weights_only=True, mmap=True)
    except Exception as exc:  # torch raises RuntimeError, EOFError, UnpicklingError, ...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated or corrupt?): {reason}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not an rnnsearch checkpoint")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {payload.get('version')} is not supported "
                              f"(this rnnsearch reads version {VERSION})")
    for key in ("config", "src_codec", "tgt_codec", "model"):
        if key not in payload:
            raise CheckpointError(f"{path}: checkpoint lacks {key!r}")
    for key in CODECS:
        if isinstance(payload[key], dict) and "itos_lines" in payload[key]:
            payload[key] = _split_units(payload[key], key, path)
    if INT8 in payload:
        payload["model"] = {**payload["model"], **unpack_int8(payload.pop(INT8), path)}
    if BF16 in payload:
        payload["model"] = {**payload["model"], **unpack_bf16(payload.pop(BF16), path)}
    return payload


def _join_units(codec: dict, key: str, path: Path) -> dict:
    """The codec state with its vocabulary as one string (``itos_lines``) instead of a list."""
    units = codec["itos"]
    broken = next((u for u in units if not isinstance(u, str) or "\n" in u), None)
    if broken is not None:
        raise CheckpointError(f"{path}: {key} vocabulary unit {broken!r} is not a string without a line break")
    return {**{k: v for k, v in codec.items() if k != "itos"}, "itos_lines": "\n".join(units)}


def _split_units(codec: dict, key: str, path: str | Path) -> dict:
    """``_join_units`` undone."""
    text = codec["itos_lines"]
    if not isinstance(text, str):
        raise CheckpointError(f"{path}: {key}.itos_lines is not a string")
    return {**{k: v for k, v in codec.items() if k != "itos_lines"}, "itos": text.split("\n")}


def pack_int8(state: dict) -> tuple[dict, dict]:
    """(the tensors kept as they are, {name: {"q": int8 (rows, cols), "scale": float32 (rows,)}}
    for every floating 2-D tensor): q = round(w / scale), scale = max_j |w_ij| / 127 per row i."""
    kept, packed = {}, {}
    for name, w in state.items():
        if not (w.is_floating_point() and w.dim() == 2):
            kept[name] = w
            continue
        q, scale = quantize_rows(w)
        packed[name] = {"q": q, "scale": scale}
    return kept, packed


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(q int8 (rows, cols), scale float32 (rows,)) of a matrix: q = round(w / scale), scale =
    max_j |w_ij| / 127 per row i (symmetric). Releases store their matrices so; int8 decoding
    (model/packed.py's Int8Linear) multiplies by them so, which gives a release's own int8 back."""
    w = w.detach().float()
    scale = w.abs().amax(1).clamp_min(torch.finfo(torch.float32).tiny) / 127  # (rows,)
    return torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8), scale  # (rows, cols), (rows,)


def unpack_int8(packed: dict, path: str | Path = "checkpoint") -> dict:
    """float32 weights from ``pack_int8``'s packed ones."""
    out = {}
    for name, entry in packed.items():
        q, scale = (entry.get("q"), entry.get("scale")) if isinstance(entry, dict) else (None, None)
        if not (isinstance(q, torch.Tensor) and q.dtype == torch.int8 and isinstance(scale, torch.Tensor)
                and q.dim() == 2 and scale.shape == q.shape[:1]):
            raise CheckpointError(f"{path}: int8 weight {name!r} is not an int8 matrix with one scale per row")
        out[name] = q.float() * scale.float()[:, None]  # (rows, cols)
    return out


def pack_bf16(state: dict) -> tuple[dict, dict]:
    """(the tensors that are not floating, {"names", "shapes", "high", "low"}): every floating
    tensor rounded to bfloat16 and its 16 bits split in two planes, ``high`` (bits 15-8 of every
    weight of every tensor in turn, deflated by zlib at level 9) and ``low`` (bits 7-0, as they
    are), both uint8 tensors."""
    kept = {k: w for k, w in state.items() if not w.is_floating_point()}
    names = [k for k, w in state.items() if w.is_floating_point()]
    bits = [state[k].detach().to(torch.bfloat16).contiguous().view(torch.int16).reshape(-1).to(torch.int32) & 0xFFFF
            for k in names]
    flat = torch.cat(bits) if bits else torch.zeros(0, dtype=torch.int32)  # (n,) the 16 bits of every weight
    high = bytearray(zlib.compress((flat >> 8).to(torch.uint8).numpy().tobytes(), 9))
    return kept, {"names": names, "shapes": [list(state[k].shape) for k in names],
                  "high": torch.frombuffer(high, dtype=torch.uint8), "low": (flat & 0xFF).to(torch.uint8)}


def unpack_bf16(packed: dict, path: str | Path = "checkpoint") -> dict:
    """bfloat16 weights from ``pack_bf16``'s planes; a CheckpointError for planes that do not add up."""
    names, shapes, high, low = (packed.get(k) for k in ("names", "shapes", "high", "low")) \
        if isinstance(packed, dict) else (None,) * 4
    if not (isinstance(names, list) and isinstance(shapes, list) and len(names) == len(shapes)
            and isinstance(high, torch.Tensor) and high.dtype == torch.uint8
            and isinstance(low, torch.Tensor) and low.dtype == torch.uint8):
        raise CheckpointError(f"{path}: {BF16!r} is not two byte planes with a name and a shape per weight")
    sizes = [math.prod(shape) for shape in shapes]
    try:
        top = torch.frombuffer(bytearray(zlib.decompress(high.numpy().tobytes())), dtype=torch.uint8)
    except zlib.error as exc:
        raise CheckpointError(f"{path}: the bf16 weights' high bytes do not inflate: {exc}") from None
    if not top.numel() == low.numel() == sum(sizes):
        raise CheckpointError(f"{path}: bf16 planes of {top.numel():,} and {low.numel():,} bytes for "
                              f"{sum(sizes):,} weights")
    word = (top.to(torch.int32) << 8) | low.to(torch.int32)  # (n,) 0..65535
    flat = torch.where(word >= 1 << 15, word - (1 << 16), word).to(torch.int16).view(torch.bfloat16)  # (n,)
    return {name: part.reshape(shape).clone() for name, shape, part in zip(names, shapes, flat.split(sizes))}
