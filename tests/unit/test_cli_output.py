"""An output path the commands cannot write is one line naming it, before any work (no raw OSError)."""
from __future__ import annotations

import pytest

from rnnsearch.cli import main


@pytest.mark.parametrize("command", ["translate", "score"])
def test_an_output_in_no_folder_or_a_folder_is_one_line(command, tiny_run, tmp_path, capsys):
    (tmp_path / "in.en").write_text("the dog .\n")
    (tmp_path / "in.fr").write_text("le chien .\n")
    inputs = ["--input", str(tmp_path / "in.en")] if command == "translate" else \
        ["--src", str(tmp_path / "in.en"), "--tgt", str(tmp_path / "in.fr")]
    for out, said in ((tmp_path / "none" / "out.txt", "to write it in"), (tmp_path, "a folder; name the file to write")):
        assert main([command, str(tiny_run / "best.pt"), *inputs, "--output", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(out) in err[0] and said in err[0] and "Errno" not in err[0]
    assert not (tmp_path / "none").exists()
