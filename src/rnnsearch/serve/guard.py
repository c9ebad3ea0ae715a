"""The ASGI middleware in front of every route: a request id for every request (the client's
X-Request-ID when it is a sane token, else a new one; returned in the X-Request-ID header and in
error bodies, and written in the server log next to any internal error); the body limit, checked
before the body is read; a LibreTranslate client's /translate sent to its route
(serve/libretranslate.py); refusal of new /translate and /score requests while the server drains
(503 with Retry-After); a safe 500 for any exception the routes let through (serve/errors.py); and
the metrics of every response, with the in-flight count the drain waits on."""
from __future__ import annotations

import re
import time
import uuid

from fastapi.responses import JSONResponse

from rnnsearch.serve.errors import internal_error_body
from rnnsearch.serve.libretranslate import PATH as LIBRETRANSLATE, is_libretranslate
from rnnsearch.serve.metrics import Metrics
from rnnsearch.serve.schemas import ErrorBody

REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class Guard:
    def __init__(self, app, metrics: Metrics, max_body_bytes: int, state):
        self.app, self.metrics, self.max_body_bytes, self.state = app, metrics, max_body_bytes, state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.perf_counter(), [500]
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id

        async def tagged_send(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                scope["state"]["started"] = True
                message["headers"] = list(message.get("headers", [])) + [(b"x-request-id", request_id.encode())]
            await send(message)

        translate = scope["path"] == "/translate" and scope["method"] == "POST"
        model_work = translate or (scope["path"] == "/score" and scope["method"] == "POST")
        if model_work and getattr(self.state, "draining", False):
            body = ErrorBody(error="the server is shutting down; retry on another instance or later",
                             kind="draining", request_id=request_id)
            return await self._refuse(scope, receive, tagged_send, 503, body)
        body = await self._read_body(scope, receive)
        if body is None:
            err = ErrorBody(error=f"request body over {self.max_body_bytes} bytes", kind="max_body_bytes",
                            limit="max_body_bytes", value=self.max_body_bytes, request_id=request_id)
            return await self._refuse(scope, receive, tagged_send, 413, err)
        if translate and is_libretranslate(scope, body):  # LibreTranslate's client: its own route
            scope["path"], scope["raw_path"] = LIBRETRANSLATE, LIBRETRANSLATE.encode()
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed_receive():
            return replay.pop() if replay else await receive()

        if model_work:
            self.metrics.begin()
        try:
            await self.app(scope, replayed_receive, tagged_send)
        except Exception as exc:  # a bug or a failing model: a safe 500, the details in the log
            if scope["state"].get("started"):
                raise
            scope["state"]["error_kind"] = "internal"
            await JSONResponse(internal_error_body(request_id, exc).model_dump(exclude_none=True),
                               status_code=500)(scope, receive, tagged_send)
        finally:
            if model_work:
                self.metrics.end()
            code = status[0]
            kind = (scope["state"].get("error_kind") or f"http_{code}") if code >= 400 else None
            self.metrics.record_response(code, time.perf_counter() - start if translate else None, kind)

    async def _refuse(self, scope, receive, send, status: int, body: ErrorBody) -> None:
        headers = {"Retry-After": "1"} if status == 503 else None
        await JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)(scope, receive,
                                                                                                  send)
        self.metrics.record_response(status, None, body.kind)

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


def cors(app, settings) -> None:
    """A web page's script may call the server from ``settings.cors_origins`` (a browser's preflight OPTIONS got
    405, and no answer said Access-Control-Allow-Origin)."""
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:
        from fastapi.middleware.cors import CORSMiddleware
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["*"], allow_headers=["*"],
                           expose_headers=["X-Request-Id", "X-Rnnsearch-Warning", "Retry-After"])
