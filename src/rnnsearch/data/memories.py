"""Translation memories and bilingual files as a training corpus (``rnnsearch data import``): TMX,
XLIFF (1.2, 2.x) and PO read by translate-toolkit, written as ``{train,dev,test}.{src,tgt}`` files
that ``rnnsearch train --init`` and ``rnnsearch prepare`` read (``data.dir``).

A unit becomes a pair where it has a source and a translation (a PO translation marked fuzzy, an
XLIFF target marked for review or a TMX unit without the target language are left out unless
``fuzzy``); the languages are the file's (TMX's ``srclang`` and its other ``xml:lang``; XLIFF's
``source-language`` and ``target-language``; PO's ``Language`` header, its source English unless
the header ``X-Source-Language`` says otherwise), or those given. Inline markup (XLIFF's elements,
tags a TMX or PO writes as text) is taken out, its text kept, as the markup path gives the model plain
text (``keep_tags``: kept as written). Units are split in the file's order: the last ``test`` for the
test split, the ``dev`` before them for validation, the rest for training; each pair on one line (a
line break in a unit becomes a space), the same pair twice kept once.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.data.io import DataError

SUFFIXES = (".tmx", ".xliff", ".xlf", ".po")


@dataclass
class Memory:
    pairs: list[tuple[str, str]]
    src_lang: str
    tgt_lang: str
    left_out: Counter = field(default_factory=Counter)  # reason -> units


def read_memory(path: str | Path, src_lang: str | None = None, tgt_lang: str | None = None,
                fuzzy: bool = False, keep_tags: bool = False) -> Memory:
    """The pairs of a TMX, XLIFF or PO file, with its languages (a DataError naming the file where it
    cannot be read or says no language and none is given)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(f"{path}: data import reads {', '.join(SUFFIXES)} files")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    from translate.storage import factory
    try:
        store = factory.getobject(str(path))
    except Exception as exc:  # the library's own complaint, in one line
        raise DataError(f"{path}: translate-toolkit cannot read it ({type(exc).__name__}: "
                        f"{(str(exc).splitlines() or ['no detail'])[0]})") from None
    src, tgt = _languages(store, path, src_lang, tgt_lang)
    memory, seen = Memory([], src, tgt), set()
    for unit in store.units:
        pair, why = _pair(unit, path.suffix.lower(), tgt, fuzzy, keep_tags)
        if why:
            memory.left_out[why] += 1
        elif pair is None:  # a header
            continue
        elif pair in seen:
            memory.left_out["the same pair again"] += 1
        else:
            seen.add(pair)
            memory.pairs.append(pair)
    return memory


def _languages(store, path: Path, src: str | None, tgt: str | None) -> tuple[str, str]:
    found_src, found_tgt = store.getsourcelanguage(), store.gettargetlanguage()
    if path.suffix.lower() == ".tmx" and not found_tgt:
        others = {lang for u in store.units for lang in _tmx_languages(u)} - {found_src}
        found_tgt = next(iter(others)) if len(others) == 1 else None
    if path.suffix.lower() == ".po" and not found_src:
        found_src = store.parseheader().get("X-Source-Language", "en") if hasattr(store, "parseheader") else "en"
    src, tgt = src or found_src, tgt or found_tgt
    for side, lang, flag in (("source", src, "--src-lang"), ("target", tgt, "--tgt-lang")):
        if not lang:
            raise DataError(f"{path}: the file does not say its {side} language: give it ({flag} xx)")
    return _short(src), _short(tgt)


def _tmx_languages(unit) -> list[str]:
    return [n.get("{http://www.w3.org/XML/1998/namespace}lang") or n.get("lang") or "" for n in unit.getlanguageNodes()]


def _short(lang: str) -> str:
    """``fr-CA``, ``fr_CA`` -> ``fr``: the language the models and tokenisers know."""
    return re.split(r"[-_]", lang.strip())[0].lower()


def _pair(unit, kind: str, tgt: str, fuzzy: bool, keep_tags: bool) -> tuple[tuple[str, str] | None, str | None]:
    if unit.isheader() or (hasattr(unit, "isobsolete") and unit.isobsolete()):
        return None, None
    source, target = str(unit.source or ""), str(unit.target or "")
    if kind == ".tmx" and tgt not in {_short(x) for x in _tmx_languages(unit)}:
        return None, f"no {tgt} translation"
    if not source.strip() or not target.strip():
        return None, "no source or no translation"
    if not fuzzy and (unit.isfuzzy() or (kind != ".tmx" and not unit.istranslated())):
        return None, "fuzzy or not translated (--fuzzy takes them)"
    one = [" ".join(t.split()) for t in (source, target)]
    if not keep_tags:
        one = [_untagged(t) for t in one]
    return ((one[0], one[1]), None) if all(one) else (None, "no text once its tags are out")


TAG = re.compile(r"</?[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>")


def _untagged(text: str) -> str:
    """``text`` without its tags, read as XML where it is (entities unescaped), else the tags alone taken out."""
    from lxml import etree
    try:
        root = etree.fromstring(f"<r>{text}</r>")
        plain = "".join(root.itertext())
    except etree.XMLSyntaxError:
        plain = html.unescape(TAG.sub("", text)) if TAG.search(text) else text
    return " ".join(plain.split())


def write_corpus(memory: Memory, out: str | Path, dev: int = 0, test: int = 0) -> dict[str, int]:
    """The splits' files under ``out`` (``{split}.{lang}``; written whole, each), and each split's pairs."""
    from rnnsearch.files import write_whole
    n = len(memory.pairs)
    if dev + test >= n:
        raise DataError(f"{n} pairs: too few for --dev {dev} and --test {test} and a training split")
    cuts = {"train": (0, n - dev - test), "dev": (n - dev - test, n - test), "test": (n - test, n)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, (a, b) in cuts.items():
        if b <= a:
            continue
        for k, lang in enumerate((memory.src_lang, memory.tgt_lang)):
            write_whole(out / f"{split}.{lang}", "".join(p[k] + "\n" for p in memory.pairs[a:b]))
        counts[split] = b - a
    return counts
