"""The package's layout: stages import downward only, every module says its role, and files and
functions stay small (exceptions carry a comment saying why)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "rnnsearch"
# the pipeline, bottom up: a module may import its own stage and the stages before it
STAGES = ["errors", "config", "checkpoint", "data", "model", "decoding", "text", "analysis", "training", "serve", "cli"]
RANK = {name: rank for rank, name in enumerate(STAGES)}
RANK["checkpoint"] = RANK["config"]  # both are formats every stage reads; neither imports the other
# the CPU, the install, whole-or-absent folders, the process's malloc and denormals: any stage
RANK["cpu"] = RANK["extras"] = RANK["files"] = RANK["runtime"] = RANK["errors"]
MODULES = sorted(p for p in SRC.rglob("*.py"))


def stage(module: str) -> str | None:
    """``rnnsearch.data.io`` -> ``data``; the package root and ``__main__`` have no stage."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "rnnsearch" and parts[1] != "__main__" else None


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):  # lazy imports inside functions count too
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import (the package imports absolutely)"
            base = node.module or ""
            for alias in node.names:  # from rnnsearch import checkpoint: the submodule is what counts
                out.append((node.lineno, f"{base}.{alias.name}" if base == "rnnsearch" else base))
    return out


def test_every_module_is_in_a_stage():
    for path in MODULES:
        name = module_name(path)
        if stage(name) is not None or name not in ("rnnsearch", "rnnsearch.__main__"):
            assert stage(name) in RANK, f"{path}: not in a stage of {STAGES}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_stages_import_downward_only(path):
    here = stage(module_name(path))
    if here is None:  # the package root and __main__ may reach anything
        return
    for line, target in imported(ast.parse(path.read_text(encoding="utf-8"))):
        there = stage(target)
        if target.split(".")[0] != "rnnsearch" or there is None or target == "rnnsearch.__version__":
            continue
        assert RANK[there] <= RANK[here], f"{path.relative_to(SRC)}:{line}: {here} imports {target} ({there})"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_modules_say_their_role_and_stay_small(path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert ast.get_docstring(tree), f"{path}: no module docstring"
    lines = text.splitlines()
    assert len(lines) <= 300 or "# long file:" in text, f"{path}: {len(lines)} lines"
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            why = "# long function:" in "\n".join(lines[node.lineno - 1:node.end_lineno])
            assert length <= 60 or why, f"{path}:{node.lineno}: {node.name} has {length} lines"


def test_the_command_line_imports_no_web_stack_until_serve_runs():
    """Training, translating and reporting run where FastAPI is not installed (a GPU machine's
    image): building the CLI, serve's flags included, imports neither FastAPI nor uvicorn."""
    import subprocess
    import sys
    code = ("import sys, rnnsearch.cli as c; c.build_parser(); "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_checkpoints_enter_git_only_as_releases():
    """A clone stays small: every tracked checkpoint is a release under models/ or a test fixture
    (training snapshots stay off git; docs/training.md)."""
    import subprocess
    root = SRC.parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout: nothing tracked to check")
    tracked = subprocess.run(["git", "ls-files", "*.pt", "*.pth", "*.bin", "*.safetensors", "*.onnx"], cwd=root,
                             capture_output=True, text=True, check=True).stdout.split()
    strays = [p for p in tracked if not p.startswith(("models/", "tests/fixtures/"))]
    assert tracked and not strays, f"checkpoints outside models/ and tests/fixtures/: {strays}"


def test_the_layout_page_names_every_file_under_src():
    """docs/layout.md lists each module in its own folder's entry (``  data/  io.py ...``)."""
    readme = (SRC.parents[1] / "docs" / "layout.md").read_text(encoding="utf-8")
    block = readme[readme.index("```\nsrc/rnnsearch/"):]
    block = block[:block.index("```", 4)]
    sections, current = {"": ""}, ""
    for line in block.splitlines()[2:]:
        if line.startswith("  ") and not line.startswith("   "):  # "  data/    io.py ..." or "  errors.py ..."
            head = line.split()[0]
            current = head[:-1] if head.endswith("/") else ""
        elif not line.startswith(" "):
            break  # benchmarks/, experiments/, ...: past src/
        sections[current] = sections.get(current, "") + " " + line
    for path in MODULES:
        folder = path.parent.relative_to(SRC).as_posix() if path.parent != SRC else ""
        assert path.name in sections.get(folder, ""), f"docs/layout.md does not name {path.relative_to(SRC)}"
