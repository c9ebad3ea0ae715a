"""Reading a parallel corpus as a stream of line-aligned chunks (plain or gzip), for corpora too
large to hold: the same lines, repairs and errors as ``io.read_parallel``, with each file's size
and SHA-256 computed on the way."""
from __future__ import annotations

import gzip
import hashlib
import io
from pathlib import Path
from typing import Iterator

from rnnsearch.data.io import BOM, DataError
from rnnsearch.errors import existing_file


class _Hashing(io.RawIOBase):
    """A binary file that hashes and counts the bytes read through it."""

    def __init__(self, fh):
        self.fh, self.sha256, self.size = fh, hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.fh.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
            self.size += n
        return n


class RawLines:
    """The lines of a UTF-8 text file as bytes without their '\\n' (plain or gzip: the magic bytes
    decide), the file's byte-order mark removed; ``size`` and ``sha256`` are those of the file's
    bytes on disk once it has been read to the end."""

    def __init__(self, path: str | Path):
        self.path = existing_file(path, DataError, "file", "a text file")
        self.count, self.bom = 0, False
        self._raw = open(self.path, "rb")
        self._hashing = _Hashing(self._raw)
        buffered = io.BufferedReader(self._hashing, buffer_size=1 << 20)
        self._lines = gzip.GzipFile(fileobj=buffered) if buffered.peek(2)[:2] == b"\x1f\x8b" else buffered

    def __iter__(self) -> Iterator[bytes]:
        try:
            for raw in self._lines:
                ended = raw.endswith(b"\n")
                raw = raw[:-1] if ended else raw
                if self.count == 0 and raw.startswith(BOM):
                    raw, self.bom = raw[len(BOM):], True
                    if not raw and not ended:  # the file holds only a byte-order mark: no line
                        return
                self.count += 1
                yield raw
        except (OSError, EOFError) as exc:
            raise DataError(f"{self.path}: cannot read: {exc}") from None

    @property
    def size(self) -> int:
        return self._hashing.size

    @property
    def sha256(self) -> str:
        return self._hashing.sha256.hexdigest()

    def close(self) -> None:
        self._raw.close()


class PairReader:
    """A parallel corpus read once as chunks of line-aligned pairs; after :meth:`chunks` has run to
    the end, ``src`` and ``tgt`` hold each file's line count, size, SHA-256 and byte-order mark."""

    def __init__(self, src_path: str | Path, tgt_path: str | Path):
        self.src, self.tgt = RawLines(src_path), RawLines(tgt_path)

    def chunks(self, size: int, limit: int = 0) -> Iterator[tuple[int, list[bytes], list[bytes]]]:
        """(first line number, source lines, target lines), ``size`` pairs at a time, up to
        ``limit`` pairs (0 = all). Both files are read to the end even past ``limit`` (so that
        their counts and hashes are whole); different line counts are a DataError."""
        src_iter, tgt_iter = iter(self.src), iter(self.tgt)
        try:
            first, src_part, tgt_part = 1, [], []
            for s in src_iter:
                t = next(tgt_iter, None)
                if t is None:
                    self._mismatch(src_iter, tgt_iter)
                if limit and self.src.count > limit:
                    continue
                src_part.append(s)
                tgt_part.append(t)
                if len(src_part) == size:
                    yield first, src_part, tgt_part
                    first, src_part, tgt_part = first + size, [], []
            if next(tgt_iter, None) is not None:
                self._mismatch(src_iter, tgt_iter)
            if src_part:
                yield first, src_part, tgt_part
        finally:
            self.src.close()
            self.tgt.close()

    def _mismatch(self, src_iter, tgt_iter) -> None:
        for _ in src_iter:
            pass
        for _ in tgt_iter:
            pass
        raise DataError(f"{self.src.path} has {self.src.count} lines but {self.tgt.path} has {self.tgt.count}: "
                        "a parallel corpus needs one target line per source line")
