"""LibreTranslate's HTTP API beside rnnsearch's own, so that its clients (libretranslatepy,
deep-translator, browser extensions, CAT-tool plug-ins) work unchanged: ``POST /translate`` with
``q`` (a string or a list), ``source`` (a code, or ``auto``), ``target``, ``format`` (text or html),
``alternatives`` and ``api_key``, sent as JSON, as a form or as query parameters; ``GET /languages``;
``POST /detect``; ``GET /frontend/settings``; ``POST /translate_file`` (refused as LibreTranslate refuses
it where files are off). Answers and errors are LibreTranslate's: ``{"translatedText", "alternatives",
"detectedLanguage"}``, ``{"error": ...}`` with 400, 403, 429 and 500.

``/translate`` is rnnsearch's own route too: a request is LibreTranslate's when it is a form, or has
``q`` in its query or its JSON (serve/guard.py sends it to ``/libretranslate/translate``). Each
(source, target) pair is served by the model that translates it (``rnnsearch serve MODEL [MODEL ...]``).
"""
from __future__ import annotations

import json
import re
from functools import cache
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from rnnsearch.serve.access import Access
from rnnsearch.serve.batcher import CLIENT_GONE
from rnnsearch.serve.errors import ServeError
from rnnsearch.serve.schemas import TranslateRequest
from rnnsearch.text.documents import markup_kinds

PATH = "/libretranslate/translate"  # where a LibreTranslate request to /translate is sent
LT_ONLY = {"source", "target", "format", "alternatives"}  # JSON with one of these and no text(s): LibreTranslate's


def is_libretranslate(scope, body: bytes) -> bool:
    """Whether a ``POST /translate`` is LibreTranslate's: a form, ``q`` in the query, or ``q`` in its JSON."""
    headers = dict(scope.get("headers") or [])
    kind = headers.get(b"content-type", b"").decode("latin-1").lower()
    if "q" in parse_qs(scope.get("query_string", b"").decode("latin-1")) or "form" in kind:
        return True
    try:
        row = json.loads(body or b"null")
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: rnnsearch's route says so
        return False
    return isinstance(row, dict) and ("q" in row or not {"text", "texts"} & set(row) and bool(LT_ONLY & set(row)))


@cache
def language_name(code: str) -> str:
    """English's name of a language code (Babel: 'fr' -> 'French')."""
    from babel import Locale, UnknownLocaleError
    try:
        return Locale.parse(code).get_display_name("en").capitalize()
    except (UnknownLocaleError, ValueError):
        return code


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def params(request: Request) -> dict:
    """The request's parameters, as LibreTranslate reads them: its JSON, or its form and query."""
    if "json" in request.headers.get("content-type", "").lower():
        try:
            row = json.loads(await request.body() or b"null")
        except (ValueError, RecursionError):
            row = None
        if not isinstance(row, dict):
            raise ServeError(400, "malformed_json", "Invalid JSON format")
        return row
    pairs = list(request.query_params.multi_items())
    kind = request.headers.get("content-type", "")
    try:  # bytes that are not UTF-8 are refused, as in JSON (read with replacement, "The%FF%FEHouse" lost "House")
        if "multipart/form-data" in kind.lower():
            pairs += _multipart(kind, await request.body())
        elif "form" in kind.lower():  # in its declared charset, else UTF-8 (a form's own default)
            charset = re.search(r"charset=\"?([\w.:-]+)", kind, re.IGNORECASE)
            body = (await request.body()).decode(_codec(charset.group(1)) if charset else "utf-8")
            pairs += [(k, v) for k, vs in parse_qs(body, keep_blank_values=True, errors="strict").items() for v in vs]
    except UnicodeDecodeError:
        raise ServeError(400, "encoding", "Invalid request: the form is not valid UTF-8 (nor the charset it "
                         "declares)") from None
    values: dict = {}
    for key, value in pairs:  # the first of a repeated parameter, as LibreTranslate (Flask) reads it; a repeated
        if key == "q" and key in values:  # q is each of its texts, none dropped
            values[key] = (values[key] if isinstance(values[key], list) else [values[key]]) + [value]
        else:
            values.setdefault(key, value)
    return values


def _codec(charset: str) -> str:
    """A declared charset as Python names it; UTF-8 where Python knows none of that name."""
    import codecs
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return "utf-8"


