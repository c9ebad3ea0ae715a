"""Word alignments: Pharaoh files, the WPT 2003 gold format, and the alignment error rate.

Pharaoh (what fast_align and eflomal write): one line per sentence pair, links ``i-j`` with
0-based indices, source word first. WPT 2003 gold (Mihalcea & Pedersen 2003): links ``i-j``
(sure) and ``ipj`` (possible), 1-based, English first; every sure link is also possible.

AER (Och & Ney 2003), with A the predicted links, S the sure and P the possible gold links,
counts summed over the corpus: precision |A & P| / |A|, recall |A & S| / |S|,
AER = 1 - (|A & S| + |A & P|) / (|A| + |S|). When a denominator is zero (no predicted link,
no sure link) precision or recall is 1 and AER is 0: nothing was claimed or required.
"""
from __future__ import annotations

import re
from pathlib import Path

from rnnsearch.data.guided import parse_pharaoh
from rnnsearch.data.io import DataError, read_lines

Links = set[tuple[int, int]]
_WPT = re.compile(r"^(\d+)([-p])(\d+)$")


def read_pharaoh(path: str | Path, reverse: bool = False) -> list[Links]:
    """One set of (source, target) links per line; ``reverse`` reads target-first files."""
    out = []
    for number, line in enumerate(read_lines(path), start=1):
        links = parse_pharaoh(line, f"{path}:{number}")
        out.append({(j, i) for i, j in links} if reverse else links)
    return out


def format_pharaoh(links: Links) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def read_wpt_gold(path: str | Path) -> list[tuple[Links, Links]]:
    """(sure, possible) links per line, 0-based (English, French); possible includes sure."""
    out = []
    for number, line in enumerate(read_lines(path), start=1):
        sure, possible = set(), set()
        for token in line.split():
            m = _WPT.match(token)
            if not m or int(m[1]) < 1 or int(m[3]) < 1:
                raise DataError(f"{path}:{number}: {token!r} is not a WPT link (1-based i-j or ipj)")
            link = (int(m[1]) - 1, int(m[3]) - 1)
            possible.add(link)
            if m[2] == "-":
                sure.add(link)
        out.append((sure, possible))
    return out


def alignment_error_rate(predicted: list[Links], gold: list[tuple[Links, Links]]) -> dict:
    """Corpus-level precision, recall and AER (fractions), with the link counts."""
    if len(predicted) != len(gold):
        raise DataError(f"{len(predicted)} predicted alignments for {len(gold)} gold ones: "
                        "one line per sentence pair on both sides")
    a = s = a_and_s = a_and_p = 0
    for links, (sure, possible) in zip(predicted, gold):
        possible = possible | sure
        a, s = a + len(links), s + len(sure)
        a_and_s += len(links & sure)
        a_and_p += len(links & possible)
    return {"aer": 1.0 - (a_and_s + a_and_p) / (a + s) if a + s else 0.0,
            "precision": a_and_p / a if a else 1.0, "recall": a_and_s / s if s else 1.0,
            "sentences": len(gold), "predicted_links": a, "sure_links": s}


SYMMETRIZATIONS = ("intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
NEIGHBOURS = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def symmetrize(forward: Links, reverse: Links, method: str = "grow-diag-final-and") -> Links:
    """Koehn et al.'s (2003) symmetrisation of two directional alignments, both as (source, target)
    links (a reverse model's links flipped): the intersection, the union, or, from the
    intersection, "grow-diag" (add neighbouring union links, diagonals included, that align a so
    far unaligned word, until none is added), then "final" (add union links of each direction
    that align an unaligned word) or "final-and" (only where both words are unaligned)."""
    if method not in SYMMETRIZATIONS:
        raise ValueError(f"symmetrisation {method!r}: expected one of {', '.join(SYMMETRIZATIONS)}")
    union, links = forward | reverse, set(forward & reverse)
    if method in ("intersection", "union"):
        return links if method == "intersection" else union
    grew = True
    while grew:
        grew = False
        for s, t in sorted(links):
            for ds, dt in NEIGHBOURS:
                cand = (s + ds, t + dt)
                if cand in union and cand not in links and (
                        all(a[0] != cand[0] for a in links) or all(a[1] != cand[1] for a in links)):
                    links.add(cand)
                    grew = True
    if method == "grow-diag":
        return links
    both = method == "grow-diag-final-and"
    for direction in (forward, reverse):
        for s, t in sorted(direction):
            free_s, free_t = all(a[0] != s for a in links), all(a[1] != t for a in links)
            if (free_s and free_t) if both else (free_s or free_t):
                links.add((s, t))
    return links


def grow_diag_final_and(forward: Links, reverse: Links) -> Links:
    """:func:`symmetrize` with grow-diag-final-and (what eflomal's and fast_align's users run)."""
    return symmetrize(forward, reverse, "grow-diag-final-and")


def link_misses(predicted: list[Links], gold: list[tuple[Links, Links]],
                target_words: list[list[str]]) -> dict:
    """Where predicted links miss the possible gold links, summed over the corpus: each missed
    link (s, t) counted by its distance |s - s'| to the nearest gold source word s' of target
    word t (1, 2, or "3+"), or as "unaligned" where the gold links t to nothing; and per target
    word, its links and its missed links."""
    misses = {"links": 0, "missed": 0, 1: 0, 2: 0, "3+": 0, "unaligned": 0}
    by_word: dict[str, list[int]] = {}
    for links, (sure, possible), words in zip(predicted, gold, target_words, strict=True):
        possible = possible | sure
        sources: dict[int, list[int]] = {}
        for s, t in possible:
            sources.setdefault(t, []).append(s)
        for s, t in links:
            count = by_word.setdefault(words[t], [0, 0])
            misses["links"] += 1
            count[0] += 1
            if (s, t) in possible:
                continue
            misses["missed"] += 1
            count[1] += 1
            distance = min((abs(s - g) for g in sources.get(t, [])), default=None)
            misses["unaligned" if distance is None else distance if distance < 3 else "3+"] += 1
    misses["by_word"] = by_word
    return misses
