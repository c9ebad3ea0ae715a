"""The FastAPI application: ``/translate``, ``/health``, ``/metrics``, the page at ``/`` and
self-hosted API docs at ``/docs`` (no CDN: fastapi-offline)."""
from __future__ import annotations

import time
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from rnnsearch import __version__
from rnnsearch.serve.batcher import Batcher, Overloaded, TimedOut
from rnnsearch.serve.metrics import Metrics
from rnnsearch.serve.schemas import (ErrorBody, HealthResponse, Hypothesis, ModelSummary, TranslateRequest,
                                     TranslateResponse, Translation)
from rnnsearch.serve.settings import ServeSettings

STATIC = Path(__file__).parent / "static"


class ServeError(Exception):
    def __init__(self, status: int, kind: str, message: str, limit: str | None = None,
                 value: float | None = None, field: str | None = None):
        super().__init__(message)
        self.status, self.body = status, ErrorBody(error=message, kind=kind, limit=limit, value=value,
                                                  field=field)


def create_app(translator, settings: ServeSettings | None = None, checkpoint: str | None = None):
    settings = settings or ServeSettings()
    metrics = Metrics()
    batcher = Batcher(translator, settings, metrics)

    @asynccontextmanager
    async def lifespan(app):
        if settings.threads:
            import torch
            torch.set_num_threads(settings.threads)
        batcher.start()
        yield
        await batcher.stop()

    errors = {"model": ErrorBody}
    app = FastAPIOffline(title="rnnsearch", version=__version__, lifespan=lifespan, redoc_url=None,
                         description="Translations with their soft alignments (Bahdanau et al. 2014).")
    app.add_middleware(Guard, metrics=metrics, max_body_bytes=settings.max_body_bytes)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(ServeError, _serve_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)
    app.state.batcher, app.state.metrics = batcher, metrics

    @app.post("/translate", response_model=TranslateResponse, response_model_exclude_none=False,
              responses={400: errors, 413: errors, 415: errors, 422: errors, 503: errors})
    async def translate(req: TranslateRequest) -> TranslateResponse:
        """Translate one or more sentences; optionally with n-best lists and attention matrices."""
        texts, field = ([req.text], "text") if req.text is not None else (req.texts, "texts")
        beam = translator.decode_cfg.beam if req.beam is None else req.beam
        _check(texts, field, beam, req.n_best, settings)
        units = await run_in_threadpool(lambda: [translator.source_units(t) for t in texts])
        _check_units(units, field, translator.decode_cfg.max_src_len)
        try:
            results = await batcher.submit(units, beam, req.n_best)
        except Overloaded:
            raise ServeError(503, "max_queue", f"the server is busy: {batcher.queued} sentences are waiting",
                             "max_queue", settings.max_queue) from None
        except TimedOut:
            raise ServeError(503, "timeout_s", f"no answer within {settings.timeout_s} s", "timeout_s",
                             settings.timeout_s) from None
        return _response(translator, beam, results, req.return_attention)

    @app.get("/health")
    async def health() -> HealthResponse:
        """The model, its configuration summary, the server's settings and uptime."""
        return _health(translator, settings, metrics, checkpoint)

    @app.get("/metrics")
    async def get_metrics() -> dict:
        """Counters (requests, errors, sentences, searches, mean batch size) and latency percentiles."""
        return metrics.snapshot(batcher.queued)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    return app


def _check(texts: list[str], field: str, beam: int, n_best: int, s: ServeSettings) -> None:
    if not texts:
        raise ServeError(422, "invalid_request", "'texts' is empty: give at least one sentence", field=field)
    if len(texts) > s.max_texts:
        raise ServeError(413, "max_texts", f"{len(texts)} texts in one request; at most {s.max_texts}",
                         "max_texts", s.max_texts, field)
    for i, text in enumerate(texts):
        where = field if field == "text" else f"texts[{i}]"
        if not text.strip():
            raise ServeError(422, "empty_text", f"{where} is empty", field=where)
        if len(text) > s.max_chars:
            raise ServeError(413, "max_chars", f"{where} has {len(text)} characters; at most {s.max_chars}",
                             "max_chars", s.max_chars, where)
    if beam > s.max_beam:
        raise ServeError(422, "max_beam", f"beam {beam} is over the limit {s.max_beam}", "max_beam",
                         s.max_beam, "beam")
    if n_best > beam:
        raise ServeError(422, "invalid_request", f"n_best {n_best} is larger than the beam {beam}",
                         field="n_best")


def _check_units(units: list[list[str]], field: str, limit: int) -> None:
    for i, u in enumerate(units):
        if len(u) > limit:
            where = field if field == "text" else f"texts[{i}]"
            raise ServeError(413, "max_src_len", f"{where} has {len(u)} source tokens; the model reads at "
                             f"most {limit} (decode.max_src_len)", "decode.max_src_len", limit, where)


