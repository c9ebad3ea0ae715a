"""``rnnsearch data multi30k|wmt14 --out DIR``: download public corpora from their official
addresses and write ``{split}.{lang}`` plain-text files (the layout ``data.dir`` expects)."""
from __future__ import annotations

import gzip
import html
import re
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path
from typing import Callable
from rnnsearch.errors import UsageError
from rnnsearch.data.io import DataError

MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}.gz"
MULTI30K_SPLITS = {"train": "train", "val": "val", "test_2016_flickr": "test_2016_flickr"}
WMT14_DEV_URL = "https://www.statmt.org/wmt14/dev.tgz"
WMT14_TEST_URL = "https://www.statmt.org/wmt14/test-full.tgz"

Fetch = Callable[[str, Path], None]
_SEG = re.compile(r"<seg[^>]*>(.*?)</seg>", re.IGNORECASE | re.DOTALL)


def download(url: str, dest: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(dest, "wb") as fh:
            shutil.copyfileobj(response, fh)
    except OSError as exc:
        raise OSError(f"cannot download {url}: {exc}") from None


def parse_sgm(text: str) -> list[str]:
    """The segments of a WMT SGML file, in order, entities unescaped."""
    return [" ".join(html.unescape(seg).split()) for seg in _SEG.findall(text)]


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return f"{path}: {len(lines)} lines"


def prepare_multi30k(out: Path, fetch: Fetch = download, langs=("en", "fr", "de")) -> list[str]:
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        for split, name in MULTI30K_SPLITS.items():
            for lang in langs:
                gz = Path(tmp) / f"{name}.{lang}.gz"
                fetch(MULTI30K_URL.format(name=f"{name}.{lang}"), gz)
                lines = gzip.decompress(gz.read_bytes()).decode("utf-8").splitlines()
                report.append(_write(out / f"{split}.{lang}", [line.strip() for line in lines]))
    return report


def _sgm_member(tar: tarfile.TarFile, test_set: str, lang: str) -> str:
    for member in tar.getnames():
        base = member.rsplit("/", 1)[-1]
        if base.startswith(test_set) and base.endswith(f".{lang}.sgm") and ("-src." in base or "-ref." in base):
            return tar.extractfile(member).read().decode("utf-8")
    raise DataError(f"{test_set}.{lang}: not found in the archive")


def prepare_wmt14(out: Path, fetch: Fetch = download, pair=("en", "fr")) -> list[str]:
    """newstest2012 and newstest2013 (the paper's dev set) and newstest2014 (its test set)."""
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        for url, sets in ((WMT14_DEV_URL, ("newstest2012", "newstest2013")), (WMT14_TEST_URL, ("newstest2014",))):
            archive = Path(tmp) / url.rsplit("/", 1)[-1]
            fetch(url, archive)
            with tarfile.open(archive) as tar:
                for test_set in sets:
                    sides = {lang: parse_sgm(_sgm_member(tar, test_set, lang)) for lang in pair}
                    if len(set(map(len, sides.values()))) != 1:
                        raise DataError(f"{test_set}: sides differ in length {[len(v) for v in sides.values()]}")
                    report += [_write(out / f"{test_set}.{lang}", lines) for lang, lines in sides.items()]
    return report


def prepare(corpus: str, out: str | Path, fetch: Fetch = download) -> list[str]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if corpus == "multi30k":
        return prepare_multi30k(out, fetch)
    if corpus == "wmt14":
        return prepare_wmt14(out, fetch)
    raise UsageError(f"unknown corpus {corpus!r} (multi30k, wmt14)")
