"""Subtitles for ``rnnsearch translate-file`` (``text/files.py``): .srt through pysrt, .vtt through webvtt-py.

Each cue's text is translated with its lines joined (its ``<i>``, ``<b>`` tags kept as HTML; a VTT cue's
voice ``<v Name>`` and an SRT cue's override codes ``{\\an8}`` kept in front), and written back on as many
lines as it had, never cut before a punctuation mark that closes what comes before it (French ``d'accord ?``);
times and numbers untouched. A cue of dialogue (a line begun by a dash: ``- Is it agreed?`` ``- Agreed.``)
is one piece per turn, each written back on its own lines after its dash. A subtitle file pysrt or
webvtt-py cannot read whole (a block of a .vtt without its timing) is refused, not read in part.
"""
from __future__ import annotations

import html
import io
import re
from pathlib import Path

from rnnsearch.errors import UsageError
from rnnsearch.text.file_formats import Document, Piece

TURN = re.compile(r"(?:[-\u2010\u2012-\u2014]\s*)(?=\S)")  # a dialogue turn's dash at a line's start (- Agreed.)
VOICE_LINE = re.compile(r"(<v(?:\.[\w-]+)*\s[^>]*>)((?:(?!</?v[\s.>]).)*)(</v>)?")  # one voice's line, closed or not
CLOSING = re.compile(r"[?!:;»”)\]}.,…]+")  # a mark that goes with the word before it, never first on a line


def turns(text: str) -> list[tuple[str, str, int, str]]:
    """A cue's text as its dialogue turns: (dash as written, the turn's text on one line, its lines, what closes it);
    a cue of no dialogue (no line after the first begun by a dash) is one turn without a dash. A cue whose every line
    is a voice's (``<v Anna>Where were you?</v>`` then ``<v Ben>At the office.</v>``) is a turn a voice, its ``<v>``
    in front and its ``</v>`` after (the lines were wrapped across the two voices)."""
    lines = text.splitlines() or [""]
    voices = [VOICE_LINE.fullmatch(x) for x in lines]
    if len(lines) > 1 and all(voices):
        return [(m.group(1), m.group(2), 1, m.group(3) or "") for m in voices]
    if not any(TURN.match(x) for x in lines[1:]):
        return [("", " ".join(lines), len(lines), "")]
    out: list[list] = []
    for line in lines:
        dash = TURN.match(line)
        if dash or not out:
            out.append([dash.group(0) if dash else "", line[dash.end():] if dash else line, 1])
        else:
            out[-1][1] += " " + line
            out[-1][2] += 1
    return [(*t, "") for t in out]


def written(cue_turns: list[tuple[str, str, int, str]], outputs: list) -> str | None:
    """The cue written back from its turns' outputs (None: a turn was not translated; the cue keeps its source)."""
    if any(o is None for o in outputs):
        return None
    return "\n".join(dash + _rewrapped(o, lines) + close for (dash, _, lines, close), o in zip(cue_turns, outputs))


def _cue_texts(cues: list, outputs: list, fronts: list[str]) -> list[str | None]:
    """Each cue's text from its turns' outputs (in the order of the pieces), what stood in front of it (override
    codes, a voice) kept; None where a turn was not translated."""
    texts, k = [], 0
    for cue, front in zip(cues, fronts):
        text, k = written(cue, outputs[k:k + len(cue)]), k + len(cue)
        texts.append(None if text is None else front + text)
    return texts


def _rewrapped(text: str, lines: int) -> str:
    """``text`` on ``lines`` lines (a cue's own count), cut at the spaces nearest to even lengths."""
    words = _joined(re.split(r" (?![^<>]*>)", text))  # at the spaces outside tags
    if lines <= 1 or len(words) < 2:
        return text
    out, start = [], 0
    for k in range(1, lines):
        goal, cut = len(text) * k / lines, start + 1
        while cut < len(words) - 1 and len(" ".join(words[:cut])) < goal:
            cut += 1
        out.append(" ".join(words[start:cut]))
        start = cut
        if start >= len(words):
            break
    return "\n".join(out + ([" ".join(words[start:])] if start < len(words) else []))


def _joined(words: list[str]) -> list[str]:
    """Words with each closing mark written apart (French ``accord ?``) joined to the word before it, so that
    no line begins with it."""
    out: list[str] = []
    for w in words:
        if out and CLOSING.fullmatch(re.sub(r"<[^>]*>", "", w)):
            out[-1] += " " + w
        else:
            out.append(w)
    return out


SRT_TAG = re.compile(r"</?(?:i|b|u)>|<font(?:\s[^<>]*)?>|</font>", re.IGNORECASE)  # the tags SubRip players read


def srt_as_html(text: str) -> str:
    """A SubRip cue's text as the markup path reads HTML: its tags (``<i>``, ``<b>``, ``<u>``, ``<font>``) as they are,
    every other ``&``, ``<`` and ``>`` its text (``Procter & Gamble`` came out ``Procter &amp; Gamble``)."""
    out, at = [], 0
    for m in SRT_TAG.finditer(text):
        out += [html.escape(text[at:m.start()], quote=False), m.group()]
        at = m.end()
    return "".join(out + [html.escape(text[at:], quote=False)])


def srt_from_html(text: str) -> str:
    """``srt_as_html`` undone on a translated cue: its text's characters as they are (SubRip has no entities)."""
    return html.unescape(text)


OVERRIDE = re.compile(r"(?:\{\\[^}]*\}\s*)*")  # an SRT cue's leading override codes (ASS's {\an8}, {\i1})


