"""rnnsearch without its extras: the core imports and translates with none of the serve, plot,
onnx and tensorboard packages importable, and each command that needs one stops with one line
naming ``pip install 'rnnsearch[EXTRA]'``. Each case runs in a fresh interpreter whose import
system refuses those packages, as a ``pip install rnnsearch`` without extras would have it."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rnnsearch.extras import EXTRAS, MissingExtra, missing, require

pytestmark = pytest.mark.slow  # each test starts Python afresh with packages hidden

CHECKPOINT = Path(__file__).resolve().parents[1] / "fixtures" / "checkpoint_2026_11_22" / "last.pt"
BLOCKED = sorted({m for modules in EXTRAS.values() for m in modules} | {"starlette"})

RUNNER = textwrap.dedent("""
    import importlib.abc, json, sys
    blocked = set(json.loads(sys.argv[1]))

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, Refuse())
    from rnnsearch.cli import main
    code = main(json.loads(sys.argv[2]))
    assert not blocked & {m.split(".")[0] for m in sys.modules}, "an extra's package was imported"
    sys.exit(code)
""")


def run_without_extras(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUNNER, json.dumps(BLOCKED), json.dumps(argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_translate_and_score_run_without_any_extra(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("the dog sees a cat .\na small house .\n", encoding="utf-8")
    done = run_without_extras(["translate", str(CHECKPOINT), "--input", str(source), "--beam", "3"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    done = run_without_extras(["evaluate", str(CHECKPOINT), "--src", str(source), "--ref", str(source)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "sacreBLEU signature" in done.stdout


@pytest.mark.parametrize("argv, extra", [
    (["serve", "CKPT"], "serve"),
    (["plot-alignment", "CKPT", "--sentence", "a dog .", "--out", "a.png"], "plot"),
    (["evaluate", "CKPT", "--src", "in.txt", "--ref", "in.txt", "--plot", "p.png"], "plot"),
    (["export", "CKPT", "--out", "exported"], "onnx"),
    (["translate", "CKPT", "--input", "in.txt", "--backend", "onnx"], "onnx"),
    (["translate-file", "CKPT", "in.txt", "out.txt"], "files"),
])
def test_a_command_that_needs_a_missing_extra_names_it_in_one_line(tmp_path, argv, extra):
    (tmp_path / "in.txt").write_text("a dog .\n", encoding="utf-8")
    done = run_without_extras([str(CHECKPOINT) if a == "CKPT" else a for a in argv], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'rnnsearch[{extra}]'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]  # nothing written


def test_require_names_the_missing_modules(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert missing("serve") == ["uvicorn"]
    with pytest.raises(MissingExtra, match=r"needs the 'serve' extra \(uvicorn not installed\)"):
        require("serve", "rnnsearch serve")
    require("plot", "a figure")  # installed here (make test installs every extra)
