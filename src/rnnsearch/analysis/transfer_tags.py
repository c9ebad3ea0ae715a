"""Tags into a translation the model did not write (``rnnsearch transfer-tags``; Zenkel, Wuebker and
DeNero 2021, "Automatic Bilingual Markup Transfer"): a tagged source and a plain translation of it
(a translator's post-edit) in, the translation with the source's tags placed in it out.

The model reads the pair with teacher forcing (``force_align``) and each element goes around the target
words that best answer to its source words, as ``--markup`` places tags in the model's own output
(``decoding/markup.put_back``: never inside a word, nested as the source nests). The alignment read
(``READINGS``): the alignment head's beta (``head``, the default where the model has one), the attention
(``attention``), the two directions' heads where a reverse model is given (``symmetrised``: beta_ij of
one direction times beta_ji of the other, each row normalised again), or another aligner's links
(``links``: eflomal's, over the tokens of ``tokens``, or over whitespace-separated words through
``word_links``; each target token's links shared). The model's readings also link each target token to
the source tokens written the same (in any case; with a letter or digit: names, numbers, product terms
the vocabulary lacks and reads as <unk>) with the weight ``IDENTICAL``, a row's own weight being 1
(chosen on the Salesforce strings 1001-2000: experiments/transfer_salesforce.py). Each span is also read
as a label's (``decoding/labels.py``: frequent words left out at its edges, a capitalised element
begun at a capitalised word; a term the translation keeps as the source writes it tagged exactly there,
and a term tagged again around the words it went around before; an element that ends a sentence ended
at a full stop; a kept label's bracketed translation taken along; a title-case label's span as many
words long as the label; an element of whole sentences around the translation's sentences paired with
them), and a word written against the next without a space where a capital follows
a small letter (``actionsCharger``, where a source's adjacent elements met) or a full stop
(``données.Les``) is two, a tag between them allowed, as are a file name and the full stop Moses'
tokenizer leaves on it (``error.csv.``). The translation's characters are kept as given; the output is
markup of the source's kind (text escaped: ``&amp; &lt; &gt;``).
"""
from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from rnnsearch.analysis.force_align import force_align
from rnnsearch.data.tokenize import SPACE_PIECE
from rnnsearch.decoding.markup import put_back
from rnnsearch.decoding.labels import Labels, sentence_numbers
from rnnsearch.decoding.placement import APOSTROPHES, token_spans, word_edges
from rnnsearch.errors import UsageError
from rnnsearch.text import blocks
from rnnsearch.text.documents import read

READINGS = ("head", "attention", "symmetrised", "links")
IDENTICAL = 1.0
GLUE = ".:;!?"  # a capital after one of these and a small letter begins a sentence glued on (``données.Les``)
FILE_STOP = re.compile(r"[^.]*[a-z][^.]*\.\w+\.")  # ``insertAccounts_error.csv.``: the name and the stop apart
FREQUENT = 30  # a vocabulary's most frequent words, read as light at a label's edge


@dataclass
class Pair:
    """A tagged source and its translation, read: the source's plain text, its elements, and both sides'
    tokens (what the tags are placed between); ``error``: why its tags cannot be placed."""
    translation: str
    plain: str = ""
    elements: list | None = None
    src_tokens: list[str] | None = None
    tgt_tokens: list[str] | None = None
    error: str | None = None
    joins: tuple[int, ...] = ()  # target boundaries inside a written word where a capital follows a small letter
    labels: Labels | None = None
    page: object = None  # blocks.Page: what the source holds around its unit (an HTML block's own tags)


@dataclass
class Transfer:
    """A translation with the source's tags placed in it (``error``: not placed; the translation escaped, untagged)."""
    text: str
    error: str | None = None


def tokens(codec, text: str) -> tuple[list[str], tuple[int, ...]]:
    """The tokens tags are placed between: the words of the model's tokenizer (Moses' for a word model and
    for a SentencePiece one alike, whose pieces are read within each word: whitespace words would keep a
    full stop or a URL's path on its word, ``escompté.``), each cut where a capital follows a small letter;
    and the boundaries those cuts made. A typographic apostrophe is read as the straight one
    (``d’Analytics`` as ``d'`` ``Analytics``, as ``d'Analytics``); dashes stay (``Criteria—Specify`` is two
    words, ``Criteria-Specify`` one)."""
    out, joins = [], []
    text = text.translate(APOSTROPHES)
    for word in codec.words(text):
        cuts = [i for i in range(1, len(word)) if word[i].isupper() and (word[i - 1].islower() or (
            i > 1 and word[i - 1] in GLUE and word[i - 2].islower()))]
        if FILE_STOP.fullmatch(word):  # a file name before a full stop, which Moses' tokenizer keeps on it
            cuts.append(len(word) - 1)
        cuts = sorted(set(cuts))
        for a, b in zip([0] + cuts, cuts + [len(word)]):
            if a:
                joins.append(len(out))
            out.append(word[a:b])
    return out, tuple(joins)


