"""Typographic marks as the model reads them: a curly apostrophe or quote and an en or em dash are
read as the straight apostrophe, the straight quote and the hyphen the training text writes (the
Hansards' vocabulary has ``'s``, ``"`` and ``-``, not ``’s``, ``“`` or ``–``: ``The minister’s office``
was read as unknown marks, and the model dropped the words beside them). One character for one, so
every offset into the text stays valid, and the model's units are found in the text as written
(``decoding/placement.token_spans``); the output is the model's, with its own marks.
"""
from __future__ import annotations

from rnnsearch.decoding.placement import PLAIN_MARKS as FOR_MODEL  # units are found in the text by it too


def for_model(text: str) -> str:
    """``text`` with its typographic apostrophes, quotes and dashes as the plain ones (same length)."""
    return text.translate(FOR_MODEL)
