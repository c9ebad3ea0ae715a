"""``POST /transfer_tags``: a tagged source's tags placed into its given translation (a translator's
post-edit; analysis/transfer_tags.py), by the alignment head of the model serving the pair's direction,
symmetrised with the model of the other direction where the server holds one (``rnnsearch serve
hansards_enfr_rnnsearch50 hansards_fren_rnnsearch50``)."""
from __future__ import annotations

from typing import Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StrictStr
from starlette.concurrency import run_in_threadpool

from rnnsearch.serve import checks
from rnnsearch.serve.errors import ServeError


class TransferPair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: StrictStr = Field(description="the source with its tags (XML, or HTML with markup 'html')")
    target: StrictStr = Field(description="its translation, without tags")


class TransferRequest(BaseModel):
    """Pairs of a tagged source and its plain translation; unknown fields are errors."""
    model_config = ConfigDict(extra="forbid")

    pairs: list[TransferPair] = Field(description="the pairs, each placed on its own")
    markup: Literal["xml", "html"] = Field("xml", description="how the sources' tags are read")
    reading: Literal["head", "attention", "symmetrised"] | None = Field(
        None, description="the alignment to place by (default: symmetrised where the server holds the reverse "
        "model, else the alignment head, else the attention)")
    source: StrictStr | None = Field(None, description="the source language, where the server holds several models")
    target: StrictStr | None = Field(None, description="the target language, where the server holds several models")
    api_key: StrictStr | None = Field(None, description="with rnnsearch serve --api-keys: the client's key")


class Transferred(BaseModel):
    text: str = Field(description="the translation with the source's tags (escaped text; untagged where error)")
    error: str | None = Field(None, description="why the tags were not placed")


class TransferResponse(BaseModel):
    model: str
    reading: str
    translations: list[Transferred]


def install(app, routes: dict, default: tuple, settings, admit) -> None:
    """The route on ``app``: ``routes`` {(source, target): (translator, batcher)}, ``default`` the pair a
    request without languages goes to, ``admit(key, request)`` the server's keys and limits."""
    from rnnsearch.analysis.transfer_tags import transfer_tags

    @app.post("/transfer_tags", response_model=TransferResponse, tags=["rnnsearch"])
    async def transfer(req: TransferRequest, request: Request) -> TransferResponse:
        """Place each source's tags into its given translation through the model's alignment."""
        admit(req.api_key, request)
        pair = (req.source or default[0], req.target or default[1])
        if pair not in routes:
            raise ServeError(400, "unsupported_pair", f"no model here translates {pair[0]} to {pair[1]}; this "
                             f"server holds {', '.join(f'{a}->{b}' for a, b in routes)}")
        translator = routes[pair][0]
        if not translator.can_score:  # forced alignment reads the PyTorch model, as /score does
            raise ServeError(501, "not_supported", "transferring tags force-aligns with the PyTorch model; this "
                             f"server runs the {type(translator.model).__name__} backend")
        reverse = routes.get(pair[::-1], (None,))[0]
        if req.reading == "symmetrised" and reverse is None:
            raise ServeError(422, "invalid_request", f"the symmetrised reading needs a {pair[1]}->{pair[0]} model "
                             "beside this one: serve both", field="reading")
        checks.check([p.source for p in req.pairs], "pairs", settings, where=lambda i: f"pairs[{i}].source")
        checks.check([p.target for p in req.pairs], "pairs", settings, where=lambda i: f"pairs[{i}].target")
        reading = req.reading or ("symmetrised" if reverse is not None else None)
        try:
            done = await run_in_threadpool(transfer_tags, translator, [p.source for p in req.pairs],
                                           [p.target for p in req.pairs], req.markup, reading, reverse)
        except ValueError as exc:
            raise ServeError(422, "invalid_request", str(exc), field="reading") from None
        used = reading or ("head" if getattr(translator, "align_head", None) is not None else "attention")
        return TransferResponse(model=translator.name, reading=used,
                                translations=[Transferred(text=d.text, error=d.error) for d in done])
