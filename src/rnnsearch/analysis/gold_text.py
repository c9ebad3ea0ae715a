"""The WPT 2003 English-French gold set's text in the form a model trained on Hansards reads.

The gold set (Mihalcea & Pedersen 2003) writes its sentences normalised for word aligners: the
first word lowercased ("i am getting sick", "order , please ."), and in French every elision
and contraction undone ("je en ai assez", "à le égard de les produits" for "j'en ai assez",
"à l'égard des produits"). A model trained on the natural text has seldom or never read those
forms. These functions give the words back their natural form, each with the indices of the
gold words it stands for, so attention is read on the text the model knows and its links are
put back on the gold set's words: "du" stands for "de le" (both words), "l'" for "le".

A group is ``(word, (index, ...))``: one natural word and the gold words (0-based) it covers.
Every gold word is covered by exactly one group, in order.
"""
from __future__ import annotations

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


def natural_english(words: list[str]) -> list[Group]:
    """English gold words in natural form: the first word capitalised, "i" written "I"."""
    return _capitalised([("I" if w == "i" else w, (k,)) for k, w in enumerate(words)])


def natural_french(words: list[str]) -> list[Group]:
    """French gold words in natural form: "de le" -> "du", "de les" -> "des", "à le" -> "au",
    "à les" -> "aux" (not before an elision: "à le égard" -> "à l'égard"); "le", "la", "de", "je",
    "que"... -> "l'", "d'", "j'", "qu'"... before a vowel or a mute h; "si il(s)" -> "s'il(s)"; the
    first word capitalised. Moses splits an elided word from the next ("l'" "égard"), so only
    contractions join two gold words in one model word."""
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
    return _capitalised(out)


def as_written(words: list[str]) -> list[Group]:
    """Each word as it is, covering itself."""
    return [(w, (k,)) for k, w in enumerate(words)]


def natural_forms(src_lang: str, tgt_lang: str):
    """The (source, target) natural-form functions of a model's languages: WPT 2003's English ->
    French only."""
    if (src_lang, tgt_lang) != ("en", "fr"):
        raise UsageError(f"natural form: only for WPT 2003 English -> French gold text; this model "
                         f"translates {src_lang} -> {tgt_lang}")
    return natural_english, natural_french