def word_links(pair: Pair, links: set) -> set:
    """Links (source word, target word) over whitespace-separated words (the source without its tags, the
    translation), as another aligner gives them, as links between the tokens inside those words."""
    if pair.error:
        return set()
    words = (len(pair.plain.split()), len(pair.translation.split()))
    outside = next(((s, t) for s, t in sorted(links) if s >= words[0] or t >= words[1]), None)
    if outside is not None:
        raise UsageError(f"link {outside[0]}-{outside[1]} is outside its pair ({words[0]} source words without "
                         f"the tags, {words[1]} target words; 0-based)")

    def owners(text: str, toks: list[str]) -> list[int]:  # each token's word
        starts = [m.start() for m in re.finditer(r"\S+", text)]
        return [max(bisect.bisect_right(starts, a) - 1, 0) for a, _ in token_spans(text, toks)]
    src, tgt = owners(pair.plain, pair.src_tokens or []), owners(pair.translation, pair.tgt_tokens or [])
    return {(i, j) for s, t in links for i, w in enumerate(src) if w == s for j, v in enumerate(tgt) if v == t}


def _light(codec) -> set[str]:
    return {u.replace(SPACE_PIECE, "") for u in codec.vocab.itos[4:4 + FREQUENT]}  # after <pad> <unk> <s> </s>


def _labels(translator, src: list[str], tgt: list[str], plain: str, translation: str) -> Labels:
    src_light, tgt_light = _light(translator.src_codec), _light(translator.tgt_codec)
    return Labels([t in src_light for t in src], [t in tgt_light for t in tgt], [t[:1].isupper() for t in src],
                  [t[:1].isupper() for t in tgt], src, tgt, sentence_numbers(plain, token_spans(plain, src)),
                  sentence_numbers(translation, token_spans(translation, tgt)))


def read_pairs(translator, sources: list[str], translations: list[str], mode: str = "xml") -> list[Pair]:
    """Each (tagged source, plain translation) read; a source not well-formed, or of several HTML blocks
    (each block is placed on its own: give each a line), has its ``error``."""
    if len(sources) != len(translations):
        raise UsageError(f"{len(sources)} sources and {len(translations)} translations: give one translation a source")
    pairs = []
    for source, translation in zip(sources, translations):
        m = read(source, mode)
        if m.error or len(m.units) > 1:
            pairs.append(Pair(translation, error=m.error or (
                f"it has {len(m.units)} HTML blocks (p, li, br, ...): give each block and its translation a line "
                "of their own, or read the line as XML (--markup xml), which places block tags as it places others")))
            continue
        unit = m.units[0] if m.units else None
        plain, elements = (unit.plain, _for_given_text(unit.elements)) if unit else ("", [])
        if elements and plain.strip() and not translation.strip():
            pairs.append(Pair(translation, error="its translation is empty: give the line's translation"))
            continue
        (src, _), (tgt, joins) = tokens(translator.src_codec, plain), tokens(translator.tgt_codec, translation)
        labels = _labels(translator, src, tgt, plain, translation)
        pairs.append(Pair(translation, plain, elements, src, tgt, joins=joins, labels=labels,
                          page=m.page if m.units else None))
    return pairs


def soft_alignments(translator, pairs: list[Pair], reading: str = "head", reverse=None,
                    links: list[set] | None = None) -> list[np.ndarray | None]:
    """Each pair's alignment (target tokens, source tokens) as ``reading`` reads it (None: a pair in error,
    or one without tags or words to place them by); ``links``: each pair's (source, target) token links."""
    if reading not in READINGS:
        raise UsageError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    if reading == "symmetrised" and reverse is None:
        raise UsageError("the symmetrised reading needs the reverse model (--reverse-model)")
    if (reading == "links") != (links is not None):
        raise UsageError("the links reading places tags by given links (--links FILE), and only it does")
    todo = [n for n, p in enumerate(pairs) if not p.error and p.elements and p.src_tokens and p.tgt_tokens]
    out: list[np.ndarray | None] = [None] * len(pairs)
    if reading == "links":
        for n in todo:
            out[n] = _shared(links[n], pairs[n]) if links[n] else None
        return out
    todo.sort(key=lambda n: (len(pairs[n].src_tokens), len(pairs[n].tgt_tokens)))  # batches of like lengths
    texts = [(" ".join(pairs[n].src_tokens), " ".join(pairs[n].tgt_tokens)) for n in todo]
    if not todo:
        return out
    found = [a.soft for a in force_align(translator, texts, reading=_available(translator, reading))]
    if reading == "symmetrised":
        backward = force_align(reverse, [(t, s) for s, t in texts], reading=_available(reverse, "head"))
        found = [_rows(f * b.soft.T) for f, b in zip(found, backward)]
    for n, soft in zip(todo, found):
        out[n] = _rows(soft + IDENTICAL * _identical(pairs[n]))  # (T, S)
    return out