def _response(translator, beam: int, results, with_attention: bool) -> TranslateResponse:
    def attention(r):
        if not with_attention or r.attention is None:
            return None
        return [[round(float(a), 4) for a in row] for row in r.attention]
    return TranslateResponse(model=translator.config.name, beam=beam, translations=[
        Translation(text=r.text, tokens=r.tokens, source_tokens=r.source_tokens, score=r.score,
                    nbest=[Hypothesis(text=h.text, tokens=h.tokens, score=h.score) for h in r.nbest],
                    attention=attention(r))
        for r in results])


def _health(translator, settings: ServeSettings, metrics: Metrics, checkpoint) -> HealthResponse:
    cfg = translator.config
    m, d = cfg.model, cfg.decode
    summary = ModelSummary(arch=m.arch, emb=m.emb, enc_hidden=m.enc_hidden, dec_hidden=m.dec_hidden, att=m.att,
                           maxout=m.maxout, src_lang=cfg.data.src_lang, tgt_lang=cfg.data.tgt_lang,
                           vocab={"mode": translator.src_codec.mode, "src": len(translator.src_codec.vocab),
                                  "tgt": len(translator.tgt_codec.vocab)},
                           beam=d.beam, max_src_len=d.max_src_len)
    return HealthResponse(status="ok", version=__version__, model=cfg.name, checkpoint=checkpoint, config=summary,
                          parameters=sum(p.numel() for p in translator.model.parameters()),
                          device=str(translator.device), attention=m.arch == "rnnsearch",
                          settings=settings.limits(), uptime_s=round(metrics.uptime(), 1))


def _error(status: int, body: ErrorBody, request: Request) -> JSONResponse:
    request.scope.setdefault("state", {})["error_kind"] = body.kind
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status,
                        headers={"Retry-After": "1"} if status == 503 else None)


async def _serve_error(request: Request, exc: ServeError) -> JSONResponse:
    return _error(exc.status, exc.body, request)


HTTP_KINDS = {400: "malformed_json", 404: "not_found", 405: "method_not_allowed"}


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (a body that is not UTF-8 JSON, an unknown path, a wrong method)."""
    kind = HTTP_KINDS.get(exc.status_code, f"http_{exc.status_code}")
    return _error(exc.status_code, ErrorBody(error=str(exc.detail), kind=kind), request)


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    content_type = request.headers.get("content-type", "")
    if request.method == "POST" and "json" not in content_type.lower():
        return _error(415, ErrorBody(error=f"send the body as JSON with 'Content-Type: application/json' "
                                           f"(got {content_type or 'no Content-Type'!r})",
                                     kind="content_type"), request)
    problems = exc.errors()
    bad_json = next((p for p in problems if p.get("type") == "json_invalid"), None)
    if bad_json is not None:
        where = bad_json.get("loc", ("body", "?"))[-1]
        reason = (bad_json.get("ctx") or {}).get("error", "invalid JSON")
        return _error(400, ErrorBody(error=f"malformed JSON at character {where}: {reason}",
                                     kind="malformed_json"), request)
    parts, first = [], None
    for p in problems:
        loc = _field(p.get("loc", ()))
        first = first or loc
        parts.append(f"{loc}: {p.get('msg', 'invalid')}")
    return _error(422, ErrorBody(error="invalid request: " + "; ".join(parts), kind="invalid_request",
                                 field=first), request)


def _field(loc) -> str:
    """('body', 'texts', 1) -> 'texts[1]'."""
    out = ""
    for part in loc:
        if part == "body":
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    return _error(500, ErrorBody(error=f"internal error: {type(exc).__name__}: {exc}", kind="internal"), request)


class Guard:
    """ASGI middleware: refuses bodies over ``max_body_bytes`` (413) before the app reads them,
    and counts every HTTP response (status, error kind, /translate latency) in the metrics."""

    def __init__(self, app, metrics: Metrics, max_body_bytes: int):
        self.app, self.metrics, self.max_body_bytes = app, metrics, max_body_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.perf_counter(), [500]

        async def counted_send(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        body = await self._read_body(scope, receive)
        if body is None:
            kind = "max_body_bytes"
            err = ErrorBody(error=f"request body over {self.max_body_bytes} bytes", kind=kind,
                            limit="max_body_bytes", value=self.max_body_bytes)
            await JSONResponse(err.model_dump(exclude_none=True), status_code=413)(scope, receive, counted_send)
            self.metrics.record_response(413, None, kind)
            return
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed_receive():
            return replay.pop() if replay else await receive()

        try:
            await self.app(scope, replayed_receive, counted_send)
        finally:
            state = scope.get("state") or {}
            code = status[0]
            timed = scope["path"] == "/translate" and scope["method"] == "POST"
            kind = (state.get("error_kind") or f"http_{code}") if code >= 400 else None
            self.metrics.record_response(code, time.perf_counter() - start if timed else None, kind)

    async def _read_body(self, scope, receive) -> bytes | None:
        """The whole request body, or None once it passes the limit."""
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)
