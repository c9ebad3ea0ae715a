"""Whatever the bytes, line i of the source stays paired with line i of the target, or the
reader stops with an error naming the file and line."""
from __future__ import annotations

import gzip
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rnnsearch.data.io import DataError, ReadNotes, decode_line, read_lines, read_parallel
from rnnsearch.data.stream import RawLines
from rnnsearch.data.check import check_corpus

# Characters that other readers treat as line breaks (str.splitlines, universal newlines).
TRICKY = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00\t "
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\nX") | st.sampled_from(TRICKY),
               max_size=30)  # no X: the text around a pair's marker (S3X) never writes another marker


@st.composite
def corpus(draw):
    n = draw(st.integers(1, 12))
    pairs = []
    for i in range(n):
        blank = draw(st.booleans()) and draw(st.booleans())  # about one in four
        src = "  \t" if blank else f"{draw(TEXT)} S{i}X {draw(TEXT)}"
        tgt = draw(st.sampled_from([" ", ""])) if blank else f"{draw(TEXT)} T{i}X {draw(TEXT)}"
        pairs.append((src, tgt, blank))
    return pairs, draw(st.booleans()), draw(st.booleans()), draw(st.booleans())


def _encode(lines: list[str], bom: bool, crlf: bool, final_newline: bool) -> bytes:
    end = "\r\n" if crlf else "\n"
    text = end.join(lines) + (end if final_newline else "")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=corpus())
def test_pairs_stay_aligned_whatever_the_bytes(tmp_path, data):
    pairs, bom, crlf, final_newline = data
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    src.write_bytes(_encode([p[0] for p in pairs], bom, crlf, final_newline))
    tgt.write_bytes(_encode([p[1] for p in pairs], False, not crlf, True))
    src_lines, tgt_lines = read_parallel(src, tgt)
    assert len(src_lines) == len(tgt_lines) == len(pairs)
    for i, (s, t) in enumerate(zip(src_lines, tgt_lines)):
        if not pairs[i][2]:
            assert re.findall(r"S(\d+)X", s) == [str(i)] and re.findall(r"T(\d+)X", t) == [str(i)]
    result = check_corpus(src, tgt, max_len=1000, tokenizer="space")
    blanks = [i + 1 for i, p in enumerate(pairs) if p[2]]
    dropped = result.report.dropped.get("pairs with an empty or whitespace-only side", [])
    assert dropped == blanks and result.report.kept == len(pairs) - len(blanks)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=corpus(), bad_line=st.integers(0, 11), junk=st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"]))
def test_invalid_utf8_names_the_file_and_line(tmp_path, data, bad_line, junk):
    pairs = data[0]
    bad_line %= len(pairs)
    lines = [p[0].encode("utf-8") for p in pairs]
    lines[bad_line] += junk
    src, tgt = tmp_path / "d.en", tmp_path / "d.fr"
    src.write_bytes(b"\n".join(lines) + b"\n")
    tgt.write_bytes(_encode([p[1] for p in pairs], False, False, True))
    try:
        read_parallel(src, tgt)
    except DataError as exc:
        assert str(exc).startswith(f"{src}:{bad_line + 1}: invalid UTF-8")
    else:
        raise AssertionError("invalid UTF-8 was read without an error")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=corpus(), gz=st.booleans(), only_bom=st.booleans())
def test_the_streaming_reader_reads_what_the_whole_file_reader_reads(tmp_path, data, gz, only_bom):
    """rnnsearch prepare's reader (data/stream.py) gives the same lines and repairs as read_lines."""
    pairs, bom, crlf, final_newline = data
    raw = b"\xef\xbb\xbf" if only_bom else _encode([p[0] for p in pairs], bom, crlf, final_newline)
    path = tmp_path / ("e.en.gz" if gz else "e.en")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    whole_notes, stream_notes = ReadNotes(), ReadNotes()
    whole = read_lines(path, whole_notes)
    reader = RawLines(path)
    streamed = [decode_line(line, number, path, stream_notes) for number, line in enumerate(reader, start=1)]
    reader.close()
    if reader.bom:
        stream_notes.found.setdefault(str(path), {})["byte-order mark removed"] = [1]
    assert streamed == whole and reader.count == len(whole)
    assert {k: sorted(v) for k, v in stream_notes.found.get(str(path), {}).items()} == \
        {k: sorted(v) for k, v in whole_notes.found.get(str(path), {}).items()}
    assert reader.size == path.stat().st_size
