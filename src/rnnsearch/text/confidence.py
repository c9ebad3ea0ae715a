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
- ``length_ratio``: the output's words over the source's (text/coverage.py; None for a line of few words), and
  ``short`` where it is below the caller's threshold (``--min-length-ratio``): part of the line may be missing.

``low`` is set where ``logprob`` is below a threshold the caller gives (``--min-confidence``); the
value for each release was chosen on held-out data (experiments/confidence.py, docs/text.md).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rnnsearch.data.vocab import UNK_TOKEN
from rnnsearch.decoding.source import Translation
from rnnsearch.errors import flag


@dataclass(frozen=True)
class Confidence:
    logprob: float           # per output unit, </s> included
    unk_share: float         # of the output units
    low: bool = False        # logprob below the caller's threshold
    uncovered: tuple[str, ...] = ()  # source words with almost no attention, numbers not written
    length_ratio: float | None = None  # output words / source words (None: fewer than coverage.MIN_WORDS)
    short: bool = False      # length_ratio below the caller's threshold

    def as_dict(self) -> dict:
        return {"logprob": round(self.logprob, 4), "unk_share": round(self.unk_share, 4), "low": self.low,
                "uncovered": list(self.uncovered),
                "length_ratio": None if self.length_ratio is None else round(self.length_ratio, 4), "short": self.short}


def confidence(t: Translation, threshold: float | None = None, uncovered: Sequence[str] = (),
               min_length_ratio: float = 0.0) -> Confidence | None:
    """The confidence of ``t`` (None: nothing was translated, a blank line or one not translated);
    ``uncovered``: its words named by text/coverage.py; ``min_length_ratio``: the ratio below which it is short."""
    from rnnsearch.text.coverage import length_ratio
    if not t.tokens or t.error:
        return None
    ends = max(len(t.segments), 1)  # one </s> per sentence
    logprob = t.score / (len(t.tokens) + ends)
    unks = set(t.replaced) | {i for i, tok in enumerate(t.tokens) if tok == UNK_TOKEN}
    ratio = length_ratio(t)
    return Confidence(logprob, len(unks) / len(t.tokens), threshold is not None and logprob < threshold,
                      tuple(uncovered), ratio, ratio is not None and ratio < min_length_ratio)


def doubts(t: Translation, codec, settings, name: Callable[[str], str] = flag) -> tuple[Confidence | None, list[str]]:
    """``t``'s confidence and the warnings a caller gives of it under ``settings`` (TextSettings), each threshold
    as the caller's edge names its field (``name``): the source words it may have left out (text/coverage.py),
    a translation far shorter than its source, and a confidence below the threshold."""
    from rnnsearch.text.coverage import left_out_warning, short_warning, uncovered
    left_out = uncovered(t, codec, settings.min_coverage)
    warnings = [left_out_warning(left_out, settings.min_coverage, name("min_coverage"))] if left_out else []
    c = confidence(t, settings.min_confidence, left_out, settings.min_length_ratio)
    if c is not None and c.short:
        warnings.append(short_warning(t, settings.min_length_ratio, name("min_length_ratio")))
    if c is not None and c.low:
        warnings.append(f"low confidence: {c.logprob:.3f} per unit, below {name('min_confidence')} "
                        f"{settings.min_confidence}: check this translation")
    return c, warnings


def assess(translator, t: Translation, settings=None) -> tuple[Confidence | None, list[str]]:
    """What ``rnnsearch translate`` and the HTTP API say of a translation ``translate_text`` gave: its confidence and
    the warnings (words it may have left out, a translation far shorter than its source, a low confidence) under
    ``settings`` (TextSettings; None: the defaults), each threshold named by its field (``min_coverage``)."""
    from rnnsearch.text.settings import TextSettings
    return doubts(t, translator.src_codec, TextSettings.given(settings), str)
