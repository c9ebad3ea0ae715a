"""rnnsearch: Bahdanau, Cho & Bengio (2014) neural machine translation on PyTorch."""
__version__ = "0.1.0"

_API = {"Translator": "rnnsearch.decoding.translator", "SearchSettings": "rnnsearch.decoding.settings",
        "Source": "rnnsearch.decoding.source", "Translation": "rnnsearch.decoding.source",
        "Sampling": "rnnsearch.decoding.sampling",
        "TextSettings": "rnnsearch.text.settings", "translate_text": "rnnsearch.text.pipeline",
        "assess": "rnnsearch.text.confidence",
        "SettingsError": "rnnsearch.decoding.settings"}


def __getattr__(name):  # lazy, so that `import rnnsearch` stays light
    if name in _API:
        import importlib
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(name)


__all__ = [*_API, "__version__"]
