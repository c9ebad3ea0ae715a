"""The WPT 2003 English-French gold set's text in the form a model trained on Hansards reads.

The gold set (Mihalcea & Pedersen 2003) writes its sentences normalised for word aligners: the
first word lowercased ("i am getting sick", "order , please ."), and in French every elision
and contraction undone ("je en ai assez", "à le égard de les produits" for "j'en ai assez",
"à l'égard des produits"). A model trained on the natural text has seldom or never read those
forms. These functions give the words back their natural form, each with the indices of the
gold words it stands for, so attention is read on the text the model knows and its links are
put back on the gold set's words: "du" stands for "de le" (both words), "l'" for "le".

The gold set also splits hyphenated words ("peut - être", "Colombie - Britannique", "part -
time"), which Hansards writes whole; given the model's word vocabulary (``known``), "X - Y" is read
"X-Y" where the vocabulary has that word, and left as it is elsewhere (a dash between two words).

A group is ``(word, (index, ...))``: one natural word and the gold words (0-based) it covers.
Every gold word is covered by exactly one group, in order.
"""
from __future__ import annotations

from functools import partial
from collections.abc import Callable

from rnnsearch.errors import UsageError

Group = tuple[str, tuple[int, ...]]

# Words before which French elides "le", "de", "que"...: a vowel or a mute h.
_VOWELS = set("aeiouyàâäéèêëîïôöùûüœæ")
# Common words with an aspirated h, before which nothing is elided ("le haut", "la hausse").
_ASPIRATED_H = {"haut", "haute", "hauts", "hautes", "hausse", "hausses", "hockey", "hasard", "hâte", "huit",
                "huitième", "honte", "hors", "héros", "handicap", "handicapé", "handicapés", "harcèlement",
                "hiérarchie", "hollande", "hongrie", "hameau", "hangar", "hache", "hall", "halte", "hamburger"}
_ELIDED = {"le": "l'", "la": "l'", "de": "d'", "je": "j'", "me": "m'", "te": "t'", "se": "s'", "ne": "n'",
           "que": "qu'", "ce": "c'", "jusque": "jusqu'", "lorsque": "lorsqu'", "puisque": "puisqu'",
           "quoique": "quoiqu'"}
_CONTRACTED = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}


def _elides_before(word: str) -> bool:
    w = word.lower()
    if not w:
        return False
    if w[0] == "h":
        return w not in _ASPIRATED_H
    return w[0] in _VOWELS


def _capitalised(groups: list[Group]) -> list[Group]:
    if not groups:
        return groups
    word, owners = groups[0]
    return [(word[:1].upper() + word[1:], owners)] + groups[1:]


def _hyphens_joined(groups: list[Group], known: Callable[[str], bool] | None) -> list[Group]:
    """"X" "-" "Y" -> "X-Y" (one group covering the three gold words) where ``known`` has "X-Y"
    (as it is or lowercased) and X and Y are gold words each (a contraction such as "du" is not
    part of a hyphenated word); unchanged without ``known``."""
    if known is None:
        return groups
    out, k = [], 0
    while k < len(groups):
        if k + 2 < len(groups) and groups[k + 1][0] == "-" and all(
                len(groups[j][1]) == 1 and any(c.isalnum() for c in groups[j][0]) for j in (k, k + 2)):
            word = f"{groups[k][0]}-{groups[k + 2][0]}"
            if known(word) or known(word.lower()):
                out.append((word, groups[k][1] + groups[k + 1][1] + groups[k + 2][1]))
                k += 3
                continue
        out.append(groups[k])
        k += 1
    return out


def natural_english(words: list[str], known: Callable[[str], bool] | None = None) -> list[Group]:
    """English gold words in natural form: the first word capitalised, "i" written "I"; with
    ``known``, hyphenated words joined."""
    return _capitalised(_hyphens_joined([("I" if w == "i" else w, (k,)) for k, w in enumerate(words)], known))


def natural_french(words: list[str], known: Callable[[str], bool] | None = None) -> list[Group]:
    """French gold words in natural form: "de le" -> "du", "de les" -> "des", "à le" -> "au",
    "à les" -> "aux" (not before an elision: "à le égard" -> "à l'égard"); "le", "la", "de", "je",
    "que"... -> "l'", "d'", "j'", "qu'"... before a vowel or a mute h; "si il(s)" -> "s'il(s)"; the
    first word capitalised; with ``known``, hyphenated words joined. Moses splits an elided word
    from the next ("l'" "égard"), so only contractions and hyphenated words join gold words in one
    model word."""
    out: list[Group] = []
    k = 0
    while k < len(words):
        word, lower = words[k], words[k].lower()
        following = words[k + 1] if k + 1 < len(words) else ""
        after = words[k + 2] if k + 2 < len(words) else ""
        pair = (lower, following)
        if pair in _CONTRACTED and not (following == "le" and _elides_before(after)):
            out.append((_CONTRACTED[pair], (k, k + 1)))
            k += 2
            continue
        if lower in _ELIDED and _elides_before(following):
            out.append((_ELIDED[lower], (k,)))
        elif lower == "si" and following in ("il", "ils"):
            out.append(("s'", (k,)))
        else:
            out.append((word, (k,)))
        k += 1
    return _capitalised(_hyphens_joined(out, known))


def as_written(words: list[str]) -> list[Group]:
    """Each word as it is, covering itself."""
    return [(w, (k,)) for k, w in enumerate(words)]


def known_words(codec) -> Callable[[str], bool] | None:
    """Whether a word is one unit of ``codec``'s word vocabulary; None for a SentencePiece codec,
    whose pieces read any word (there the gold text's hyphens are left as they are)."""
    if codec.mode != "word":
        return None
    return codec.vocab.stoi.__contains__


def natural_forms(src_codec, tgt_codec):
    """The (source, target) natural-form functions of a model's codecs: WPT 2003's English and
    French, in either direction; hyphenated words are joined where the codec's word vocabulary has them."""
    forms = {"en": natural_english, "fr": natural_french}
    if {src_codec.lang, tgt_codec.lang} != {"en", "fr"}:
        raise UsageError(f"natural form: only for WPT 2003 English-French gold text; this model "
                         f"translates {src_codec.lang} -> {tgt_codec.lang}")
    return (partial(forms[src_codec.lang], known=known_words(src_codec)),
            partial(forms[tgt_codec.lang], known=known_words(tgt_codec)))
