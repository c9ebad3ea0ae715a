"""The serve tests' shared fixture: a test client over the tiny model's app."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from rnnsearch import Translator
from rnnsearch.serve import ServeSettings, create_app


@pytest.fixture(scope="module")
def client(tiny_run):
    app = create_app(Translator.from_checkpoint(str(tiny_run / "best.pt")), ServeSettings(window_ms=1))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
