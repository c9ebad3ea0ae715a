"""``rnnsearch serve``: an HTTP API (FastAPI + uvicorn) and a web page for a checkpoint.

Concurrent requests are gathered into batches for the batched search (``batcher``); the
page at ``/`` shows the translation, the n-best list and the attention as a heatmap.
"""
from rnnsearch.serve.settings import ServeSettings

__all__ = ["ServeSettings", "create_app"]


def __getattr__(name: str):
    """``create_app`` on first use: every other command's CLI (which builds serve's flags from
    ServeSettings) runs without FastAPI imported, also where it is not installed."""
    if name == "create_app":
        from rnnsearch.serve.app import create_app
        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
