"""torch.hub entry points for rnnsearch's released models (models/ in this repository).

    import torch
    translator = torch.hub.load("path/to/rnnsearch", "hansards_enfr_rnnsearch50", source="local")
    translator.translate(["The committee met on Tuesday ."])[0].text     # beam: the release's decode.beam (12)
    torch.hub.load("path/to/rnnsearch", "released", "NAME_OR_PATH_OR_URL", source="local")

Each entry returns a ``rnnsearch.Translator`` (keyword arguments as ``Translator.from_checkpoint``:
device, backend, quantize, dtype). Names are looked up as ``Translator.from_pretrained`` does
(RNNSEARCH_MODELS, then this clone's models/).
"""
import sys
from pathlib import Path

dependencies = ["torch", "numpy", "sacrebleu", "sentencepiece", "sacremoses", "yaml", "pydantic"]

_SRC = Path(__file__).resolve().parent / "src"
if str(_SRC) not in sys.path:  # a clone that was not pip-installed
    sys.path.insert(0, str(_SRC))


def released(name: str, **kwargs):
    """Any released model: a name in models/, a release folder, a checkpoint file or a URL."""
    from rnnsearch import Translator
    return Translator.from_pretrained(name, **kwargs)


def hansards_enfr_rnnsearch50(**kwargs):
    """RNNsearch-50 trained on the Canadian Hansards En->Fr (docs/results/hansards; its model card:
    models/hansards_enfr_rnnsearch50/README.md)."""
    return released("hansards_enfr_rnnsearch50", **kwargs)


def hansards_fren_rnnsearch50(**kwargs):
    """RNNsearch-50 trained on the Canadian Hansards Fr->En (the same budget as the En->Fr one), with
    an alignment head; read with the En->Fr release as `rnnsearch align --reverse-model`
    (models/hansards_fren_rnnsearch50/README.md)."""
    return released("hansards_fren_rnnsearch50", **kwargs)


def hansards_enfr_rnnencdec50(**kwargs):
    """RNNencdec-50, the paper's baseline, trained on the Canadian Hansards En->Fr beside
    RNNsearch-50 (models/hansards_enfr_rnnencdec50/README.md)."""
    return released("hansards_enfr_rnnencdec50", **kwargs)


def hansards_enfr_rnnsearch30(**kwargs):
    """RNNsearch-30, trained on the Hansards pairs of at most 30 words each (the paper's -30 rows;
    models/hansards_enfr_rnnsearch30/README.md)."""
    return released("hansards_enfr_rnnsearch30", **kwargs)


def hansards_enfr_rnnencdec30(**kwargs):
    """RNNencdec-30, the baseline of the -30 rows, trained on the Hansards pairs of at most 30 words
    each (models/hansards_enfr_rnnencdec30/README.md)."""
    return released("hansards_enfr_rnnencdec30", **kwargs)


def hansards_enfr_rnnsearch50_guided(**kwargs):
    """RNNsearch-50 trained with guided alignment (a cross-entropy between alpha_ij and eflomal's links
    added to its objective, weight 1.0) on the Canadian Hansards En->Fr, same budget as RNNsearch-50
    (models/hansards_enfr_rnnsearch50_guided/README.md)."""
    return released("hansards_enfr_rnnsearch50_guided", **kwargs)
