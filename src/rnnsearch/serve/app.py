"""The FastAPI application: ``/translate`` (searched or sampled), ``/score`` (log p(target | source)
of given pairs), ``/health``, ``/metrics`` (Prometheus) and ``/metrics.json``, the page at ``/`` and
self-hosted API docs at ``/docs`` (no CDN: fastapi-offline). While the server drains
(``app.state.draining``, set by serve/server.py on SIGTERM) new /translate and /score requests get
503 and /health says so; the requests already accepted are answered."""
from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool

from rnnsearch import __version__
from rnnsearch.errors import UsageError
from rnnsearch.serve import checks, errors, libretranslate, transfer
from rnnsearch.serve.access import Access
from rnnsearch.decoding.settings import SettingsError
from rnnsearch.serve.batcher import (CLIENT_GONE, Batcher, ClientGone, Overloaded, ShuttingDown, TimedOut, scoring,
                                     translating)
from rnnsearch.serve.errors import ServeError
from rnnsearch.serve.guard import Guard, cors
from rnnsearch.serve.markup import read_texts, where as _where, with_errors_named
from rnnsearch.serve.metrics import Metrics
from rnnsearch.serve.schemas import (ErrorBody, HealthResponse, Hypothesis, ModelSummary, PairScore, ScoreRequest,
                                     ScoreResponse, TranslateRequest, TranslateResponse, Translation)
from rnnsearch.serve.settings import ServeSettings

STATIC = Path(__file__).parent / "static"


def create_app(translator, settings: ServeSettings | None = None, checkpoint: str | None = None,
               others: tuple = (), access: Access | None = None):
    """The app over ``translator`` (rnnsearch's own routes) and ``others``: every model answers the
    LibreTranslate routes for its (source, target) pair (serve/libretranslate.py), under ``access``
    (API keys and request limits; default: none)."""
    settings, access, metrics = settings or ServeSettings(), access or Access(), Metrics()
    routes, pair = _routes((translator, *others), settings, metrics), (translator.src_codec.lang, translator.tgt_codec.lang)
    batcher, error_body, batchers = routes[pair][1], {"model": ErrorBody}, [b for _, b in routes.values()]
    app = FastAPIOffline(title="rnnsearch", version=__version__, lifespan=_lifespan(batchers, settings), redoc_url=None,
                         description="Translations with their soft alignments (Bahdanau et al. 2014).")
    app.state.batcher, app.state.batchers, app.state.metrics, app.state.draining = batcher, batchers, metrics, False
    app.add_middleware(Guard, metrics=metrics, max_body_bytes=settings.max_body_bytes, state=app.state)
    cors(app, settings)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    errors.install(app)
    libretranslate.install(app, routes, settings, access, lambda req, t, b: _translate(req, t, b, settings))
    transfer.install(app, routes, pair, settings, lambda key, request: _admit(access, key, request))

    @app.post("/translate", response_model=TranslateResponse, response_model_exclude_none=False,
              responses={400: error_body, 413: error_body, 415: error_body, 422: error_body, 503: error_body})
    async def translate(req: TranslateRequest, request: Request) -> TranslateResponse:
        """Translate one or more sentences; optionally with n-best lists and attention matrices, or
        with outputs drawn from the model's distribution (``sample``: n_best draws per sentence)."""
        _admit(access, req.api_key, request)
        CLIENT_GONE.set(request.is_disconnected)
        return await _translate(req, translator, batcher, settings)

    @app.post("/score", response_model=ScoreResponse,
              responses={400: error_body, 413: error_body, 415: error_body, 422: error_body, 501: error_body,
                         503: error_body})
    async def score(req: ScoreRequest, request: Request) -> ScoreResponse:
        """log p(target | source) of given translations, read with teacher forcing: to rerank
        candidates from elsewhere or to filter pairs by the model's belief in them."""
        _admit(access, req.api_key, request)
        CLIENT_GONE.set(request.is_disconnected)
        return await _score(req, translator, batcher, settings)

    @app.api_route("/health", methods=["GET", "HEAD"], responses={503: {"model": HealthResponse}})
    async def health() -> HealthResponse:
        """The model, its configuration summary, the server's settings and uptime; 503 while draining."""
        body = _health(translator, settings, metrics, checkpoint, app.state.draining)
        body.pairs = [{"source": a, "target": b, "model": t.name} for (a, b), (t, _) in routes.items()]
        return JSONResponse(body.model_dump(), status_code=503) if app.state.draining else body

    @app.api_route("/metrics", methods=["GET", "HEAD"], response_class=Response)
    async def prometheus() -> Response:
        """Prometheus text format: responses by status, errors by kind, latency and batch-size
        histograms, queue depth, requests in flight, sentences translated."""
        return Response(metrics.exposition(batcher.queued), media_type=CONTENT_TYPE_LATEST)

    @app.get("/metrics.json")
    async def metrics_json() -> dict:
        """The same counters as JSON, with latency percentiles (p50/p95/p99) over the last 10,000 requests."""
        return metrics.snapshot(batcher.queued)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    return app


