"""Translation memories and bilingual files as a training corpus (``rnnsearch data import``): TMX,
XLIFF (1.2, 2.x) and PO read by translate-toolkit, written as ``{train,dev,test}.{lang}`` files
that ``rnnsearch train --init`` and ``rnnsearch prepare`` read (``data.dir``).

A unit becomes a pair where it has a source and a translation (a PO translation marked fuzzy, an
XLIFF target whose state is not translated, reviewed, final or signed-off (or, without a state, marked
``approved="no"``) are left out unless ``fuzzy``); the languages are the file's (TMX's ``srclang`` and
its other ``xml:lang``, the segments of each language read by their ``xml:lang``, so that a memory of
several languages gives the pair asked for; XLIFF's ``source-language`` and ``target-language``
(2.x: ``srcLang``, ``trgLang``); PO's ``Language`` header, its source English), or those given where
the file names none: a language given against the file's is refused. Inline markup (XLIFF's and TMX's
elements, tags a TMX or PO writes as text) is taken out, its text kept, as the markup path gives the model
plain text; a code of its own between two words (``<x/>``, ``<ph>``, ``<br/>``) leaves a space, and a code's
native markup (``<bpt>&lt;b&gt;</bpt>``) is no text (``keep_tags``: the tags kept, a code's native markup where
it holds one, else the element by its local name). Units are split in the file's order: the last ``test`` for the
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
from rnnsearch.data.tags import html_tags

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
    cannot be read, says no language and none is given, or says another than the one given)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(f"{path}: data import reads {', '.join(SUFFIXES)} files")
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    store = _store(path)
    kind = "tmx" if path.suffix.lower() == ".tmx" else "po" if path.suffix.lower() == ".po" else "xliff"
    src, tgt = _languages(store, path, kind, src_lang, tgt_lang)
    memory, seen = Memory([], src, tgt), set()
    for unit in store.units:
        pair, why = _pair(unit, kind, src, tgt, fuzzy, keep_tags)
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


def _store(path: Path):
    """The file read by translate-toolkit (XLIFF 2.x by its own reader)."""
    from translate.storage import factory, xliff2
    try:
        data = path.read_bytes()
        if path.suffix.lower() in (".xliff", ".xlf") and re.search(rb"<xliff[^>]*version=[\"']2", data[:2000]):
            return xliff2.Xliff2File.parsestring(data)
        return factory.getobject(str(path))
    except Exception as exc:  # the library's own complaint, in one line
        raise DataError(f"{path}: translate-toolkit cannot read it ({type(exc).__name__}: "
                        f"{(str(exc).splitlines() or ['no detail'])[0]})") from None


def _languages(store, path: Path, kind: str, src: str | None, tgt: str | None) -> tuple[str, str]:
    stated = [x if x and x != "*all*" else None for x in (store.getsourcelanguage(), store.gettargetlanguage())]
    if kind == "tmx":  # the languages of its segments: the flags choose among them
        held = sorted({_short(lang) for u in store.units for lang in _tmx_languages(u) if lang})
        stated[0] = stated[0] if stated[0] and _short(stated[0]) in held else None
        others = [x for x in held if not stated[0] or x != _short(stated[0])]
        stated[1] = others[0] if len(others) == 1 else None
        for lang, flag in ((src, "--src-lang"), (tgt, "--tgt-lang")):
            if lang and _short(lang) not in held:
                raise DataError(f"{path}: no {lang} segment in it (it holds {', '.join(held) or 'none'}): give "
                                f"{flag} one of those")
    elif kind == "po" and not stated[0]:
        stated[0] = "en"  # gettext's msgids
    for given, found, flag in ((src, stated[0], "--src-lang"), (tgt, stated[1], "--tgt-lang")):
        if kind != "tmx" and given and found and _short(given) != _short(found):
            raise DataError(f"{path}: the file says {found}, not {given}: leave {flag} out")
    src, tgt = src or stated[0], tgt or stated[1]
    for side, lang, flag in (("source", src, "--src-lang"), ("target", tgt, "--tgt-lang")):
        if not lang and kind == "tmx" and len(held) > 2:
            raise DataError(f"{path}: it holds {', '.join(held)}: give the {side} language ({flag} one of those)")
        if not lang:
            raise DataError(f"{path}: the file does not say its {side} language: give it ({flag} xx)")
    if _short(src) == _short(tgt):
        raise DataError(f"{path}: source and target are both {_short(src)}: give --src-lang and --tgt-lang")
    return _short(src), _short(tgt)


def _tmx_languages(unit) -> list[str]:
    return [n.get("{http://www.w3.org/XML/1998/namespace}lang") or n.get("lang") or "" for n in unit.getlanguageNodes()]


def _short(lang: str) -> str:
    """``fr-CA``, ``fr_CA`` -> ``fr``: the language the models and tokenisers know."""
    return re.split(r"[-_]", lang.strip())[0].lower()


REVIEWED = {"translated", "final", "signed-off", "reviewed"}  # XLIFF target (1.2) and segment (2.x) states


def _texts(unit, kind: str, src: str, tgt: str) -> tuple:
    """A unit's source and target (a PO's strings; a TMX segment's or XLIFF source's and target's elements, or
    None), and whether its translation is reviewed (not fuzzy, not marked for translation or review)."""
    if kind == "tmx":
        by_lang = {_short(lang): node for lang, node in zip(_tmx_languages(unit), unit.getlanguageNodes())}
        return *(by_lang[lang].find("{*}seg") if lang in by_lang else None for lang in (src, tgt)), True
    if kind == "po":
        return str(unit.source or ""), str(unit.target or ""), unit.istranslated() and not unit.isfuzzy()
    element = unit.xmlelement
    source, target = element.find("{*}source"), element.find("{*}target")
    states = [n.get("state") for n in [target, element] if n is not None and n.get("state")]
    states += [n.get("state") for n in element.iter("{*}segment") if n.get("state")]
    if states:
        return source, target, all(state in REVIEWED for state in states)
    return source, target, element.get("approved") != "no"


def _pair(unit, kind: str, src: str, tgt: str, fuzzy: bool, keep_tags: bool):
    """(source, target) of a unit, or None and why it is left out (None, None: a header)."""
    if unit.isheader() or (hasattr(unit, "isobsolete") and unit.isobsolete()):
        return None, None
    *texts, reviewed = _texts(unit, kind, src, tgt)
    raw = [_plain(t) if t is not None and not isinstance(t, str) else t or "" for t in texts]
    if not all(t.strip() for t in raw):
        return None, f"no {src} or no {tgt} text"
    if not fuzzy and not reviewed:
        return None, "fuzzy or not reviewed (--fuzzy takes them)"
    if keep_tags:
        one = [" ".join((t if isinstance(t, str) else _kept(t)).split()) for t in texts]
    else:
        one = [_untagged(t) for t in raw]  # tags a file writes as text (a TMX's <uicontrol>) out too
    return ((one[0], one[1]), None) if all(one) else (None, "no text once its tags are out")


TAG = re.compile(r"</?[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>")
BETWEEN = re.compile(r"(?<=\w)(?:<[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/>|<br\s*>)(?=\w)")  # Click<br/>Save: two words
NATIVE = {"bpt", "ept", "ph", "it", "ut"}  # TMX's and XLIFF 1.2's elements whose content is the original's code
STANDALONE = {"x", "ph", "it", "ut"}       # a code of its own (a line break, a variable): between two words, a space
HOLE = "\x00"


def _local(element) -> str:
    return element.tag.split("}")[-1] if isinstance(element.tag, str) else ""


def _plain(element) -> str:
    """A segment's text: its codes out (a standalone one between two words leaves a space: ``The file<x/>is
    saved`` was imported ``The fileis saved``), the text of elements around words (``<g>``, ``<hi>``) kept."""
    def walk(node) -> str:
        out = [node.text or ""]
        for child in node:
            name = _local(child)
            out.append(HOLE if name in STANDALONE else "" if name in NATIVE else walk(child))
            out.append(child.tail or "")
        return "".join(out)
    return re.sub(rf"(?<=\w){HOLE}+(?=\w)", " ", walk(element)).replace(HOLE, "")


def _kept(element) -> str:
    """A segment with its tags as the markup path reads them: a code's native markup where it holds one (``<b>``),
    else the element by its local name (``<g id="1">``, ``<x id="1"/>``); text as written (tags a file writes as
    text kept as they are)."""
    out = [element.text or ""]
    for child in element:
        name, code = _local(child), "".join(child.itertext())
        attrs = "".join(f' {k.split("}")[-1]}="{html.escape(v)}"' for k, v in child.attrib.items())
        if name in NATIVE and code:
            out.append(code)
        elif len(child) or child.text:
            out.append(f"<{name}{attrs}>{_kept(child)}</{name}>")
        else:
            out.append(f"<{name}{attrs}/>")
        out.append(child.tail or "")
    return "".join(out)


def _untagged(text: str) -> str:
    """``text`` without its tags, read as XML where it is (entities unescaped), else HTML's tags taken out (``x<y
    and a>b`` lost ``<y and a>``); a self-closing tag between two words leaves a space (``Click<br/>Save``)."""
    from lxml import etree
    text = BETWEEN.sub(" ", text)
    try:
        root = etree.fromstring(f"<r>{text}</r>")
        plain = "".join(root.itertext())
    except etree.XMLSyntaxError:  # HTML's tags out; brackets that are no markup (x<y and a>b) kept
        plain = html.unescape(TAG.sub("", text)) if html_tags(text) else text
    return " ".join(plain.split())


def write_corpus(memory: Memory, out: str | Path, dev: int = 0, test: int = 0) -> dict[str, int]:
    """The splits' files under ``out`` (``{split}.{lang}``; written whole, each), and each split's pairs."""
    from rnnsearch.files import write_whole
    n = len(memory.pairs)
    if dev < 0 or test < 0:
        raise DataError(f"--dev {dev} --test {test}: give counts of 0 or more")
    if dev + test >= n:
        left = "; ".join(f"{k} left out: {why}" for why, k in memory.left_out.items())
        raise DataError(f"{n} pairs: too few for --dev {dev} and --test {test} and a training split"
                        + (f" ({left})" if left else ""))
    cuts = {"train": (0, n - dev - test), "dev": (n - dev - test, n - test), "test": (n - test, n)}
    out = Path(out)
    written = {f"{split}.{lang}" for split, (a, b) in cuts.items() if b > a for lang in (memory.src_lang, memory.tgt_lang)}
    stale = sorted(f.name for split in cuts for f in out.glob(f"{split}.*") if f.name not in written) if out.is_dir() else []
    if stale:
        raise DataError(f"{out} holds {', '.join(stale)}, which this import would not write (an earlier corpus's): "
                        "give an empty folder, or remove them")
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, (a, b) in cuts.items():
        if b <= a:
            continue
        for k, lang in enumerate((memory.src_lang, memory.tgt_lang)):
            write_whole(out / f"{split}.{lang}", "".join(p[k] + "\n" for p in memory.pairs[a:b]))
        counts[split] = b - a
    return counts
