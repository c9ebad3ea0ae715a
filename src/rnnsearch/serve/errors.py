"""Error responses: one JSON shape (schemas.ErrorBody) with a stable ``kind`` and a message that is
safe to show. Internal failures (a bug, the model failing) answer 500 "internal" with the request
id only; the exception, its traceback and any paths go to the server log under that id."""
from __future__ import annotations

import logging
import traceback

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from rnnsearch.serve.schemas import ErrorBody

log = logging.getLogger("rnnsearch.serve")
HTTP_KINDS = {400: "malformed_json", 404: "not_found", 405: "method_not_allowed"}


class ServeError(Exception):
    """An expected refusal: status, kind, a message naming the limit or field, and their values."""

    def __init__(self, status: int, kind: str, message: str, limit: str | None = None,
                 value: float | None = None, field: str | None = None):
        super().__init__(message)
        self.status, self.body = status, ErrorBody(error=message, kind=kind, limit=limit, value=value,
                                                  field=field)


def install(app) -> None:
    """The handlers of every error the app can answer."""
    app.add_exception_handler(ServeError, _serve_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    # any other exception reaches guard.Guard, which answers with internal_error_body()


def request_id(request: Request) -> str | None:
    return (request.scope.get("state") or {}).get("request_id")


RETRY_AFTER = {503: "1", 429: "60"}  # seconds: the queue is full for a moment; the request limits are per minute


def _error(status: int, body: ErrorBody, request: Request) -> JSONResponse:
    request.scope.setdefault("state", {})["error_kind"] = body.kind
    body = body.model_copy(update={"request_id": request_id(request)})
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status,
                        headers={"Retry-After": RETRY_AFTER[status]} if status in RETRY_AFTER else None)


async def _serve_error(request: Request, exc: ServeError) -> JSONResponse:
    return _error(exc.status, exc.body, request)


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (a body that is not UTF-8 JSON, an unknown path, a wrong method)."""
    kind = HTTP_KINDS.get(exc.status_code, f"http_{exc.status_code}")
    return _error(exc.status_code, ErrorBody(error=str(exc.detail), kind=kind), request)


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    content_type = request.headers.get("content-type", "")
    if request.method == "POST" and "json" not in content_type.lower():
        return _error(415, ErrorBody(error="send the body as JSON with 'Content-Type: application/json' "
                                           f"(got {content_type[:60] or 'no Content-Type'!r})",
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


def internal_error_body(request_id: str, exc: BaseException) -> ErrorBody:
    """The 500 answer to ``exc``, after logging it (with its traceback) under the request id."""
    log.error("request %s: internal error\n%s", request_id, "".join(traceback.format_exception(exc)).rstrip())
    return ErrorBody(error=f"internal error; the server log has the details under request id {request_id}",
                     kind="internal", request_id=request_id)