def _admit(access: Access, key: str | None, request: Request) -> None:
    """The keys and limits of ``rnnsearch serve --api-keys/--req-limit`` on rnnsearch's own routes too."""
    refused = access.check(key, request.client.host if request.client else "")
    if refused:
        status, message = refused
        raise ServeError(status, "api_key" if status == 403 else "req_limit", message)


def _routes(models: tuple, settings: ServeSettings, metrics: Metrics) -> dict:
    """{(source, target): (translator, its batcher)}: one model per direction."""
    routes = {}
    for t in models:
        pair = (t.src_codec.lang, t.tgt_codec.lang)
        if pair in routes:
            raise UsageError(f"two models translate {pair[0]} -> {pair[1]}: serve one model per direction")
        t.warn = logging.getLogger("rnnsearch.serve").info  # each text's refusal is in its response
        routes[pair] = (t, Batcher(t, settings, metrics))
    return routes


def _lifespan(batchers: list[Batcher], settings: ServeSettings):
    @asynccontextmanager
    async def lifespan(app):
        if settings.threads:
            import torch
            torch.set_num_threads(settings.threads)
        for b in batchers:
            b.start()
        yield
        for b in batchers:
            await b.stop()
    return lifespan


async def _translate(req: TranslateRequest, translator, batcher: Batcher,
                     settings: ServeSettings) -> TranslateResponse:
    """Each text split into segments (text/pipeline.py), the segments of the request batched with
    others', each text's translation joined again; a text that cannot be translated gets its error
    in its own entry (the others are translated), a blank one an empty translation."""
    from rnnsearch.decoding.source import Source
    from rnnsearch.text.documents import assemble, markup_kinds, unit_sources
    from rnnsearch.text.normalize import clean_source
    from rnnsearch.text.pipeline import finish, segment_lines
    sources = req.sources()
    texts, field = [t.text for t in sources], ("text" if req.text is not None else "texts")
    try:
        search = translator.search_settings(beam=req.beam, n_best=req.n_best, coverage_penalty=req.coverage_penalty,
                                             sampling=req.sample)
    except SettingsError as exc:
        raise ServeError(422, "invalid_request", str(exc), field=exc.field) from None
    checks.check(texts, field, settings, blank=True)
    checks.check_search(search, settings)
    prefixes = checks.prefixes(req, len(texts), settings) or [""] * len(texts)
    if search.sampling is not None and any(t.constraints or t.avoid for t in sources):
        raise ServeError(422, "invalid_request", "constraints go with beam search, not sampling", field="sample")
    part = [clean_source(Source(text, prefix, tuple(t.constraints), tuple(t.avoid)))  # NFC, no soft hyphens
            for text, prefix, t in zip(texts, prefixes, sources)]
    if req.text_handling.translate_attributes and req.markup != "html":
        raise ServeError(422, "invalid_request", "translate_attributes translates HTML's attributes: give "
                         "\"markup\": \"html\" too", field="text_handling.translate_attributes")
    if req.markup is not None:
        lines, marked = part, read_texts(translator, texts, req.markup)
        part = unit_sources(lines, marked)
    owner = [n for n, m in enumerate(marked) for _ in m.units] if req.markup is not None else range(len(part))
    if req.glossary:
        part = await run_in_threadpool(lambda: _with_glossary(translator, req, part))
    segs = await run_in_threadpool(lambda: segment_lines(translator, part, req.text_handling))
    checks.check_units([s.units for s in segs], field, search.max_src_len, lambda i: _where(field, owner[segs[i].line]))
    prefix_units = await run_in_threadpool(lambda: translator.prefix_units([s.prefix for s in segs]))
    wanted = [(tuple(s.constraints), tuple(s.avoid)) for s in segs]
    found = await _submit(batcher, settings, list(zip([s.units for s in segs], prefix_units, wanted)),
                          translating(search))
    results = await run_in_threadpool(lambda: finish(translator, part, segs, found, alignments=req.markup is not None))
    if req.markup is not None:
        results = with_errors_named(await run_in_threadpool(lambda: assemble(translator, marked, results)), field)
    notes = [list(m.page.warnings) for m in marked] if req.markup is not None else [[] for _ in results]
    for note, text in zip(notes, texts if req.markup is None else ()):
        if kinds := markup_kinds(text):  # read as words, which the model translates badly: say so
            note.append(f"holds markup ({', '.join(kinds[:3])}), read as words: send \"markup\": \"html\" or \"xml\"")
    return _response(translator, search, results, req.return_attention, req.text_handling, notes)


async def _score(req: ScoreRequest, translator, batcher: Batcher, settings: ServeSettings) -> ScoreResponse:
    if not translator.can_score:
        raise ServeError(501, "not_supported", "scoring reads the PyTorch model; this server runs "
                         f"the {type(translator.model).__name__} backend")
    one = req.pairs is None
    pairs = [(req.source, req.target)] if one else [(p.source, p.target) for p in req.pairs]
    field = "source" if one else "pairs"
    where = lambda i: field if one else f"pairs[{i}].source"  # noqa: E731
    checks.check([src for src, _ in pairs], field, settings, where=where)
    checks.check_targets([tgt for _, tgt in pairs], one, settings)
    units = await run_in_threadpool(lambda: [translator.source_units(src) for src, _ in pairs])
    checks.check_units(units, field, translator.decode_cfg.max_src_len, where)
    scores = await _submit(batcher, settings, pairs, scoring(req.return_units or req.return_attention))
    return ScoreResponse(model=translator.name, scores=[_pair_score(s, req) for s in scores])


