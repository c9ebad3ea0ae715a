"""Search settings: what one search is asked to do (beam, n-best, length and coverage penalties, limit, batch
size, sampling), as one frozen object built at the edge (command-line flags, an HTTP request, a
config) and passed whole from ``Translator.translate`` to the search functions.

A field left unset (None) takes the model's own decode section (``config.DecodeConfig``, where
each decoding default is written, once); ``resolve`` fills them in and checks the whole, in this
one place, naming a field as its edge calls it (``--beam`` on the command line, ``beam`` in a
request). The search functions read resolved settings only.
"""
from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rnnsearch.config import DecodeConfig, error_message
from rnnsearch.decoding.sampling import Sampling
from rnnsearch.errors import UsageError

DECODE_FIELDS = tuple(DecodeConfig.model_fields)  # the fields a decode section gives
DEFAULTS = DecodeConfig()  # a model's decode section when it says nothing


def _described(name: str):
    """A field of SearchSettings: None (the model's), described as DecodeConfig describes it."""
    info = DecodeConfig.model_fields[name]
    return Field(None, description=f"{info.description or name}; unset: the model's decode.{name}")


class SettingsError(UsageError):
    """Settings that cannot be searched with; ``field`` names the setting at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class SearchSettings(BaseModel):
    """What one search is asked to do: ``SearchSettings(beam=5, n_best=3)``; a field left out (None) is
    the model's own (its config's decode section); ``sampling`` draws instead of searching. Frozen; a
    bad value raises a SettingsError naming the field once resolved against the model (``resolve``), a
    value of the wrong type pydantic's ValidationError at once."""
    model_config = ConfigDict(frozen=True, extra="forbid")

    beam: int | None = _described("beam")
    n_best: int | None = _described("n_best")
    length_penalty: float | None = _described("length_penalty")
    coverage_penalty: float | None = _described("coverage_penalty")
    max_len_ratio: float | None = _described("max_len_ratio")
    batch_size: int | None = _described("batch_size")
    max_src_len: int | None = _described("max_src_len")
    sampling: Sampling | None = Field(None, description="draw the outputs instead of searching (n_best draws "
                                      "per sentence, beam 1)")

    @classmethod
    def given(cls, value) -> SearchSettings:
        """``value`` as SearchSettings (None: every field the model's); a TypeError in one line for anything else
        (a dict was read as settings and failed deep inside with an AttributeError)."""
        return settings_given(cls, value, "search", "beam=5")

    @property
    def resolved(self) -> bool:
        """Whether every field is set (what ``resolve`` returns)."""
        return all(getattr(self, name) is not None for name in DECODE_FIELDS)

    def resolve(self, decode: DecodeConfig = DEFAULTS, name: Callable[[str], str] = str) -> SearchSettings:
        """These settings with each unset field taken from ``decode`` (the model's decode section),
        checked; a SettingsError names the field as ``name(field)``."""
        values = {**decode.model_dump(), **{f: v for f in DECODE_FIELDS if (v := getattr(self, f)) is not None}}
        if self.sampling is not None:
            if self.beam not in (None, 1):
                raise SettingsError("beam", f"sampling draws each output token by token: it takes no "
                                    f"{name('beam')} (got {self.beam})")
            values["beam"] = 1
        _check(values, self.sampling is not None, name)
        return SearchSettings(**values, sampling=self.sampling)

    def require_resolved(self) -> SearchSettings:
        """These settings, which a search function needs resolved (``resolve``)."""
        if not self.resolved:
            unset = [f for f in DECODE_FIELDS if getattr(self, f) is None]
            raise ValueError(f"search settings with {', '.join(unset)} unset: resolve them against the model's "
                             "decode section first (settings.resolve(config.decode))")
        return self


def settings_given(kind: type, value, what: str, example: str):
    """``value`` as settings of ``kind`` (None: its defaults); a TypeError in one line for anything else."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise TypeError(f"{what} settings must be a {kind.__name__} (e.g. {kind.__name__}({example})), not "
                        f"{type(value).__name__}")
    return value


MAX_BEAM = 1000  # hypotheses a search keeps per sentence, at most


def _check(values: dict, sampled: bool, name: Callable[[str], str]) -> None:
    """The rules of a search, each once: beam and n_best first (their meaning in words), then the
    bounds of every field as DecodeConfig declares them."""
    beam, n_best = values["beam"], values["n_best"]
    if not isinstance(beam, int) or beam < 1:
        raise SettingsError("beam", f"{name('beam')} must be at least 1 (1 = greedy search), got {beam}")
    if beam > MAX_BEAM:  # a beam of 1,000,000 died of a bare allocation error; 100,000 ate 18 GB before the OOM killer
        raise SettingsError("beam", f"{name('beam')} must be at most {MAX_BEAM}, got {beam} (the paper searches with 12)")
    if not isinstance(n_best, int) or n_best < 1:
        raise SettingsError("n_best", f"{name('n_best')} must be at least 1, got {n_best}")
    if n_best > beam and not sampled:
        raise SettingsError("n_best", f"{name('n_best')} {n_best} is larger than {name('beam')} {beam}: "
                            f"a beam of {beam} finds at most {beam} hypotheses")
    try:
        DecodeConfig.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0])
        raise SettingsError(field, error_message(error, key=name(field))) from None


__all__ = ["SearchSettings", "SettingsError", "Sampling", "DECODE_FIELDS"]
