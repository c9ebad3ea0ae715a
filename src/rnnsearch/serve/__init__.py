"""``rnnsearch serve``: an HTTP API (FastAPI + uvicorn) and a web page for a checkpoint.

Concurrent requests are gathered into batches for the batched search (``batcher``); the
page at ``/`` shows the translation, the n-best list and the attention as a heatmap.
"""
from rnnsearch.serve.app import create_app
from rnnsearch.serve.settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]