def _pair_score(s, req: ScoreRequest) -> PairScore:
    extra = {}
    if req.return_units:
        extra.update(tokens=list(s.tokens), unit_logprobs=[round(x, 6) for x in s.unit_logprobs])
    if req.return_units or req.return_attention:
        extra.update(source_tokens=list(s.source_tokens))
    if req.return_attention and s.attention is not None:
        extra.update(attention=[[round(float(a), 4) for a in row] for row in s.attention])
    return PairScore(logprob=s.logprob, units=s.units, per_unit=s.per_unit, unknown=s.unknown, **extra)


async def _submit(batcher: Batcher, settings: ServeSettings, items: list, key: tuple) -> list:
    if len(items) > settings.max_queue:  # it would be "busy" for ever: a 503 to retry that could never succeed
        raise ServeError(413, "max_queue", f"this request holds {len(items)} sentences, more than the server's queue "
                         f"takes ({settings.max_queue}): send fewer texts or shorter ones", "max_queue", settings.max_queue)
    try:
        return await batcher.submit(items, key)
    except Overloaded:
        raise ServeError(503, "max_queue", f"the server is busy: {batcher.queued} sentences are waiting",
                         "max_queue", settings.max_queue) from None
    except TimedOut:
        raise ServeError(503, "timeout_s", f"no answer within {settings.timeout_s} s", "timeout_s",
                         settings.timeout_s) from None
    except ShuttingDown:
        raise ServeError(503, "draining", "the server stopped before this request was translated: send it again") \
            from None
    except ClientGone:  # no one reads the answer; counted in the metrics as client_gone
        raise ServeError(499, "client_gone", "the client closed the connection: its sentences left the queue") from None














def _with_glossary(translator, req: TranslateRequest, part: list) -> list:
    """Each text as a Source with the request's glossary terms its source holds (text/glossary.py)."""
    from rnnsearch.text.glossary import apply, entries
    given: dict[str, str] = {}
    for n, t in enumerate(req.glossary):  # House and house are two terms (a name's and a word's)
        if given.setdefault(t.source.strip(), t.target) != t.target:
            raise ServeError(422, "invalid_request", f"{t.source!r} is given {t.target!r} here and "
                             f"{given[t.source.strip()]!r} before: keep one", field=f"glossary[{n}]")
    glossary = entries(translator, [(t.source, t.target) for t in req.glossary])
    return [apply(translator, glossary, s) for s in part]


def _response(translator, search, results, with_attention: bool, handling, notes: list[list[str]]) -> TranslateResponse:
    """The response: each translation with its confidence and its warnings (``notes``: each text's
    faults of markup read through, to which a confidence below ``handling.min_confidence`` and the
    source words below ``handling.min_coverage`` and a length ratio below ``handling.min_length_ratio`` are
    added)."""
    from rnnsearch.text.confidence import doubts

    def attention(r):
        if not with_attention or r.attention is None:
            return None
        return [[round(float(a), 4) for a in row] for row in r.attention]

    out = []
    for r, warnings in zip(results, notes):
        c, more = doubts(r, translator.src_codec, handling, str)
        warnings = warnings + more
        out.append(Translation(text=r.text, tokens=r.tokens, source_tokens=r.source_tokens, score=r.score,
                               nbest=[Hypothesis(text=h.text, tokens=h.tokens, score=h.score) for h in r.nbest],
                               attention=attention(r), error=r.error, constraints_met=r.constraints_met,
                               confidence=None if c is None else c.as_dict(), warnings=warnings))
    return TranslateResponse(model=translator.name, beam=search.beam, sample=search.sampling, translations=out)


def _health(translator, settings: ServeSettings, metrics: Metrics, checkpoint, draining: bool) -> HealthResponse:
    cfg = translator.config
    m, d = cfg.model, cfg.decode
    summary = ModelSummary(arch=m.arch, emb=m.emb, enc_hidden=m.enc_hidden, dec_hidden=m.dec_hidden, att=m.att,
                           maxout=m.maxout, src_lang=cfg.data.src_lang, tgt_lang=cfg.data.tgt_lang,
                           vocab={"mode": translator.src_codec.mode, "src": len(translator.src_codec.vocab),
                                  "tgt": len(translator.tgt_codec.vocab)},
                           beam=d.beam, max_src_len=d.max_src_len)
    return HealthResponse(status="draining" if draining else "ok", version=__version__, model=translator.name,
                          checkpoint=checkpoint, config=summary,
                          parameters=sum(p.numel() for p in translator.model.parameters()),
                          device=str(translator.device), attention=m.arch == "rnnsearch", score=translator.can_score,
                          settings=settings.limits(), uptime_s=round(metrics.uptime(), 1))