def _multipart(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """A multipart/form-data body's fields (name, text) in order, read by the standard library's e-mail
    parser (a file field's content as text)."""
    from email.parser import BytesParser
    from email.policy import HTTP
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode("latin-1") + body)
    if not message.is_multipart():
        raise ServeError(400, "content_type", "Invalid request: a multipart/form-data body without its boundary")
    fields = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields.append((str(name), part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8")))
    return fields


def install(app, routes: dict, settings, access: Access, translate) -> None:
    """The LibreTranslate routes over ``routes`` ({(source, target): (translator, batcher)});
    ``translate(req, translator, batcher)`` answers a TranslateRequest as rnnsearch's /translate does."""
    sources = sorted({s for s, _ in routes})

    def refused(request: Request, values: dict) -> JSONResponse | None:
        no = access.check(values.get("api_key") or None, request.client.host if request.client else "")
        if no is None:
            return None
        answer = error(*no)
        if no[0] == 429:
            answer.headers["Retry-After"] = "60"  # the limits are per minute
        return answer

    @app.post(PATH, include_in_schema=False)
    async def lt_translate(request: Request):
        try:
            values = await params(request)
        except ServeError as exc:
            return error(400, exc.body.error)
        CLIENT_GONE.set(request.is_disconnected)
        return refused(request, values) or await _translate(values, routes, sources, settings, translate)

    @app.get("/languages", tags=["LibreTranslate"])
    async def languages() -> list[dict]:
        """Each source language with the target languages it is translated into (LibreTranslate's)."""
        return [{"code": s, "name": language_name(s), "targets": sorted(t for a, t in routes if a == s)}
                for s in sources]

    @app.post("/detect", tags=["LibreTranslate"])
    async def detect(request: Request):
        """The languages the text may be in, the likeliest first, among those this server translates from or into."""
        try:
            values = await params(request)
        except ServeError as exc:
            return error(400, exc.body.error)
        if not values.get("q"):
            return error(400, "Invalid request: missing q parameter")
        return refused(request, values) or [{"confidence": round(100 * p, 1), "language": code}
                                            for code, p in detected(str(values["q"]), known(routes))]

    @app.get("/frontend/settings", tags=["LibreTranslate"])
    async def frontend_settings() -> dict:
        """What a LibreTranslate front end reads before it asks anything."""
        first = next(iter(routes))
        return {"charLimit": settings.max_chars, "frontendTimeout": 500, "apiKeys": access.keys_on,
                "keyRequired": False, "suggestions": False, "filesTranslation": False, "supportedFilesFormat": [],
                "language": {"source": {"code": first[0], "name": language_name(first[0])},
                             "target": {"code": first[1], "name": language_name(first[1])}}}

    @app.post("/translate_file", tags=["LibreTranslate"])
    async def translate_file():
        """Files are not translated through this API (``rnnsearch translate-file`` is the command's)."""
        return error(403, "Files translation are disabled on this server.")

    @app.post("/suggest", tags=["LibreTranslate"])
    async def suggest():
        """Suggestions are not taken (``"suggestions": false`` in /frontend/settings), as LibreTranslate answers."""
        return error(403, "Suggestions are disabled on this server.")


def known(routes: dict) -> tuple[str, ...]:
    """The languages this server reads or writes: where a text is in one, which (a server of en->fr alone detected
    among all of py3langid's, and answered "br is not supported" for "Hello"; a French text now reads as fr, which
    it does not translate from, rather than as English)."""
    return tuple(sorted({lang for pair in routes for lang in pair}))


def detected(text: str, languages: tuple[str, ...]) -> list[tuple[str, float]]:
    """(language, probability) for each of ``languages``, the likeliest first (py3langid: text/language.py)."""
    from rnnsearch.text.language import ranked
    return ranked(text, languages)


def _auto(texts: list[str], routes: dict) -> list[tuple[str | None, float]]:
    """Each text's language for ``source=auto``, the likeliest of those served (a batch of an English and a French
    text went whole to the Fr->En model); None for a text of no letters but a URL's or an e-mail address's (a
    number, a URL, an emoji), which comes back as it is, as LibreTranslate's does (it was refused: "English is not
    available as a target language from English")."""
    words = [ADDRESSES.sub(" ", text) for text in texts]
    return [detected(text, known(routes))[0] if any(c.isalpha() for c in w) else (None, 0.0)
            for text, w in zip(texts, words)]


ADDRESSES = re.compile(r"\S+://\S+|\S+@\S+\.\S+|www\.\S+")  # a URL or an e-mail address alone: nothing to translate


def _alternatives(values: dict, settings):
    """The number of alternatives asked for, or LibreTranslate's error answer."""
    try:
        given = values.get("alternatives") or 0
        alternatives = int(given)
        if alternatives != float(given):  # 2.5 was read as 2
            raise ValueError
    except (TypeError, ValueError):
        return error(400, "Invalid request: alternatives parameter is not a number")
    if alternatives < 0:
        return error(400, "Invalid request: alternatives parameter must be 0 or more")
    if alternatives + 1 > settings.max_beam:
        return error(400, f"Invalid request: alternatives parameter must be <= {settings.max_beam - 1}")
    return alternatives


async def _translate(values: dict, routes: dict, sources: list[str], settings, translate):
    """LibreTranslate's /translate over rnnsearch's (each text through the text stage, as ours)."""
    q, source, target = values.get("q"), values.get("source"), values.get("target")
    for name, value in (("q", q), ("source", source), ("target", target)):
        if not value:
            return error(400, f"Invalid request: missing {name} parameter")
    alternatives = _alternatives(values, settings)
    if not isinstance(alternatives, int):
        return alternatives
    form = values.get("format") or "text"
    if form not in ("text", "html"):
        return error(400, f"{form} format is not supported")
    texts = q if isinstance(q, list) else [q]
    if not all(isinstance(t, str) for t in texts):
        return error(400, "Invalid request: q must be a string or a list of strings")
    for size, limit in [(len(texts), settings.max_texts)] + [(len(t), settings.max_chars) for t in texts]:
        if size > limit:
            return error(400, f"Invalid request: request ({size}) exceeds text limit ({limit})")
    found = _auto(texts, routes) if source == "auto" else None  # each text its own language
    chosen = [f[0] for f in found] if found else [source] * len(texts)
    for lang in dict.fromkeys(c for c in chosen if c is not None):
        if lang not in sources:
            return error(400, f"{lang} is not supported")
        if (lang, target) not in routes:
            return error(400, f"{language_name(target)} ({target}) is not available as a target language from "
                              f"{language_name(lang)} ({lang})")
    out, others = list(texts), [[] for _ in texts]  # a text of no letters: as it is
    for lang in dict.fromkeys(c for c in chosen if c is not None):  # each language's texts through its model
        at = [i for i, c in enumerate(chosen) if c == lang]
        translator, batcher = routes[lang, target]
        beam = max(translator.decode_cfg.beam, alternatives + 1)
        try:
            req = TranslateRequest(texts=[texts[i] for i in at], markup="html" if form == "html" else None, beam=beam,
                                   n_best=1 if form == "html" else alternatives + 1)
            got = await translate(req, translator, batcher)
        except ServeError as exc:
            return error(exc.status if exc.status in (413, 429, 503) else 400, exc.body.error)
        except ValidationError as exc:
            return error(400, f"Invalid request: {exc.errors()[0].get('msg', 'invalid')}")
        failed = next((t.error for t in got.translations if t.error), None)
        if failed:
            return error(500, f"Cannot translate text: {failed}")
        for i, t in zip(at, got.translations):
            out[i], others[i] = t.text, [h.text for h in t.nbest[1:] if h.text != t.text]
    result = {"translatedText": out if isinstance(q, list) else out[0]}
    if alternatives:
        result["alternatives"] = others if isinstance(q, list) else others[0]
    if found is not None:
        result["detectedLanguage"] = [{"confidence": round(100 * p, 1), "language": lang or "en"} for lang, p in found] \
            if isinstance(q, list) else {"confidence": round(100 * found[0][1], 1), "language": found[0][0] or "en"}
    kinds = list(dict.fromkeys(k for t in texts for k in markup_kinds(t))) if form == "text" else []
    return JSONResponse(result, headers={"X-Rnnsearch-Warning": f"q holds markup ({', '.join(kinds[:3])}), read as "
                                         "words: send format=html"} if kinds else None)
