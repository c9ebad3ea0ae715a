"""The n-best list format of ``rnnsearch translate --n-best N``: ``i ||| text ||| log-prob`` per
hypothesis, i the 0-based input line, best first (Moses' n-best layout, without feature scores)."""
from __future__ import annotations

from rnnsearch.data.io import DataError

SEPARATOR = " ||| "


def format_nbest(index: int, translation) -> list[str]:
    """The lines of one input's n-best list (the best translation only, without ``nbest``)."""
    return [f"{index}{SEPARATOR}{h.text}{SEPARATOR}{h.score:.4f}" for h in (translation.nbest or [translation])]


def parse_nbest(lines: list[str], where: str = "<n-best>") -> list[list[tuple[str, float]]]:
    """N-best lines -> per input line, its (text, log-prob) hypotheses in order."""
    out: list[list[tuple[str, float]]] = []
    for number, line in enumerate(lines, start=1):
        parts = line.split(SEPARATOR)
        try:
            index, text, score = int(parts[0]), SEPARATOR.join(parts[1:-1]), float(parts[-1])
        except (ValueError, IndexError):
            raise DataError(f"{where}:{number}: expected 'i ||| text ||| log-prob'") from None
        if len(parts) < 3 or index < len(out) - 1 or index > len(out):
            raise DataError(f"{where}:{number}: expected 'i ||| text ||| log-prob' in input order")
        if index == len(out):
            out.append([])
        out[index].append((text, score))
    return out
