"""How much a translation can be trusted, from what the model itself says about it (#85):
``confidence(translation)``.

- ``logprob``: log p(y, </s> | x) / (|y| + 1), the output's log-probability per unit, each sentence's
  </s> counted (a line of several sentences: their scores summed over all their units). A sentence
  far from what the model was trained on gets a low one: the model is unsure of every word.
- ``unk_share``: the share of output units the model wrote as <unk> (replaced by a source word or
  kept): words it could not write. (A slot's copy, which carries a URL, number or name on purpose, is
  not one.)

- ``uncovered``: the source words the caller found with almost no attention, and numbers the output does
  not write (text/coverage.py): words the translation may have left out or changed.

``low`` is set where ``logprob`` is below a threshold the caller gives (``--min-confidence``); the
value for each release was chosen on held-out data (experiments/confidence.py, docs/text.md).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rnnsearch.data.vocab import UNK_TOKEN
from rnnsearch.decoding.source import Translation


@dataclass(frozen=True)
class Confidence:
    logprob: float           # per output unit, </s> included
    unk_share: float         # of the output units
    low: bool = False        # logprob below the caller's threshold
    uncovered: tuple[str, ...] = ()  # source words with almost no attention, numbers not written

    def as_dict(self) -> dict:
        return {"logprob": round(self.logprob, 4), "unk_share": round(self.unk_share, 4), "low": self.low,
                "uncovered": list(self.uncovered)}


def confidence(t: Translation, threshold: float | None = None, uncovered: Sequence[str] = ()) -> Confidence | None:
    """The confidence of ``t`` (None: nothing was translated, a blank line or one not translated);
    ``uncovered``: its words named by text/coverage.py."""
    if not t.tokens or t.error:
        return None
    ends = max(len(t.segments), 1)  # one </s> per sentence
    logprob = t.score / (len(t.tokens) + ends)
    unks = set(t.replaced) | {i for i, tok in enumerate(t.tokens) if tok == UNK_TOKEN}
    return Confidence(logprob, len(unks) / len(t.tokens), threshold is not None and logprob < threshold,
                      tuple(uncovered))


def doubts(t: Translation, codec, min_coverage: float, min_confidence: float | None,
           flags: tuple[str, str] = ("--min-coverage", "--min-confidence")) -> tuple[Confidence | None, list[str]]:
    """``t``'s confidence and the warnings a caller gives of it, with its thresholds as the caller's edge names
    them (``flags``): the source words it may have left out (text/coverage.py) and a confidence below the
    threshold."""
    from rnnsearch.text.coverage import left_out_warning, uncovered
    left_out = uncovered(t, codec, min_coverage)
    warnings = [left_out_warning(left_out, min_coverage, flags[0])] if left_out else []
    c = confidence(t, min_confidence, left_out)
    if c is not None and c.low:
        warnings.append(f"low confidence: {c.logprob:.3f} per unit, below {flags[1]} {min_confidence}: "
                        "check this translation")
    return c, warnings
