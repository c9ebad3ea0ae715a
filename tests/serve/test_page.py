"""The web page in a real headless Chromium (Debian's package, driven by Playwright): type a
sentence, submit, wait for the translation, check the heatmap has one cell per (output token,
source token), that hovering highlights, that sampling and scoring a translation of one's own
work, and that the page asks nothing of any other host."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from rnnsearch.decoding.settings import SearchSettings
from rnnsearch.decoding.source import Source

CHROMIUM = os.environ.get("RNNSEARCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
pytestmark = pytest.mark.slow


def _need_browser():
    """Skip (with the reason) where there is no browser; CI sets RNNSEARCH_REQUIRE_BROWSER=1 to fail instead."""
    problem = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "playwright is not installed (pip install -e '.[test]')"
    if problem is None and not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        problem = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if problem:
        if os.environ.get("RNNSEARCH_REQUIRE_BROWSER") == "1":
            pytest.fail(problem)
        pytest.skip(problem)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(checkpoint: Path, port: int, *extra: str, more: tuple = ()) -> subprocess.Popen:
    """`rnnsearch serve` in a subprocess (``more``: models after the first); returns once /health answers."""
    proc = subprocess.Popen([sys.executable, "-m", "rnnsearch", "serve", str(checkpoint), *more, "--port", str(port),
                             "--log-level", "warning", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"rnnsearch serve exited with {proc.returncode}: {proc.stdout.read()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("rnnsearch serve did not answer /health within 120 s")


def submit(page, field: str, value: str, button: str, status: str, done: str) -> None:
    """Fill ``field``, press ``button`` and wait until element ``status`` says ``done``."""
    page.fill(field, value)
    page.click(f"#{button}")
    page.wait_for_function(f"document.getElementById('{status}').textContent.includes('{done}')", timeout=60000)


def drive_page(url: str, sentence: str, target: str, prefix: str, screenshot: Path) -> dict:
    """Open the page, translate ``sentence``, hover, screenshot, sample, score ``target`` as a
    translation of it, then translate it again starting with ``prefix``; returns what the checks
    need."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            requested = []
            page.on("request", lambda request: requested.append(request.url))
            page.goto(url)
            page.wait_for_function("document.getElementById('model-info').textContent.includes('parameters')")
            page.fill("#source", sentence)
            page.click("#submit")
            page.wait_for_selector("#heatmap td.cell", timeout=60000)
            found = {
                "translation": page.inner_text("#translation"),
                "nbest": page.locator("#nbest li").count(),
                "rows": page.locator("#heatmap th.out").count(),
                "cols": page.locator("#heatmap th.src").count(),
                "cells": page.locator("#heatmap td.cell").count(),
                "out_tokens": page.locator("#heatmap th.out").all_inner_texts(),
                "src_tokens": page.locator("#heatmap th.src").all_inner_texts(),
            }
            page.hover('#heatmap th.src[data-col="0"]')
            found["hover_source"] = page.locator("#heatmap th.out.hl").count()
            found["hover_source_self"] = page.locator('#heatmap th.src.hl[data-col="0"]').count()
            page.hover('#heatmap th.out[data-row="0"]')
            found["hover_output"] = page.locator("#heatmap th.src.hl").count()
            found["hover_output_rows"] = page.locator("#heatmap th.out.hl").count()
            page.mouse.move(0, 0)
            found["after_leave"] = page.locator("#heatmap .hl").count()
            page.hover('#heatmap th.out[data-row="0"]')
            page.screenshot(path=str(screenshot), full_page=True)
            page.check("#sample")  # then the same sentence sampled: n-best draws at a temperature
            submit(page, "#temperature", "1.5", "submit", "status", "sampled")
            found["sampled_status"] = page.inner_text("#status")
            found["sampled_nbest"] = page.locator("#nbest li").count()
            found["sampled_cells"] = page.locator("#heatmap td.cell").count()
            # then a translation of one's own, scored and aligned
            submit(page, "#target", target, "score-submit", "score-status", "scored")
            found["scored_summary"] = page.inner_text("#score-summary")
            found["scored_units"] = page.locator("#units span").all_inner_texts()
            found["scored_rows"] = page.locator("#heatmap th.out").count()
            found["scored_cells"] = page.locator("#heatmap td.cell").count()
            found["scored_nbest_hidden"] = page.is_hidden("#nbest-part")
            page.uncheck("#sample")  # then searched again, completing a prefix
            submit(page, "#prefix", prefix, "submit", "status", "done (beam")
            found["prefixed"] = page.inner_text("#translation")
            found["prefixed_nbest"] = page.locator("#nbest li").all_inner_texts()
            found["requested"] = requested
            return found
        finally:
            browser.close()


TARGET = "Le gros chien voit un chat ."
PREFIX = "Un chat"


def test_page_translates_and_heatmap_highlights(trained_run, tmp_path):
    _need_browser()
    port = free_port()
    server = start_server(trained_run / "best.pt", port)
    try:
        sentence = "The big dog sees a small cat ."
        found = drive_page(f"http://127.0.0.1:{port}/", sentence, TARGET, PREFIX, tmp_path / "page.png")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics.json") as r:
            import json
            metrics = json.load(r)
    finally:
        server.terminate()
        server.wait(30)
    from rnnsearch.decoding.translator import Translator
    translator = Translator.from_checkpoint(trained_run / "best.pt")
    expected = translator.translate([sentence], SearchSettings(beam=3, n_best=3))[0]
    [scored] = translator.score([sentence], [TARGET], details=True)
    [prefixed] = translator.translate([Source(sentence, PREFIX)], SearchSettings(beam=3, n_best=3))
    assert found["translation"] == expected.text
    assert found["nbest"] == 3  # the page asks for min(5, beam) of the model's beam 3
    assert found["rows"] == len(expected.tokens) + 1 and found["cols"] == len(expected.source_tokens)
    assert found["cells"] == found["rows"] * found["cols"]
    assert found["out_tokens"] == expected.tokens + ["</s>"] and found["src_tokens"][-1] == "</s>"
    assert found["hover_source"] >= 1 and found["hover_source_self"] == 1
    assert found["hover_output"] >= 1 and found["hover_output_rows"] == 1
    assert found["after_leave"] == 0
    assert (tmp_path / "page.png").read_bytes()[:4] == b"\x89PNG"
    base = f"http://127.0.0.1:{port}/"
    assert found["requested"] and all(u.startswith(base) for u in found["requested"]), found["requested"]
    assert found["sampled_status"] == "done (3 sampled at temperature 1.5)" and found["sampled_nbest"] == 3
    assert found["sampled_cells"] > 0
    assert found["scored_units"] == list(scored.tokens) + ["</s>"] and found["scored_nbest_hidden"]
    assert found["scored_summary"].startswith(f"log p = {scored.logprob:.3f} over {scored.units} units")
    assert found["scored_rows"] == scored.units and found["scored_cells"] == scored.units * found["cols"]
    assert found["prefixed"] == prefixed.text and prefixed.text.startswith(PREFIX)
    assert len(found["prefixed_nbest"]) == 3 and all(t.startswith(PREFIX) for t in found["prefixed_nbest"])
    assert metrics["responses_by_status"].get("200", 0) >= 5 and metrics["errors"] == 0
    assert metrics["pairs_scored"] == 1
