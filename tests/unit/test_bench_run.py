"""benchmarks/common.run under SIGTERM: a bench stopped while it runs a command (the command alone,
or the whole process group at once, as `kill -- -PGID` does) reports ``stopped`` instead of failing,
so a long run can be resumed; a command that fails on its own is still an error."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO

BENCH = str(REPO / "benchmarks")
RUN = ("import json, os, sys; sys.path.insert(0, {bench!r}); from pathlib import Path; from common import run; "
       "r = run([sys.executable, '-c', {child!r}], dict(os.environ), Path({log!r})); "
       "print(json.dumps(r['stopped']))")


def _bench(tmp_path, child: str) -> subprocess.Popen:
    code = RUN.format(bench=BENCH, child=child, log=str(tmp_path / "cmd.log"))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _started(tmp_path) -> None:
    for _ in range(200):
        if (tmp_path / "cmd.log").exists() and "up" in (tmp_path / "cmd.log").read_text():
            return
        time.sleep(0.05)
    raise AssertionError("the command never started")


@pytest.mark.parametrize("group", [False, True])
def test_sigterm_stops_without_a_failure(tmp_path, group):
    bench = _bench(tmp_path, "import time; print('up', flush=True); time.sleep(60)")
    _started(tmp_path)
    if group:
        os.killpg(bench.pid, signal.SIGTERM)
    else:
        bench.send_signal(signal.SIGTERM)
    out, err = bench.communicate(timeout=30)
    assert bench.returncode == 0, err
    assert json.loads(out) is True


def test_a_failing_command_is_still_an_error(tmp_path):
    bench = _bench(tmp_path, "import sys; sys.exit(3)")
    out, err = bench.communicate(timeout=30)
    assert bench.returncode != 0 and "failed (3)" in err
