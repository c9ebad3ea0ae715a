"""Running the app under uvicorn with a drain: the first SIGTERM or SIGINT stops the server from
taking new /translate and /score requests (503 with Retry-After, /health 503 "draining"), answers
every request it had accepted, waits ``linger`` seconds more (so that clients on open connections
read their 503 rather than a closed socket), then shuts down and exits 0. ``drain_s`` bounds the
wait; a second signal stops at once."""
from __future__ import annotations

import asyncio
import logging
import time

import uvicorn

log = logging.getLogger("rnnsearch.serve")


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app, drain_s: float, linger: float = 0.5):
        super().__init__(config)
        self.app, self.drain_s, self.linger = app, drain_s, linger
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets=None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig, frame) -> None:
        """Not uvicorn's: the signal is not raised again after the shutdown, so the exit status is 0."""
        if self.app.state.draining or self._loop is None:  # a second signal, or none was served yet
            self.should_exit = True
            self.force_exit = self.app.state.draining
            return
        self.app.state.draining = True
        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(self._drain()))

    async def _drain(self) -> None:
        metrics, batchers = self.app.state.metrics, self.app.state.batchers
        start = time.monotonic()
        log.warning("draining: %d request(s) in flight, %d sentence(s) queued; new requests get 503",
                    metrics.active, sum(b.queued for b in batchers))
        while (metrics.active or any(b.queued for b in batchers)) and time.monotonic() - start < self.drain_s:
            await asyncio.sleep(0.02)
        left = metrics.active
        if left:  # out of time: what is still waiting or running is answered 503 "draining", not cut off
            for b in self.app.state.batchers:
                b.abort()
        await asyncio.sleep(self.linger)
        log.warning("drained in %.1f s (%s); shutting down", time.monotonic() - start,
                    "every accepted request answered" if not left else f"{left} request(s) still open at drain_s")
        self.should_exit = True


def serve(app, host: str, port: int, log_level: str, drain_s: float, forwarded_allow_ips: str | None = None) -> None:
    """``forwarded_allow_ips``: the proxies whose X-Forwarded-For names the client (its address keys the request
    limit); None: no proxy, the connection's own address (uvicorn's default trusted 127.0.0.1, so that anything
    local could pass the limit with a header of its choice)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=drain_s,
                            proxy_headers=forwarded_allow_ips is not None, forwarded_allow_ips=forwarded_allow_ips)
    DrainingServer(config, app, drain_s).run()
