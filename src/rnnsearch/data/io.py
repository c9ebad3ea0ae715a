"""Reading parallel corpora (plain or gzip) with errors that name the file and line,
and filtering with a count of what was dropped and why."""
from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.errors import UserError, existing_file


BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark


class DataError(UserError, ValueError):
    """A corpus problem, naming the file (and line)."""


@dataclass
class ReadNotes:
    """Repairs made while reading (a BOM removed, CRLF line ends, NUL bytes), per file, with
    first line numbers, so that a user sees what was changed."""
    found: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def add(self, path: Path, kind: str, line: int) -> None:
        self.found.setdefault(str(path), {}).setdefault(kind, []).append(line)

    def lines(self) -> list[str]:
        out = []
        for path, kinds in self.found.items():
            parts = [f"{len(lines)} {kind} (first lines: {', '.join(map(str, lines[:5]))})"
                     for kind, lines in kinds.items()]
            out.append(f"{path}: repaired " + "; ".join(parts))
        return out


def read_lines(path: str | Path, notes: ReadNotes | None = None) -> list[str]:
    """All lines of a UTF-8 text file, plain or gzip. Lines are split on '\\n' only (so
    Unicode line separators inside a sentence never shift the pairing); a trailing '\\r'
    and a leading BOM are removed, NUL bytes become spaces (each repair noted in ``notes``)."""
    path = existing_file(path, DataError, "file", "a text file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    return split_lines(data, path, notes)


def split_lines(data: bytes, path: str | Path, notes: ReadNotes | None = None) -> list[str]:
    """Bytes of a text file -> its lines, repaired as ``read_lines`` describes; ``path`` names
    the source in errors."""
    notes = notes if notes is not None else ReadNotes()
    if data.startswith(BOM):
        data = data[len(BOM):]
        notes.add(path, "byte-order mark removed", 1)
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    return [decode_line(raw, number, path, notes) for number, raw in enumerate(raw_lines, start=1)]


def decode_line(raw: bytes, number: int, path: str | Path, notes: ReadNotes) -> str:
    """One line's bytes (without its '\\n', a file's byte-order mark removed) -> text, repaired as
    ``read_lines`` describes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:{number}: invalid UTF-8 at byte {exc.start} of the line: save the file as UTF-8 "
                        f"(from Windows-1252: iconv -f cp1252 -t utf-8)") from None
    if text.endswith("\r"):
        text = text[:-1]
        notes.add(path, "CRLF line ends", number)
    if "\x00" in text:
        text = text.replace("\x00", " ")
        notes.add(path, "lines with NUL bytes (made spaces)", number)
    return text


def corpus_file(directory: str | Path, split: str, lang: str) -> Path:
    """``DIR/split.lang``, or ``DIR/split.lang.gz`` when only that exists."""
    plain = Path(directory) / f"{split}.{lang}"
    gz = plain.with_name(plain.name + ".gz")
    if not plain.exists() and gz.exists():
        return gz
    return plain


def read_parallel(src_path: str | Path, tgt_path: str | Path,
                  notes: ReadNotes | None = None) -> tuple[list[str], list[str]]:
    src, tgt = read_lines(src_path, notes), read_lines(tgt_path, notes)
    if len(src) != len(tgt):
        raise DataError(f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)}: "
                        "a parallel corpus needs one target line per source line")
    return src, tgt


def read_pair_file(path: str | Path) -> tuple[list[str], list[str]]:
    """A file of ``source ||| target`` lines (the WPT 2003 test.en-fr) -> sources, targets."""
    srcs, tgts = [], []
    for number, line in enumerate(read_lines(path), start=1):
        if line.count(" ||| ") != 1:
            raise DataError(f"{path}:{number}: expected 'source ||| target'")
        src, tgt = line.split(" ||| ")
        srcs.append(src)
        tgts.append(tgt)
    return srcs, tgts


@dataclass
class FilterReport:
    """What filtering kept and dropped; line numbers are 1-based."""
    name: str
    read: int = 0
    kept: int = 0
    dropped: dict[str, list[int]] = field(default_factory=dict)

    def drop(self, reason: str, line: int) -> None:
        self.dropped.setdefault(reason, []).append(line)

    def add(self, other: "FilterReport") -> None:
        """Count ``other`` (the report of the lines after this one's) into this one."""
        self.read, self.kept = self.read + other.read, self.kept + other.kept
        for reason, lines in other.dropped.items():
            self.dropped.setdefault(reason, []).extend(lines)

    def drops(self, first: int = 5) -> list[str]:
        """One phrase per kind of dropped pair: ``dropped N reason (first lines: ...)``."""
        return [f"dropped {len(lines)} {reason} (first lines: {', '.join(map(str, lines[:first]))})"
                for reason, lines in self.dropped.items()]

    def summary(self) -> str:
        """The one-line account the trainer logs."""
        return "; ".join([f"{self.name}: read {self.read} pairs, kept {self.kept}"] + self.drops())

    def to_dict(self) -> dict:
        return {"read": self.read, "kept": self.kept,
                "dropped": {k: {"count": len(v), "first_lines": v[:10]} for k, v in self.dropped.items()}}


def filter_pairs(name: str, src_units: list[list[str]], tgt_units: list[list[str]],
                 max_len: int | None, first_line: int = 1) -> tuple[list[int], FilterReport]:
    """Indices of the pairs to keep: both sides non-empty and, if ``max_len``, at most
    ``max_len`` units each. Every dropped pair is counted with its reason and line number (the
    first pair is on line ``first_line``)."""
    report = FilterReport(name, read=len(src_units))
    keep = []
    for i, (s, t) in enumerate(zip(src_units, tgt_units)):
        if not s or not t:
            report.drop("pairs with an empty or whitespace-only side", first_line + i)
        elif max_len and (len(s) > max_len or len(t) > max_len):
            report.drop(f"pairs longer than {max_len} tokens", first_line + i)
        else:
            keep.append(i)
    report.kept = len(keep)
    return keep, report
