"""Gathers concurrent requests into batches for the model, off the event loop.

Each request becomes a ``Job``: its sentences (source units to translate, each with the units its
output must begin with, or (source, target) pairs to score) and a key naming the work
(``translating(settings)`` or ``scoring(details)``). One collector task takes the
waiting jobs (after a short window, or at once when ``max_batch`` sentences wait), groups them by
key and runs each group as one call of
``Translator.translate_units`` or ``Translator.score`` in a single worker thread, so the event
loop keeps answering and the model does one thing at a time. With batching off every job runs on
its own; so does every sampling job with a seed, whose draws then depend on its request alone.
"""
from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rnnsearch.serve.metrics import Metrics
from rnnsearch.runtime import release_free_memory
from rnnsearch.serve.settings import ServeSettings


TRIM_EVERY_S = 10.0  # at most this often, between two searches: malloc_trim (runtime.release_free_memory)


class Overloaded(Exception):
    """The queue holds ``max_queue`` sentences already."""


class TimedOut(Exception):
    """A request waited longer than ``timeout_s``."""


class ShuttingDown(Exception):
    """The server stopped before the request's sentences were translated (a drain that ran out of time)."""


class ClientGone(Exception):
    """The client closed its connection while its request waited: its sentences left the queue."""


CLIENT_GONE: contextvars.ContextVar = contextvars.ContextVar("client_gone", default=None)  # the request's
# ``is_disconnected`` (an endpoint sets it), read while its job waits
POLL_S = 0.5  # how often a waiting job asks whether its client is still there


def scoring(details: bool = False) -> tuple:
    """The key of a scoring job; ``details``: with each unit's log-probability and the attention."""
    return ("score", details)



def translating(settings) -> tuple:
    """The key of a translation job, with its resolved SearchSettings: jobs with equal keys share searches."""
    return ("translate", settings)


@dataclass(eq=False)
class Job:
    items: list   # per sentence: (source units, prefix units, (constraints, avoid)) to translate,
    #               or (source, target) to score
    key: tuple
    future: asyncio.Future

    @property
    def alone(self) -> bool:
        """Seeded sampling: the draws must not depend on which other requests share the batch."""
        sampling = self.key[1].sampling if self.key[0] == "translate" else None
        return sampling is not None and sampling.seed is not None


class Batcher:
    def __init__(self, translator, settings: ServeSettings, metrics: Metrics):
        self.translator = translator
        self.settings = settings
        self.metrics = metrics
        self.queue: deque[Job] = deque()
        self.queued = 0  # sentences in self.queue
        self._arrived: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._running: list[Job] = []  # the jobs of the batch the model is on

    def start(self) -> None:
        """At the app's startup (each time: an app can be started again after a shutdown)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rnnsearch-search")
        self._arrived = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._executor.shutdown(wait=True)
        self.abort()

    def abort(self) -> None:
        """Every waiting and running job fails with ShuttingDown (its request answers 503), the queue emptied."""
        for job in [*self.queue, *self._running]:
            if not job.future.done():
                job.future.set_exception(ShuttingDown())
        self.queue.clear()
        self.queued = 0

    async def submit(self, items: list, key: tuple):
        """The results for ``items`` (translations, or scores with a ``scoring`` key), in order; raises
        Overloaded or TimedOut."""
        s = self.settings
        if self.queued + len(items) > s.max_queue:
            raise Overloaded()
        job = Job(items, key, asyncio.get_running_loop().create_future())
        self.queue.append(job)
        self.queued += len(items)
        self._arrived.set()
        loop, gone = asyncio.get_running_loop(), CLIENT_GONE.get()
        deadline = loop.time() + s.timeout_s
        while True:
            wait = deadline - loop.time()
            try:
                return await asyncio.wait_for(asyncio.shield(job.future), min(wait, POLL_S) if gone else wait)
            except asyncio.TimeoutError:
                if loop.time() >= deadline:
                    self._abandon(job)
                    raise TimedOut() from None
                if await gone():  # a client that left: its sentences are no one's to wait for
                    self._abandon(job)
                    raise ClientGone() from None

    def _abandon(self, job: Job) -> None:
        """A timed-out job leaves the queue at once, so its sentences stop counting against max_queue."""
        for i, queued in enumerate(self.queue):
            if queued is job:
                del self.queue[i]
                self.queued -= len(job.items)
                return

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        trimmed = loop.time()
        while True:
            if loop.time() - trimmed >= TRIM_EVERY_S:  # hand the heap's free pages back, between searches
                await loop.run_in_executor(self._executor, release_free_memory)
                trimmed = loop.time()
            if not self.queue:
                self._arrived.clear()
                await self._arrived.wait()
            if self.settings.batching:
                await self._wait_for_company(loop)
            jobs = self._take()
            for group in _groups(jobs):
                await self._work(loop, group)

    async def _wait_for_company(self, loop) -> None:
        """Wait up to the window for ``max_batch`` sentences."""
        deadline = loop.time() + self.settings.window_ms / 1000.0
        while self.queued < self.settings.max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                return

    def _take(self) -> list[Job]:
        """The next batch: whole jobs up to max_batch sentences (at least one job)."""
        limit = self.settings.max_batch if self.settings.batching else 1
        jobs, size = [], 0
        while self.queue and (not jobs or (self.settings.batching and size + len(self.queue[0].items) <= limit)):
            job = self.queue.popleft()
            self.queued -= len(job.items)
            jobs.append(job)
            size += len(job.items)
        return jobs

    def _call(self, key: tuple, items: list) -> list:
        """The model's work for one group, in the worker thread."""
        if key[0] == "score":
            return self.translator.score([src for src, _ in items], [tgt for _, tgt in items], details=key[1])
        return self.translator.translate_units([units for units, _, _ in items], key[1],
                                               [prefix for _, prefix, _ in items],
                                               constraints=[wanted for _, _, wanted in items])

    async def _work(self, loop, jobs: list[Job]) -> None:
        items, key = [x for job in jobs for x in job.items], jobs[0].key
        self._running = jobs
        try:
            results = await loop.run_in_executor(self._executor, lambda: self._call(key, items))
        except Exception as exc:  # the model failed: every request of the batch gets the error
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(exc)
            return
        finally:
            self._running = []
        if key[0] == "score":
            self.metrics.record_scoring(len(items))
        else:
            self.metrics.record_search(len(items))
        start = 0
        for job in jobs:
            if not job.future.done():
                job.future.set_result(results[start:start + len(job.items)])
            start += len(job.items)


def _groups(jobs: list[Job]) -> list[list[Job]]:
    """Jobs with the same key, in order of arrival of each group's first job; a job that must run
    alone (``Job.alone``) is a group of its own."""
    groups: dict[object, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job if job.alone else job.key, []).append(job)
    return list(groups.values())