def _rows(soft: np.ndarray) -> np.ndarray:
    return soft / np.maximum(soft.sum(1, keepdims=True), 1e-9)


def _identical(p: Pair) -> np.ndarray:
    """(T, S): 1 where a target token is written as a source token (any case), with a letter or digit."""
    src = np.array([t.lower() if any(c.isalnum() for c in t) else "\0" for t in p.src_tokens])
    tgt = np.array([t.lower() if any(c.isalnum() for c in t) else "\1" for t in p.tgt_tokens])
    return (tgt[:, None] == src[None, :]).astype(float)


def _shared(links: set, p: Pair) -> np.ndarray:
    """Links (source, target) as rows (T, S), each target token's links shared equally."""
    soft = np.zeros((len(p.tgt_tokens), len(p.src_tokens)))
    for s, t in links:
        if s >= len(p.src_tokens) or t >= len(p.tgt_tokens):
            raise UsageError(f"link {s}-{t} is outside its pair ({len(p.src_tokens)} source tokens, "
                             f"{len(p.tgt_tokens)} target tokens: links are over rnnsearch's tokens, 0-based)")
        soft[t, s] = 1
    return _rows(soft)


def _available(translator, reading: str) -> str:
    reading = "attention" if reading == "attention" else "head"
    if reading == "head" and getattr(translator, "align_head", None) is None:
        raise UsageError("this model has no alignment head: read its attention (--reading attention), or train "
                         "one with `rnnsearch train-align-head`")
    return reading


def place_tags(pairs: list[Pair], softs: list[np.ndarray | None]) -> list[Transfer]:
    """Each pair's translation with its source's elements placed through its alignment."""
    out = []
    for p, soft in zip(pairs, softs):
        if p.error:
            out.append(Transfer(html.escape(p.translation, quote=False), p.error))
            continue
        words = p.tgt_tokens or []
        soft = soft if soft is not None else np.zeros((len(words), len(p.src_tokens or [])))
        translation = SimpleNamespace(tokens=words, text=p.translation)
        edges = word_edges(words, p.translation)
        edges[:, list(p.joins)] = True
        text = put_back(p.plain, p.elements or [], p.src_tokens or [], translation, soft, labels=p.labels, edges=edges)
        out.append(Transfer(blocks.write(p.page, [text]) if p.page is not None else text))
    return out


def transfer_tags(translator, sources: list[str], translations: list[str], mode: str = "xml",
                  reading: str | None = None, reverse=None, links: list[set] | None = None,
                  links_over: str = "tokens") -> list[Transfer]:
    """The source's tags placed in each translation (``reading``: one of READINGS; None: ``links`` where
    they are given, ``symmetrised`` with a reverse model, else ``head`` where the model has one, else
    ``attention``); ``links_over``: "tokens" (those of ``tokens``) or "words" (whitespace-separated)."""
    if reading is None:
        reading = "links" if links is not None else "symmetrised" if reverse is not None else (
            "head" if getattr(translator, "align_head", None) is not None else "attention")
    _same_pair(translator, reverse)
    pairs = read_pairs(translator, sources, translations, mode)
    if links is not None and len(links) != len(pairs):
        raise UsageError(f"{len(links)} line{'s' * (len(links) != 1)} of links for {len(pairs)} pairs: give each "
                         "pair its line")
    if links is not None and links_over == "words":
        links = [_numbered(n, word_links, p, w) for n, (p, w) in enumerate(zip(pairs, links), 1)]
    for p, given in zip(pairs, links or []):
        if not given and not p.error and p.elements and p.src_tokens and p.tgt_tokens:
            p.error = "no links to place its tags by"
    return place_tags(pairs, soft_alignments(translator, pairs, reading, reverse, links))


def _numbered(line: int, read, *args):
    """``read(*args)``, its UsageError naming the pair's line."""
    try:
        return read(*args)
    except UsageError as exc:
        raise UsageError(f"line {line}: {exc}") from None


def _same_pair(translator, reverse) -> None:
    """The reverse model translates the other way (a model of the same direction is refused)."""
    if reverse is None:
        return
    ours, theirs = translator.config.data, reverse.config.data
    if (theirs.src_lang, theirs.tgt_lang) != (ours.tgt_lang, ours.src_lang):
        raise UsageError(f"the reverse model translates {theirs.src_lang}->{theirs.tgt_lang}, the model "
                         f"{ours.src_lang}->{ours.tgt_lang}: give a {ours.tgt_lang}->{ours.src_lang} model as the reverse")


def _for_given_text(elements: list) -> list:
    """A source's elements as they go into a translation given whole: its entities (``&copy;``, ``&nbsp;``)
    left out (the translation writes its own characters and spaces) and no space added around a tag of no
    words (the translation's spacing is its own)."""
    kept = [e for e in elements if not (e.name == "#" and e.start_tag.startswith("&"))]
    for e in kept:
        e.spaced = e.spaced_before = False
        e.children = _for_given_text(e.children)
    return kept
