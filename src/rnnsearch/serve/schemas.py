"""Request and response bodies of ``POST /translate`` and ``POST /score`` (they make the OpenAPI
schema at /docs)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator, model_validator

from rnnsearch.decoding.sampling import Sampling
from rnnsearch.text.settings import TextSettings


class Text(BaseModel):
    """One source sentence with its terminology (decoding/constraints.py)."""
    model_config = ConfigDict(extra="forbid")

    text: StrictStr = Field(description="the source sentence")
    constraints: list[StrictStr] = Field([], description="words or phrases the translation must contain")
    avoid: list[StrictStr] = Field([], description="words or phrases the translation must not contain")


class Term(BaseModel):
    """A glossary entry: where a text's source contains ``source`` (as the model tokenises it, any
    case), its translation must contain ``target``."""
    model_config = ConfigDict(extra="forbid")

    source: StrictStr = Field(pattern=r"\S", description="a term of the source (not blank: one was taken and matched "
                              "nothing)")
    target: StrictStr = Field(pattern=r"\S", description="its translation (not blank)")


class TranslateRequest(BaseModel):
    """One sentence (``text``) or several (``texts``); unknown fields are errors."""
    model_config = ConfigDict(extra="forbid")

    text: StrictStr | None = Field(None, description="one source sentence")
    api_key: StrictStr | None = Field(None, description="with rnnsearch serve --api-keys: the client's key (none: "
                                      "the default limit)")
    texts: list[Text] | None = Field(None, description="several source sentences, each a string or an object "
                                     "with its own constraints and avoid")
    constraints: list[StrictStr] = Field([], description="with text: words or phrases the translation must "
                                         "contain (lexically constrained beam search)")
    avoid: list[StrictStr] = Field([], description="with text: words or phrases the translation must not contain")
    glossary: list[Term] = Field([], description="terminology for every text: each entry whose source term a text "
                                 "contains adds its target term to that text's constraints")
    markup: Literal["xml", "html"] | None = Field(None, description="the texts have inline tags: each is put back "
                                                  "around the target words aligned to its source words (text "
                                                  "only; tokens stay plain)")
    beam: StrictInt | None = Field(None, description="beam size (1 = greedy); default: the model's decode.beam")
    n_best: StrictInt | None = Field(None, description="hypotheses returned per sentence (<= beam); default: the "
                                     "model's decode.n_best")
    coverage_penalty: float | None = Field(None, description="GNMT beta: rank the finished hypotheses with beta x "
                                           "sum_j log min(attention word j got, 1) added; default: the model's "
                                           "decode.coverage_penalty (docs/results/coverage_penalty.md: 1.0)")
    return_attention: StrictBool = Field(False, description="include each translation's alignment matrix")
    sample: Sampling | None = Field(None, description="sample instead of searching: n_best outputs drawn per "
                                    "sentence (no beam, or beam 1); a request with a seed is searched alone")
    prefix: StrictStr | None = Field(None, description="with text: the translation begins with this text and "
                                                       "the model completes it (interactive translation)")
    prefixes: list[StrictStr] | None = Field(None, description="with texts: one prefix per text ('' for none)")
    text_handling: TextSettings = Field(default_factory=TextSettings, description="how each text is split into "
                                        "sentences and its items carried (text/settings.py); a blank text gets an "
                                        "empty translation")

    @field_validator("texts", mode="before")
    @classmethod
    def _strings_are_texts(cls, value):
        """A plain string in ``texts`` is a Text without constraints."""
        return [{"text": t} if isinstance(t, str) else t for t in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _one_input(self):
        if (self.text is None) == (self.texts is None):
            raise ValueError("give exactly one of 'text' (a string) or 'texts' (a list of strings)")
        if (self.prefix is not None and self.text is None) or (self.prefixes is not None and self.texts is None):
            raise ValueError("'prefix' goes with 'text', 'prefixes' (one per text) with 'texts'")
        if (self.constraints or self.avoid) and self.text is None:
            raise ValueError("'constraints' and 'avoid' go with 'text'; with 'texts', give each text as "
                             '{"text": ..., "constraints": [...], "avoid": [...]}')
        return self

    def sources(self) -> list[Text]:
        """Each text with its constraints."""
        if self.text is not None:
            return [Text(text=self.text, constraints=self.constraints, avoid=self.avoid)]
        return self.texts


class Hypothesis(BaseModel):
    text: str
    tokens: list[str]
    score: float = Field(description="log p(output, </s> | source)")


class Confidence(BaseModel):
    """What the model says of its own translation (text/confidence.py)."""
    logprob: float = Field(description="log p(output, </s> | source) per output unit, each sentence's </s> counted")
    unk_share: float = Field(description="share of the output units the model wrote as <unk>")
    low: bool = Field(description="logprob is below text_handling.min_confidence")
    uncovered: list[str] = Field(description="source words with attention below text_handling.min_coverage, and "
                                 "numbers above 10 the output does not write: words it may leave out or change")
    length_ratio: float | None = Field(description="the output's words over the source's (null: fewer than 8 "
                                       "source words)")
    short: bool = Field(description="length_ratio is below text_handling.min_length_ratio: part of the text may be "
                        "missing")


class Translation(BaseModel):
    text: str = Field(description="the best translation, detokenised")
    tokens: list[str] = Field(description="its output units, </s> excluded")
    source_tokens: list[str] = Field(description="the source units the model read, '</s>' last")
    score: float = Field(description="log p(output, </s> | source)")
    nbest: list[Hypothesis] = Field(description="the n best, the best first")
    attention: list[list[float]] | None = Field(
        None, description="alpha_ij: one row per output unit and the final </s> (len(tokens) + 1), "
                          "one column per source token; rows sum to 1. Null for RNNencdec or when not asked")
    error: str | None = Field(None, description="why this text (or one of its sentences) was not translated: "
                                                "constraints it cannot honour, markup that is not well-formed")
    constraints_met: bool = Field(True, description="false: a term of its constraints is not in its output")
    confidence: Confidence | None = Field(None, description="how far to trust it; null: nothing was translated")
    warnings: list[str] = Field([], description="what was read through (markup not well-formed: each fault and its "
                                "character) or is doubtful (a confidence below min_confidence); the text is translated")


class TranslateResponse(BaseModel):
    model: str
    beam: int
    sample: Sampling | None = Field(None, description="the sampling options, when sampled")
    translations: list[Translation]


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: StrictStr
    target: StrictStr = Field(description="a translation of source to score (blank: p(</s> | source))")


class ScoreRequest(BaseModel):
    """One pair (``source`` and ``target``) or several (``pairs``); unknown fields are errors."""
    model_config = ConfigDict(extra="forbid")

    source: StrictStr | None = Field(None, description="one source sentence")
    api_key: StrictStr | None = Field(None, description="with rnnsearch serve --api-keys: the client's key")
    target: StrictStr | None = Field(None, description="its translation, to score")
    pairs: list[Pair] | None = Field(None, description="several (source, target) pairs")
    return_units: StrictBool = Field(False, description="include the units read and each target unit's "
                                     "log-probability")
    return_attention: StrictBool = Field(False, description="include the attention alpha_ij of the steps "
                                         "that emitted the target (RNNsearch): the model's alignment of the pair")

    @model_validator(mode="after")
    def _one_input(self):
        one = self.source is not None or self.target is not None
        if one == (self.pairs is not None) or (one and (self.source is None or self.target is None)):
            raise ValueError("give either 'source' and 'target' (strings) or 'pairs' (a list of "
                             "{source, target})")
        return self


class PairScore(BaseModel):
    logprob: float = Field(description="log p(target, </s> | source), natural log: what beam search reports")
    units: int = Field(description="target units scored, </s> included")
    per_unit: float = Field(description="logprob / units")
    unknown: int = Field(description="target units outside the model's vocabulary (read as <unk>)")
    tokens: list[str] | None = Field(None, description="return_units: the target units, </s> excluded")
    source_tokens: list[str] | None = Field(None, description="return_units or return_attention: the source "
                                            "units, '</s>' last")
    unit_logprobs: list[float] | None = Field(None, description="return_units: log p(y_i | y_<i, x) of each "
                                              "target unit and </s> (len(tokens) + 1); they sum to logprob")
    attention: list[list[float]] | None = Field(
        None, description="return_attention: alpha_ij, one row per target unit and the final </s>, one "
                          "column per source token; null for a model without attention (RNNencdec)")


class ScoreResponse(BaseModel):
    model: str
    scores: list[PairScore]


class ErrorBody(BaseModel):
    error: str = Field(description="what went wrong, in words")
    kind: str = Field(description="a stable name: the limit exceeded, or invalid_request, malformed_json, ...")
    limit: str | None = Field(None, description="the setting that was exceeded")
    value: int | float | None = Field(None, description="that setting's value")
    field: str | None = Field(None, description="the request field at fault")
    request_id: str | None = Field(None, description="this request's id (also the X-Request-ID header); the "
                                                     "server log names it beside any internal error")


class ModelSummary(BaseModel):
    arch: str
    emb: int
    enc_hidden: int
    dec_hidden: int
    att: int
    maxout: int
    src_lang: str
    tgt_lang: str
    vocab: dict[str, int | str] = Field(description="mode, and the source and target vocabulary sizes")
    beam: int = Field(description="the default beam")
    max_src_len: int = Field(description="source tokens per text, at most")


class HealthResponse(BaseModel):
    status: str
    version: str
    model: str = Field(description="the model's name: its release's (models/NAME), else its config's")
    checkpoint: str | None
    config: ModelSummary
    parameters: int
    device: str
    attention: bool = Field(description="whether translations come with alignments (RNNsearch)")
    score: bool = Field(description="whether POST /score works (the torch backend)")
    settings: dict = Field(description="the server's limits (rnnsearch serve --help)")
    uptime_s: float
    pairs: list[dict] = Field(default_factory=list, description="every direction served: source, target and its "
                              "model's name (the fields above describe the first, which rnnsearch's own routes use)")
