"""rnnsearch: Bahdanau, Cho & Bengio (2014) neural machine translation on PyTorch."""
__version__ = "0.1.0"


def __getattr__(name):  # lazy, so that `import rnnsearch` stays light
    if name == "Translator":
        from rnnsearch.decoding.translator import Translator
        return Translator
    raise AttributeError(name)


__all__ = ["Translator", "__version__"]