def read_srt(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
    import pysrt
    subs = pysrt.open(str(path), encoding="utf-8", error_handling=pysrt.SubRipFile.ERROR_RAISE)
    if not subs and path.read_text(encoding="utf-8").strip():
        raise UsageError(f"{path}: no subtitle found in it (is it a .srt file?)")
    codes = [OVERRIDE.match(s.text).group(0) for s in subs]  # {\an8}: kept in front, untranslated
    cues = [turns(srt_as_html(s.text[len(c):])) for s, c in zip(subs, codes)]
    pieces = [Piece(t, "html", f"subtitle {s.index}") for s, cue in zip(subs, cues) for _, t, _, _ in cue]

    def write(outputs: list) -> bytes:
        for s, text in zip(subs, _cue_texts(cues, outputs, codes)):
            s.text = s.text if text is None else srt_from_html(text)
        buffer = io.StringIO()
        subs.write_into(buffer)
        return buffer.getvalue().encode("utf-8")
    return Document(pieces, write)


TIMESTAMP = re.compile(r"<((?:\d{2,}:)?\d{2}:\d{2}\.\d{3})>")  # a karaoke timestamp inside a cue (<00:00:05.500>)
CLASSED = re.compile(r"<([a-z]+)((?:\.[\w-]+)+)(?=[\s>/])")  # a cue span's start tag with classes (<c.loud>)
TIME_TAG = re.compile(r'<vtt-time t="([^"]*)"/>')
CLASS_ATTR = re.compile(r'<([a-z]+) data-vtt-class="([^"]*)"')


def vtt_as_html(text: str) -> str:
    """A WebVTT cue's text with its tags as the markup path reads HTML: a timestamp as a self-closing tag that
    goes where its word goes, a span's classes (``<c.loud>``, closed by ``</c>``) as an attribute, a ruby's
    annotation (``<rt>``) kept as written (its base was moved into it)."""
    text = TIMESTAMP.sub(lambda m: f'<vtt-time t="{m.group(1)}"/>', text).replace("<rt>", '<rt translate="no">')
    return CLASSED.sub(lambda m: f'<{m.group(1)} data-vtt-class="{m.group(2)[1:]}"', text)


def vtt_from_html(text: str) -> str:
    """``vtt_as_html`` undone on a translated cue."""
    text = TIME_TAG.sub(lambda m: f"<{m.group(1)}>", text).replace('<rt translate="no">', "<rt>")
    return CLASS_ATTR.sub(lambda m: f"<{m.group(1)}.{m.group(2)}", text)


VOICE = re.compile(r"(<v(?:\.[\w-]+)*(?:\s[^>]*)?>)(?!.*</v>)(.*)", re.DOTALL)  # a cue's voice, never closed


def _vtt_blocks(path: Path) -> list[tuple[int, int]]:
    """Each cue's text lines [first, end) in the file's lines (split at ``\n``); a UsageError naming the first block
    of a WebVTT file that is neither a cue (its timing line's ``-->``), a note, a style nor a region: webvtt-py
    would leave it out."""
    lines, start, cues = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n").split("\n"), 0, []
    for n, line in enumerate(lines + [""]):
        if line.strip():
            continue
        block, first = lines[start:n], start + 1
        start = n + 1
        if not block or first == 1 or block[0].split(" ")[0] in ("NOTE", "STYLE", "REGION", "NOTE\t"):
            continue
        timing = next((k for k, x in enumerate(block[:2]) if "-->" in x), None)
        if timing is None:
            raise UsageError(f"{path}: line {first}: no cue timing ('00:00:01.000 --> 00:00:02.000') in this block; "
                             "fix it or remove it")
        cues.append((first + timing, n))  # (0-based: the line after the timing line) .. the blank line
    return cues


def read_vtt(path: Path, lang: str, retranslate: bool, source: str = "") -> Document:
    import webvtt
    places = _vtt_blocks(path)
    captions = webvtt.read(str(path))
    found = [VOICE.fullmatch(c.raw_text.strip()) for c in captions]
    voices = [m.group(1) if m else "" for m in found]
    cues = [turns(vtt_as_html((m.group(2) if m else c.raw_text).strip())) for m, c in zip(found, captions)]
    pieces = [Piece(t, "html", f"cue {n} ({c.start})") for n, (cue, c) in enumerate(zip(cues, captions), 1)
              for _, t, _, _ in cue]

    def write(outputs: list) -> bytes:
        texts = [None if t is None else vtt_from_html(t) for t in _cue_texts(cues, outputs, voices)]
        if len(places) != len(captions):  # a file read otherwise than its blocks say: webvtt-py writes it
            for c, text in zip(captions, texts):
                c.text = c.text if text is None else text
            return captions.content.encode("utf-8")
        return _in_place(path.read_bytes().decode("utf-8"), places, texts).encode("utf-8")
    return Document(pieces, write)


def _in_place(raw: str, places: list[tuple[int, int]], texts: list[str | None]) -> str:
    """The file as written (its byte-order mark, line endings, notes, styles, regions and timings) with each cue's
    text lines replaced by its translation (webvtt-py's writer wrote CRLF as LF, dropped the byte-order mark and a
    note's text, and reordered the header's blocks)."""
    lines = raw.split("\n")
    for (first, end), text in sorted(zip(places, texts), reverse=True):
        if text is None:
            continue
        ending = "\r" if lines[first - 1].endswith("\r") else ""
        lines[first:end] = [line + ending for line in text.split("\n")]
    return "\n".join(lines)
