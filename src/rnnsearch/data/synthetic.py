"""The built-in demo task: English -> a small "French-like" language from a grammar with
adjective-noun reordering (adjectives follow the noun, in mirrored order) and agreement in
gender and number (determiners, adjectives, verbs). Deterministic for a given seed."""
from __future__ import annotations

import random
from pathlib import Path

# English, French, gender, French plural (None: add "s")
NOUNS = [("dog", "chien", "m", None), ("cat", "chat", "m", None), ("house", "maison", "f", None),
         ("car", "voiture", "f", None), ("woman", "femme", "f", None), ("boy", "garçon", "m", None),
         ("girl", "fille", "f", None), ("table", "table", "f", None), ("book", "livre", "m", None),
         ("flower", "fleur", "f", None), ("horse", "cheval", "m", "chevaux"), ("city", "ville", "f", None),
         ("garden", "jardin", "m", None), ("river", "rivière", "f", None), ("door", "porte", "f", None),
         ("chair", "chaise", "f", None), ("train", "train", "m", None), ("street", "rue", "f", None),
         ("teacher", "professeur", "m", None), ("bicycle", "vélo", "m", None), ("letter", "lettre", "f", None),
         ("mountain", "montagne", "f", None), ("bridge", "pont", "m", None), ("hat", "chapeau", "m", "chapeaux")]
# English, French masculine, French feminine
ADJECTIVES = [("big", "grand", "grande"), ("small", "petit", "petite"), ("red", "rouge", "rouge"),
              ("black", "noir", "noire"), ("white", "blanc", "blanche"), ("green", "vert", "verte"),
              ("blue", "bleu", "bleue"), ("happy", "heureux", "heureuse"), ("pretty", "joli", "jolie"),
              ("young", "jeune", "jeune"), ("strong", "fort", "forte"), ("slow", "lent", "lente"),
              ("quiet", "calme", "calme"), ("old", "vieux", "vieille"), ("proud", "fier", "fière"),
              ("tired", "fatigué", "fatiguée")]
# English singular, English plural, French singular, French plural
VERBS = [("sees", "see", "voit", "voient"), ("likes", "like", "aime", "aiment"),
         ("follows", "follow", "suit", "suivent"), ("watches", "watch", "regarde", "regardent"),
         ("finds", "find", "trouve", "trouvent"), ("takes", "take", "prend", "prennent"),
         ("wants", "want", "veut", "veulent"), ("paints", "paint", "peint", "peignent"),
         ("calls", "call", "appelle", "appellent"), ("carries", "carry", "porte", "portent")]
PREPOSITIONS = [("in", "dans"), ("on", "sur"), ("under", "sous"), ("behind", "derrière"),
                ("with", "avec"), ("without", "sans")]
DETERMINERS = {("the", False): {"m": "le", "f": "la"}, ("the", True): {"m": "les", "f": "les"},
               ("a", False): {"m": "un", "f": "une"}, ("a", True): {"m": "des", "f": "des"}}


def _plural(word: str) -> str:
    return word if word.endswith(("s", "x")) else word + "s"


def _english_plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def _noun_phrase(rng: random.Random, max_adjectives: int) -> tuple[list[str], list[str], bool]:
    en_noun, fr_noun, gender, fr_plural = rng.choice(NOUNS)
    plural = rng.random() < 0.3
    article = rng.choice(["the", "a"])
    adjectives = rng.sample(ADJECTIVES, rng.randint(0, max_adjectives))
    en_det = ("some" if plural else "a") if article == "a" else "the"
    en = [en_det] + [a[0] for a in adjectives] + [_english_plural(en_noun) if plural else en_noun]
    fr_adjs = [a[1] if gender == "m" else a[2] for a in reversed(adjectives)]
    fr_adjs = [_plural(a) for a in fr_adjs] if plural else fr_adjs
    fr_n = (fr_plural or _plural(fr_noun)) if plural else fr_noun
    fr = [DETERMINERS[(article, plural)][gender], fr_n] + fr_adjs
    return en, fr, plural


def sentence_pair(rng: random.Random, max_adjectives: int = 2) -> tuple[str, str]:
    subj_en, subj_fr, plural = _noun_phrase(rng, max_adjectives)
    obj_en, obj_fr, _ = _noun_phrase(rng, max_adjectives)
    verb = rng.choice(VERBS)
    en = subj_en + [verb[1] if plural else verb[0]] + obj_en
    fr = subj_fr + [verb[3] if plural else verb[2]] + obj_fr
    if rng.random() < 0.4:
        prep = rng.choice(PREPOSITIONS)
        pp_en, pp_fr, _ = _noun_phrase(rng, 1)
        en, fr = en + [prep[0]] + pp_en, fr + [prep[1]] + pp_fr
    return _sentence(en), _sentence(fr)


def _sentence(words: list[str]) -> str:
    text = " ".join(words) + "."
    return text[0].upper() + text[1:]


def generate(out_dir: str | Path, n_train: int = 6000, n_dev: int = 300, n_test: int = 300,
             seed: int = 1) -> dict[str, int]:
    """Write {train,dev,test}.{en,fr} with distinct sentences (no test sentence is in train)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    pairs: list[tuple[str, str]] = []
    total = n_train + n_dev + n_test
    attempts = 0
    while len(pairs) < total:
        attempts += 1
        if attempts > 50 * total:
            raise RuntimeError(f"the grammar could not produce {total} distinct sentences")
        en, fr = sentence_pair(rng)
        if en not in seen:
            seen.add(en)
            pairs.append((en, fr))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    splits = {"test": pairs[:n_test], "dev": pairs[n_test:n_test + n_dev], "train": pairs[n_test + n_dev:]}
    for split, rows in splits.items():
        for lang, col in (("en", 0), ("fr", 1)):
            (out / f"{split}.{lang}").write_text("".join(r[col] + "\n" for r in rows), encoding="utf-8")
    return {k: len(v) for k, v in splits.items()}
