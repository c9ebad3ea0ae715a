"""``python -m rnnsearch``: the command line (rnnsearch.cli)."""
from rnnsearch.cli import run

run()
