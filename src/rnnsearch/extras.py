"""The optional parts of rnnsearch and the packages each needs (pyproject.toml's extras).

``pip install rnnsearch`` trains, translates, evaluates and scores; ``rnnsearch[serve]`` adds the
HTTP server, ``rnnsearch[plot]`` the figures, ``rnnsearch[onnx]`` export and its back end,
``rnnsearch[tensorboard]`` training curves, ``rnnsearch[files]`` ``translate-file``'s formats. A
command that needs a missing extra stops with one line naming it (exit 2), before it has read or
written anything.
"""
from __future__ import annotations

import importlib.util

from rnnsearch.errors import UserError

EXTRAS = {
    "serve": ("fastapi", "fastapi_offline", "uvicorn", "prometheus_client", "py3langid"),
    "plot": ("matplotlib",),
    "onnx": ("onnx", "onnxruntime"),
    "tensorboard": ("tensorboard",),
    "files": ("translate", "docx", "pysrt", "webvtt", "py3langid"),  # lxml too, which sacrebleu needs anyway
}


class MissingExtra(UserError):
    """A command needs an optional part of rnnsearch that is not installed."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    absent = []
    for module in EXTRAS[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                absent.append(module)
        except (ImportError, ValueError):  # a parent package missing, or a module set to None in sys.modules
            absent.append(module)
    return absent


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` naming ``pip install rnnsearch[extra]`` when ``extra`` is incomplete."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(f"{what} needs the '{extra}' extra ({', '.join(absent)} not installed): "
                           f"pip install 'rnnsearch[{extra}]'")
