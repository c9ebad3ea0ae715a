"""Text settings: how running text is cut and carried around the model, one frozen object built at the
edge (command-line flags, an HTTP request) and passed whole to ``text/pipeline.py``."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TextSettings(BaseModel):
    """How running text is cut and carried around the model (one object, built at the edge)."""
    model_config = ConfigDict(frozen=True, extra="forbid")

    split: bool = Field(True, description="split each line into sentences, translate them, and join them with the "
                        "source's spacing (a line with constraints stays whole)")
    placeholders: bool = Field(True, description="carry URLs, e-mail addresses, paths, phone numbers, numbers, amounts, "
                               "code and names the vocabulary lacks through slots the model copies, restored verbatim")
    convert_numbers: bool = Field(True, description="write numbers and amounts in the target language's "
                                  "convention (Babel: 4.2 -> 4,2), not as the source writes them")
    max_units: int | None = Field(None, gt=1, description="translate a sentence longer than this many units in pieces "
                                  "cut at clause marks (default: twice the model's data.max_len)")
    min_confidence: float | None = Field(None, le=0, description="flag each line whose translation's log-probability "
                                         "per unit is below this, with a warning (text/confidence.py; docs/text.md "
                                         "gives the value chosen for the En->Fr RNNsearch-50)")
    translate_attributes: bool = Field(False, description="for HTML (translate --markup html, translate-file's .html), "
                                       "translate the alt, title, placeholder and aria-label attributes and a "
                                       "describing <meta>'s content too "
                                       "(text/attributes.py); others stay as written")
    min_coverage: float = Field(0.15, ge=0, description="name, with a warning, the source words whose attention summed "
                                "over the output is below this: words the translation may leave out (0: off; "
                                "text/coverage.py; docs/text.md says how it was chosen)")
    min_length_ratio: float = Field(0.55, ge=0, description="warn where a translation has fewer words than this "
                                    "times its source's (a line of 8 words or more): it may leave part of it out "
                                    "(0: off; text/coverage.py; docs/text.md says how it was chosen)")

    @classmethod
    def given(cls, value) -> TextSettings:
        """``value`` as TextSettings (None: the defaults); a TypeError in one line for anything else."""
        from rnnsearch.decoding.settings import settings_given
        return settings_given(cls, value, "text", "split=False")
