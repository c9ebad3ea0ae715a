"""Gathers concurrent requests into batches for the batched search, off the event loop.

Each request becomes a ``Job`` (its sentences as source units, its beam and n-best). One
collector task takes the waiting jobs (after a short window, or at once when ``max_batch``
sentences wait), groups them by search settings and runs each group as one call of
``Translator.translate_units`` in a single worker thread, so the event loop keeps answering.
With batching off every job is searched on its own.
"""
from __future__ import annotations

import asyncio
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rnnsearch.serve.metrics import Metrics
from rnnsearch.training.runtime import release_free_memory
from rnnsearch.serve.settings import ServeSettings


TRIM_EVERY_S = 10.0  # at most this often, between two searches: malloc_trim (runtime.release_free_memory)


class Overloaded(Exception):
    """The queue holds ``max_queue`` sentences already."""


class TimedOut(Exception):
    """A request waited longer than ``timeout_s``."""


@dataclass
class Job:
    units: list[list[str]]
    beam: int
    n_best: int
    future: asyncio.Future


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
        for job in self.queue:
            if not job.future.done():
                job.future.set_exception(RuntimeError("the server is shutting down"))

    async def submit(self, units: list[list[str]], beam: int, n_best: int):
        """Translations for ``units``, in order; raises Overloaded or TimedOut."""
        s = self.settings
        if self.queued + len(units) > s.max_queue:
            raise Overloaded()
        job = Job(units, beam, n_best, asyncio.get_running_loop().create_future())
        self.queue.append(job)
        self.queued += len(units)
        self._arrived.set()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), s.timeout_s)
        except asyncio.TimeoutError:
            self._abandon(job)
            raise TimedOut() from None

    def _abandon(self, job: Job) -> None:
        """A timed-out job leaves the queue at once, so its sentences stop counting against max_queue."""
        for i, queued in enumerate(self.queue):
            if queued is job:
                del self.queue[i]
                self.queued -= len(job.units)
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
                await self._search(loop, group)

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
        while self.queue and (not jobs or (self.settings.batching and size + len(self.queue[0].units) <= limit)):
            job = self.queue.popleft()
            self.queued -= len(job.units)
            jobs.append(job)
            size += len(job.units)
        return jobs

    async def _search(self, loop, jobs: list[Job]) -> None:
        units = [u for job in jobs for u in job.units]
        beam, n_best = jobs[0].beam, jobs[0].n_best
        try:
            results = await loop.run_in_executor(
                self._executor, lambda: self.translator.translate_units(units, beam=beam, n_best=n_best))
        except Exception as exc:  # the model failed: every request of the batch gets the error
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(exc)
            return
        self.metrics.record_search(len(units))
        start = 0
        for job in jobs:
            if not job.future.done():
                job.future.set_result(results[start:start + len(job.units)])
            start += len(job.units)


def _groups(jobs: list[Job]) -> list[list[Job]]:
    """Jobs with the same beam and n-best, in order of arrival of each group's first job."""
    groups: dict[tuple[int, int], list[Job]] = {}
    for job in jobs:
        groups.setdefault((job.beam, job.n_best), []).append(job)
    return list(groups.values())
