"""``rnnsearch data check``: read a parallel corpus exactly as training does and report what
was repaired and what was filtered, with counts and first line numbers."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rnnsearch.data.io import FilterReport, ReadNotes, filter_pairs, read_parallel
from rnnsearch.data.tokenize import pretokenize


@dataclass
class CheckResult:
    src: str
    tgt: str
    report: FilterReport
    notes: ReadNotes
    max_len: int

    @property
    def usable(self) -> bool:
        return self.report.kept > 0

    @property
    def problem(self) -> str:
        if self.report.read == 0:
            return f"{self.src}: no lines: the corpus is empty"
        return (f"{self.src}: none of the {self.report.read} pairs is usable "
                f"({', '.join(self.report.dropped)}; max length {self.max_len})")

    def text(self) -> str:
        r = self.report
        lines = [f"source {self.src}", f"target {self.tgt}",
                 f"pairs read: {r.read}", f"pairs kept: {r.kept} (max length {self.max_len} words as the tokenizer reads them; with a "
                 "SentencePiece vocabulary training counts pieces, which are more, and keeps fewer)"]
        lines.extend(r.drops(first=10))
        lines.extend(self.notes.lines())
        lines.append("usable" if self.usable else f"NOT usable: {self.problem}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"src": self.src, "tgt": self.tgt, "max_len": self.max_len, "usable": self.usable,
                **self.report.to_dict(), "repaired": self.notes.found}


def _lang(path: str | Path) -> str:
    """``train.en`` or ``train.en.gz`` -> ``en`` (the Moses tokenizer's language)."""
    name = Path(path).name.removesuffix(".gz")
    suffix = Path(name).suffix.lstrip(".")
    return suffix if 2 <= len(suffix) <= 3 else "en"


def check_corpus(src: str | Path, tgt: str | Path, max_len: int = 50, tokenizer: str = "moses") -> CheckResult:
    """Raises DataError (file, line, reason) when the files cannot be read as a parallel corpus."""
    notes = ReadNotes()
    src_lines, tgt_lines = read_parallel(src, tgt, notes)
    src_tokens = [pretokenize(t, tokenizer, _lang(src)) for t in src_lines]
    tgt_tokens = [pretokenize(t, tokenizer, _lang(tgt)) for t in tgt_lines]
    _, report = filter_pairs("corpus", src_tokens, tgt_tokens, max_len)
    return CheckResult(str(src), str(tgt), report, notes, max_len)
