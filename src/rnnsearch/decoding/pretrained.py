"""Released models: finding one by name, path or URL (``Translator.from_pretrained``, hubconf.py).

A release is a folder that ``rnnsearch release`` writes (analysis/release.py):

    models/NAME/
      release.json   name, format version, the weights' file, dtype, size and SHA-256, test BLEU
      model.pt       the checkpoint without optimiser state, weights in bf16 (or matrices in int8 with a
                     scale per row): config, vocabularies, training state (what
                     Translator.from_checkpoint reads)
      log.jsonl      the training log
      README.md      the model card: data, recipe, compute, test BLEU with its sacreBLEU signature

A name is looked up in the folders of ``RNNSEARCH_MODELS`` (separated by ``os.pathsep``), then in
``models/`` of the source tree rnnsearch runs from (a clone), then in ``./models``. A URL
(http, https, file) names a release archive (.tar.gz) or a checkpoint file; it is downloaded once
into ``$RNNSEARCH_CACHE`` (default ``~/.cache/rnnsearch``), checked against a ``#sha256=HEX``
fragment when the URL has one, and read from there.
"""
from __future__ import annotations

import json
import os
import re
import tarfile
from pathlib import Path
from urllib.parse import urlparse

from rnnsearch.errors import UserError

RELEASE_FILE = "release.json"
FORMAT = "rnnsearch-release"
VERSION = 1
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ReleaseError(UserError, ValueError):
    """A release that cannot be found or read."""


def is_release(path: str | Path) -> bool:
    return Path(path).is_dir() and (Path(path) / RELEASE_FILE).is_file()


def release_name(path: str | Path) -> str | None:
    """The name of the release that ``path`` (a release folder, or its weights file) is, else None."""
    path = Path(path)
    for folder in (path, path.parent):
        if is_release(folder):
            return folder.name
    return None


def read_manifest(folder: str | Path) -> dict:
    """release.json of a release folder, checked for its format and version."""
    path = Path(folder) / RELEASE_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseError(f"{path}: not a readable release manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ReleaseError(f"{path}: not an rnnsearch release manifest")
    if manifest.get("version") != VERSION:
        raise ReleaseError(f"{path}: release format version {manifest.get('version')} is not supported "
                           f"(this rnnsearch reads version {VERSION})")
    return manifest


def weights_path(path: str | Path) -> Path:
    """The checkpoint file to load for ``path``: a release folder's weights, else ``path`` itself."""
    path = Path(path)
    if is_release(path):
        return path / read_manifest(path)["weights"]
    return path


def clone_models() -> Path:
    """The clone's models/ folder (src/rnnsearch/decoding -> the clone)."""
    return Path(__file__).resolve().parents[3] / "models"


def search_dirs() -> list[Path]:
    """Where names are looked up, in order (see the module docstring)."""
    dirs = [Path(p) for p in os.environ.get("RNNSEARCH_MODELS", "").split(os.pathsep) if p]
    found = []
    for folder in dirs + [clone_models(), Path.cwd() / "models"]:  # each once (in the clone, ./models is its models/)
        if not any(folder.resolve() == seen.resolve() for seen in found):
            found.append(folder)
    return found


def available(dirs: list[Path] | None = None) -> list[str]:
    """The names of the releases found in ``dirs`` (default: :func:`search_dirs`)."""
    names = []
    for folder in dirs if dirs is not None else search_dirs():
        if folder.is_dir():
            names += [p.name for p in sorted(folder.iterdir()) if is_release(p) and p.name not in names]
    return names


def resolve(spec: str | Path) -> Path:
    """The checkpoint file for a release name, a path (release folder or checkpoint) or a URL."""
    text = str(spec)
    if urlparse(text).scheme in ("http", "https", "file"):
        return weights_path(fetch(text))
    if Path(text).exists() or not NAME.match(text) or text.endswith(".pt"):
        return weights_path(text)  # a path; a missing one fails in checkpoint.load, naming it
    for folder in search_dirs():
        if is_release(folder / text):
            return weights_path(folder / text)
    names = available()
    close = next((n for n in names if n.lower() == text.replace("-", "_").lower()), None)
    if close:
        raise ReleaseError(f"{text}: no released model of that name; did you mean {close}? (release names write _, "
                           "not -, so that they are also torch.hub entries)")
    where = ", ".join(str(d) for d in search_dirs())
    raise ReleaseError(f"{text}: no released model of that name in {where} (found: {', '.join(names) or 'none'}); "
                       "give a path, a URL, or set RNNSEARCH_MODELS")


def cache_dir() -> Path:
    return Path(os.environ.get("RNNSEARCH_CACHE", Path.home() / ".cache" / "rnnsearch"))


def fetch(url: str) -> Path:
    """Download ``url`` once into the cache (whole or absent), verify its ``#sha256=``, unpack an archive."""
    from torch.hub import download_url_to_file
    parsed = urlparse(url)
    digest = dict(part.split("=", 1) for part in parsed.fragment.split("&") if "=" in part).get("sha256")
    name = Path(parsed.path).name or "download"
    target = cache_dir() / (digest[:16] + "-" + name if digest else name)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            download_url_to_file(url.split("#")[0], str(target), hash_prefix=digest, progress=False)
        except (OSError, RuntimeError, ValueError) as exc:  # network errors, a wrong hash
            raise ReleaseError(f"{url}: cannot download: {exc}") from None
    if name.endswith((".tar.gz", ".tgz")):
        return unpack(target)
    return target


def unpack(archive: Path) -> Path:
    """A release archive unpacked beside it (once): the folder that holds release.json."""
    folder = archive.with_name(archive.name.split(".t")[0])
    if not folder.exists():
        tmp = folder.with_name(folder.name + ".partial")
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
        except (OSError, tarfile.TarError) as exc:
            raise ReleaseError(f"{archive}: not a readable release archive: {exc}") from None
        tmp.rename(folder)
    found = [p.parent for p in folder.rglob(RELEASE_FILE)]
    if len(found) != 1:
        raise ReleaseError(f"{archive}: expected one release (a {RELEASE_FILE}) in the archive, found {len(found)}")
    return found[0]
